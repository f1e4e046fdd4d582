"""Held-out splits of a one-file corpus, and what data_prep/prepare-corpus.sh refuses before
doing any work."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from xlpe_fairseq.io import InputError
from xlpe_fairseq.preprocessing.split_corpus import held_out_size, split_corpus, split_indices

PREPARE = Path(__file__).resolve().parents[2] / "data_prep" / "prepare-corpus.sh"


@pytest.mark.parametrize("pairs, size", [(10, 1), (300, 15), (20000, 1000), (10 ** 6, 1000)])
def test_held_out_is_five_percent_at_most_a_thousand(pairs, size):
    assert held_out_size(pairs) == size


def test_splits_are_disjoint_complete_and_the_same_every_time():
    chosen = split_indices(100, ["valid", "test"], seed=1)
    assert chosen == split_indices(100, ["valid", "test"], seed=1)
    assert chosen != split_indices(100, ["valid", "test"], seed=2)
    assert sorted(i for indices in chosen.values() for i in indices) == list(range(100))
    assert [len(chosen[s]) for s in ("train", "valid", "test")] == [90, 5, 5]
    assert all(indices == sorted(indices) for indices in chosen.values()), "corpus order kept"


def test_pairs_the_aligner_refuses_stay_in_train_and_the_others_split_as_before():
    drawn = split_indices(100, ["valid", "test"], seed=1)
    assert split_indices(100, ["valid", "test"], seed=1, usable=[True] * 100) == drawn
    refused = drawn["valid"][0]
    usable = [i != refused for i in range(100)]
    chosen = split_indices(100, ["valid", "test"], seed=1, usable=usable)
    assert refused in chosen["train"] and [len(chosen[s]) for s in ("valid", "test")] == [5, 5]
    assert set(chosen["valid"]) > set(drawn["valid"]) - {refused}
    assert sorted(i for indices in chosen.values() for i in indices) == list(range(100))
    with pytest.raises(InputError, match="only 9 of the 100 pairs can be held out"):
        split_indices(100, ["valid", "test"], seed=1, usable=[i < 9 for i in range(100)])


def test_an_empty_pair_is_never_held_out(tmp_path):
    (tmp_path / "all.fr").write_text("".join(f"fr {i}\n" if i % 2 else "\n" for i in range(40)))
    (tmp_path / "all.en").write_text("".join(f"en {i}\n" for i in range(40)))
    split_corpus(str(tmp_path / "all.fr"), str(tmp_path / "all.en"), str(tmp_path),
                 ["valid", "test"])
    for split in ("valid", "test"):
        assert all((tmp_path / f"{split}.fr").read_text().split("\n")[:-1])


def test_pairs_stay_together(tmp_path):
    (tmp_path / "all.fr").write_text("".join(f"fr {i}\n" for i in range(40)))
    (tmp_path / "all.en").write_text("".join(f"en {i}\n" for i in range(40)))
    counts = split_corpus(str(tmp_path / "all.fr"), str(tmp_path / "all.en"), str(tmp_path),
                          ["test"])
    assert counts == {"test": 2, "train": 38}
    for split in ("train", "test"):
        french = (tmp_path / f"{split}.fr").read_text().split("\n")
        english = (tmp_path / f"{split}.en").read_text().split("\n")
        assert [line[3:] for line in french] == [line[3:] for line in english]


def test_too_few_pairs_and_uneven_sides_are_refused(tmp_path):
    with pytest.raises(InputError, match="too few"):
        split_indices(2, ["valid", "test"], seed=1)
    (tmp_path / "a.fr").write_text("un\ndeux\n")
    (tmp_path / "a.en").write_text("one\n")
    with pytest.raises(InputError, match="differ in length"):
        split_corpus(str(tmp_path / "a.fr"), str(tmp_path / "a.en"), str(tmp_path), ["test"])


def prepare(*args):
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    return subprocess.run(["bash", str(PREPARE), *map(str, args)], capture_output=True,
                          text=True, env={**os.environ, "PATH": path})


@pytest.mark.parametrize("files, args, status, message", [
    ({"train.fr": "a\nb\n", "train.en": "a\n"}, ["--src", "fr", "--tgt", "en"], 1,
     "train.fr has 2 lines, {raw}/train.en has 1"),
    ({"train.fr": "a\n"}, ["--src", "fr", "--tgt", "en"], 1, "train.en: no such file"),
    ({}, ["--src", "fr", "--tgt", "en"], 1, "no such files"),
    ({"train.fr": "a\n", "train.en": "a\n", "valid.fr": "a\n"}, ["--src", "fr", "--tgt", "en"],
     1, "valid.en: no such file"),
    ({}, ["--src", "fr"], 2, "--src and --tgt are required"),
    ({}, ["--src", "fr", "--tgt", "en", "--merges"], 2, "--merges needs a value"),
    ({}, ["--tgt", "en", "--src", "fr", "--bogus"], 2, "unknown option --bogus"),
    # an empty valid or test line names the user's file and line, not the aligner's input
    ({"train.fr": "a\n" * 30, "train.en": "a\n" * 30, "valid.fr": "a\n" * 9,
      "valid.en": "a\n" * 6 + "\n" + "a\n" * 2, "test.fr": "a\n", "test.en": "a\n"},
     ["--src", "fr", "--tgt", "en"], 1, "{raw}/valid.en line 7: empty line"),
    # also when test is held out of train and valid linked from the raw folder
    ({"train.fr": "a\n" * 30, "train.en": "a\n" * 30, "valid.fr": "a\n" * 9,
      "valid.en": "a\n" * 6 + " \n" + "a\n" * 2},
     ["--src", "fr", "--tgt", "en"], 1, "{raw}/valid.en line 7: empty line"),
])
def test_prepare_corpus_refuses_bad_input_in_one_line(tmp_path, files, args, status, message):
    raw = tmp_path / "raw"
    raw.mkdir()
    for name, text in files.items():
        (raw / name).write_text(text)
    # the operands first, the options after
    result = prepare(raw, tmp_path / "out", *args)
    assert result.returncode == status
    assert message.format(raw=raw) in result.stderr
    assert result.stderr.count("error") <= 1, result.stderr
    assert not (tmp_path / "out" / "data-bin").exists()
    assert not (tmp_path / "out" / "tok").exists()


def test_a_test_line_bpe_splits_past_the_aligner_names_the_raw_line(tmp_path):
    """Found only once BPE has run (the raw line fits), before the aligner reads it."""
    raw = tmp_path / "raw"
    raw.mkdir()
    files = {"train.fr": "ab cd\n" * 30, "train.en": "ab cd\n" * 30, "valid.fr": "ab\n",
             "valid.en": "ab\n", "test.fr": "ab\n" + "xyzw " * 400 + "\n", "test.en": "ab\nab\n"}
    for name, text in files.items():
        (raw / name).write_text(text)
    result = prepare(raw, tmp_path / "out", "--src", "fr", "--tgt", "en", "--merges", "2")
    assert result.returncode == 1, result.stderr
    # 400 words of 4 characters, 2 merges: 4 tokens each, and the line's last space one more
    assert (f"{raw}/test.fr line 2: 1601 tokens after tokenization and BPE, more than the 1023 "
            "that eflomal handles") in result.stderr, result.stderr[-2000:]
    assert "all.fr" not in result.stderr and not (tmp_path / "out" / "bpe" / "test.align").exists()
