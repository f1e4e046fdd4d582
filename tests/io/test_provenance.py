"""Provenance records: OUT's record and its verification, and a checkpoint held to the data
and the settings it was trained with. The chain through the shell scripts is held to it by
tests/test_provenance_chain.py."""
import argparse
import json
import os

import pytest
import torch

from xlpe_fairseq.io.digests import CHECKPOINT_KEY, data_fingerprint
from xlpe_fairseq.io.errors import InputError
from xlpe_fairseq.io.provenance import (
    main,
    read_record,
    record_corpus,
    verify_checkpoint,
    verify_checkpoint_on_corpus,
    verify_corpus,
    verify_trained_as,
)


def fake_corpus(root):
    """The files of a prepared OUT that the record covers, with small made-up contents."""
    raw, out = root / "raw", root / "out"
    raw.mkdir()
    for split in ("train", "valid", "test"):
        for lang in ("en", "fr"):
            (raw / f"{split}.{lang}").write_text(f"{split} {lang}\n")
    for name, text in (("bpe/codes", "a b 2\n"), ("recipe.env", "SRC=en\nTGT=fr\n"),
                       ("reference/valid.fr", "valid fr\n"), ("reference/test.fr", "test fr\n"),
                       ("data-bin/text/dict.en.txt", "a 1\n"), ("data-bin/text/dict.fr.txt", "b 1\n"),
                       ("data-bin/text/train.en-fr.en.bin", "1"),
                       ("data-bin/text/test.en-fr.en.bin", "2"),
                       ("data-bin/xlpe/train.reorder.en-fr.bin", "3")):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    record_corpus(str(out), str(raw), "en", "fr", {"MERGES": "5000"}, ["prepare-corpus.sh"])
    return raw, out


def test_the_corpus_record_holds_inputs_settings_files_and_every_data_bin(tmp_path):
    raw, out = fake_corpus(tmp_path)
    record = read_record(str(out / "provenance.json"), "corpus")
    assert record["settings"] == {"MERGES": "5000"}
    assert record["inputs"]["test.fr"]["path"] == str(raw / "test.fr")
    assert set(record["files"]) == {"bpe/codes", "recipe.env", "reference/valid.fr",
                                    "reference/test.fr"}
    assert sorted(record["data_bins"]) == ["text", "xlpe"]
    assert verify_corpus(str(out), "text", "test") == []
    assert not [name for name in os.listdir(out) if name.startswith(".")], "no temporary left"


@pytest.mark.parametrize("change, expected", [
    (lambda out: (out / "data-bin/text/dict.fr.txt").write_text("c 1\n"),
     "data-bin/text/dict.fr.txt: changed since"),
    (lambda out: (out / "data-bin/text/train.en-fr.en.bin").unlink(),
     "data-bin/text/train.en-fr.en.bin: missing since"),
    (lambda out: (out / "data-bin/text/valid.en-fr.en.bin").write_text("4"),
     "data-bin/text/valid.en-fr.en.bin: new since"),
    (lambda out: (out / "bpe/codes").write_text("a c 2\n"), "bpe/codes: changed since"),
    (lambda out: (out / "reference/test.fr").write_text("other\n"),
     "reference/test.fr: changed since"),
])
def test_a_file_of_out_changed_after_its_preparation_is_named(tmp_path, change, expected):
    _, out = fake_corpus(tmp_path)
    change(out)
    with pytest.raises(InputError) as error:
        verify_corpus(str(out), "text", "test")
    assert expected in str(error.value) and "rerun the data_prep recipe" in str(error.value)


def test_a_raw_reference_changed_since_is_not_scored_but_named(tmp_path):
    raw, out = fake_corpus(tmp_path)
    (raw / "test.fr").write_text("another reference\n")
    warnings = verify_corpus(str(out), "text", "test")
    assert len(warnings) == 1 and "scoring against the reference as prepared" in warnings[0]
    assert verify_corpus(str(out), "text", "valid") == [], "only the split scored is looked at"


def test_an_out_without_record_is_refused_with_what_to_do(tmp_path):
    with pytest.raises(InputError, match="no such record; .* rerun the data_prep recipe"):
        verify_corpus(str(tmp_path))


def test_a_record_is_json_a_person_can_read(tmp_path, capsys):
    _, out = fake_corpus(tmp_path)
    assert main(["show", str(out / "provenance.json")]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "corpus"


def checkpoint_with(path, fingerprint):
    torch.save({"model": {}, "cfg": {}, "task_state": (
        {CHECKPOINT_KEY: fingerprint} if fingerprint else {})}, path)
    return str(path)


def test_a_checkpoint_of_other_dictionaries_or_another_training_split_is_refused(tmp_path):
    _, out = fake_corpus(tmp_path)
    data_bin = str(out / "data-bin" / "text")
    fingerprint = data_fingerprint([data_bin])
    assert verify_checkpoint(checkpoint_with(tmp_path / "same.pt", fingerprint), data_bin)
    other_train = {**fingerprint, "train": "0" * 64}
    with pytest.raises(InputError, match="its training split differs"):
        verify_checkpoint(checkpoint_with(tmp_path / "train.pt", other_train), data_bin)
    other_dict = {**fingerprint, "dictionaries": {**fingerprint["dictionaries"],
                                                  "dict.fr.txt": "0" * 64}}
    with pytest.raises(InputError, match="its dict.fr.txt differs"):
        verify_checkpoint(checkpoint_with(tmp_path / "dict.pt", other_dict), data_bin)
    assert not verify_checkpoint(checkpoint_with(tmp_path / "old.pt", None), data_bin), \
        "a checkpoint of an earlier version has nothing to verify"


def test_a_checkpoint_is_held_to_the_variant_of_out_it_was_trained_on(tmp_path):
    """From OUT's record, which evaluate.sh and xlpe-translate have checked against the
    files: an XL PE checkpoint against data-bin/xlpe, whatever variant the caller decodes."""
    _, out = fake_corpus(tmp_path)
    xlpe = out / "data-bin" / "xlpe"
    fingerprint = data_fingerprint([str(xlpe)])
    assert verify_checkpoint_on_corpus(checkpoint_with(tmp_path / "x.pt", fingerprint), str(out))
    other = {**fingerprint, "train": "0" * 64}
    with pytest.raises(InputError, match=f"it was trained on {xlpe} as it was then, not on "
                       f"{xlpe}: its training split differs"):
        verify_checkpoint_on_corpus(checkpoint_with(tmp_path / "y.pt", other), str(out))


@pytest.mark.parametrize("state", [
    # fairseq 0.12: cfg sections, the model's a Namespace; older fairseq: one args Namespace
    {"model": {}, "cfg": {"model": argparse.Namespace(arch="transformer_dpe"),
                          "checkpoint": {"keep_interval_updates": 5},
                          "optimizer": {"weight_decay": 0.0001}}},
    {"model": {}, "args": argparse.Namespace(arch="transformer_dpe", keep_interval_updates=5,
                                             weight_decay=0.0001)},
])
def test_a_checkpoint_is_held_to_the_settings_its_training_used(tmp_path, state):
    path = tmp_path / "checkpoint_best.pt"
    torch.save(state, path)
    verify_trained_as(str(path), {"arch": ["transformer_dpe", "transformer_dpe_wmt_en_de"],
                                  "keep_interval_updates": ["5"], "weight_decay": ["1e-4"]},
                      "dpe")
    with pytest.raises(InputError) as refused:
        verify_trained_as(str(path), {"arch": ["transformer_xlpe"]}, "xlpe-inxl (its record)")
    assert str(refused.value) == (
        f"{path}: saved with --arch transformer_dpe, but xlpe-inxl (its record) trains with "
        "--arch transformer_xlpe: not a checkpoint of that training")
    with pytest.raises(InputError, match="saved with --keep-interval-updates 5, but"):
        verify_trained_as(str(path), {"keep_interval_updates": ["20"]}, "xlpe")
