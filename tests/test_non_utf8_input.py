"""Every console command of setup.py answers a text input that is not UTF-8 with
``PROG: error: FILE line N: not UTF-8 (byte 0xNN at column C)`` and exit status 1, and
leaves no output (nor temporary file) behind.

One case per command, run in-process through the entry point setup.py names; a command
added to setup.py without a case here (or a reason to have none) fails
test_every_console_command_has_a_case.
"""
import importlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from support.console_scripts import console_scripts
from support.text_files import LATIN1_LINE, generate_output, text_file
from xlpe_fairseq.preordering.preorderer import Preorderer
from xlpe_fairseq.preordering.vocabulary import Vocabulary
from xlpe_fairseq.preprocessing import bible_corpus

BINARY_INPUTS_ONLY = {
    "xlpe-average-checkpoints": "reads fairseq checkpoints only",
    "xlpe-user-dir": "reads no input",
    "xlpe-install-eflomal": "reads no input",
    # compiled catalogs declare their own charset; one that does not decode is refused as
    # not a readable catalog (tests/preprocessing/test_message_catalogs.py)
    "xlpe-catalog-corpus": "reads compiled .mo catalogs only",
    # reads its text with io.open_text, as the commands above, but only after loading a
    # trained model: tests/test_own_corpus.py runs it end to end
    "xlpe-translate": "needs a trained model before its text",
}


def not_utf8(path, line, byte=0xE9, column=4):
    return f"{path} line {line}: not UTF-8 (byte 0x{byte:02x} at column {column})"


# Each case: tmp_path -> (argv, expected message). Outputs go under tmp_path / "out".

def tokenize(tmp):
    # the report of issue 13: a UTF-16 file, read in chunks by two worker processes
    source = tmp / "in.en"
    source.write_bytes("hello\nworld\n".encode("utf-16"))
    return (["--lang", "en", "--input", str(source), "--output", str(tmp / "out" / "tok.en"),
             "--workers", "2", "--chunk-size", "1"], not_utf8(source, 1, 0xFF, 1))


def bpe_learn(tmp):
    good = text_file(tmp / "a.en", ["a b", "c d"])
    bad = text_file(tmp / "b.de", ["a b", "c d", "e f"], bad_line=3)
    return (["learn", "--input", good, bad, "--codes", str(tmp / "out" / "codes"),
             "--merges", "10", "--workers", "2"], not_utf8(bad, 3))


def bpe_apply(tmp):
    codes = text_file(tmp / "codes", ["a b 2"])
    bad = text_file(tmp / "tok.en", ["a b", "a b", "a b", "a b"], bad_line=4)
    return (["apply", "--codes", codes, "--input", bad, "--output", str(tmp / "out" / "bpe.en"),
             "--workers", "2", "--chunk-size", "1"], not_utf8(bad, 4))


def bpe_apply_codes(tmp):
    codes = text_file(tmp / "codes", ["a b 2", "x"], bad_line=2)
    source = text_file(tmp / "tok.en", ["a b"])
    return (["apply", "--codes", codes, "--input", source, "--output",
             str(tmp / "out" / "bpe.en"), "--workers", "1"], not_utf8(codes, 2))


def align(tmp):
    source = text_file(tmp / "s.he", ["a b", "c", "d"])
    target = text_file(tmp / "t.en", ["x y", "z", "w"], bad_line=2)
    return (["--source", source, "--target", target, "--output", str(tmp / "out" / "align"),
             "--forward-output", str(tmp / "out" / "fwd"), "--workers", "1",
             "--chunk-size", "1"], not_utf8(target, 2))


def reorder(tmp):
    # far beyond the first read buffer: chunks before the bad line are already written
    source = text_file(tmp / "s.he", ["a b"] * 5000)
    target = text_file(tmp / "t.en", ["x y"] * 5000)
    alignment = text_file(tmp / "a.align", ["0-0 1-1"] * 5000, bad_line=4999)
    return (["--source", source, "--target", target, "--alignment", alignment,
             "--output", str(tmp / "out" / "train.reorder"), "--workers", "2",
             "--chunk-size", "500"], not_utf8(alignment, 4999))


def binarize(tmp):
    reorder_path = text_file(tmp / "train.reorder", ["0 1", "1 0", "0"], bad_line=2)
    source = text_file(tmp / "train.he", ["a b", "c d", "e"])
    return (["--reorder", reorder_path, "--source", source, "--destdir",
             str(tmp / "out" / "data-bin"), "--split", "train", "--source-lang", "he",
             "--target-lang", "en"], not_utf8(reorder_path, 2))


def binarize_source(tmp):
    reorder_path = text_file(tmp / "train.reorder", ["0 1", "0"])
    source = text_file(tmp / "train.he", ["a b", "c"], bad_line=2)
    return (["--reorder", reorder_path, "--source", source, "--destdir",
             str(tmp / "out" / "data-bin"), "--split", "train", "--source-lang", "he",
             "--target-lang", "en"], not_utf8(source, 2))


def preorder_train(tmp):
    source = text_file(tmp / "train.he", ["a b", "c d"])
    reorder_path = text_file(tmp / "train.reorder", ["1 0", "0 1"], bad_line=2)
    return (["--source", source, "--reorder", reorder_path, "--save",
             str(tmp / "out" / "preorderer.pt")], not_utf8(reorder_path, 2))


def preorder(tmp):
    checkpoint = tmp / "preorderer.pt"
    Preorderer.create(Vocabulary.build([["a", "b"]])).save(str(checkpoint))
    source = text_file(tmp / "test.he", ["a b", "b a", "a"], bad_line=3)
    return (["--preorderer", str(checkpoint), "--source", source, "--output",
             str(tmp / "out" / "test.reorder")], not_utf8(source, 3))


def preorder_ensemble(tmp):
    checkpoints = []
    for k in (1, 2):
        checkpoints.append(str(tmp / f"preorderer{k}.pt"))
        Preorderer.create(Vocabulary.build([["a", "b"]])).save(checkpoints[-1])
    source = text_file(tmp / "valid.he", ["a b", "b a"], bad_line=2)
    reorder_path = text_file(tmp / "valid.reorder", ["0 1", "1 0"])
    return (["--preorderers", *checkpoints, "--valid-source", source, "--valid-reorder",
             reorder_path, "--save", str(tmp / "out" / "ensemble.pt")], not_utf8(source, 2))


def preorder_crossfit(tmp):
    source = text_file(tmp / "train.he", ["a b", "c d", "e f"], bad_line=2)
    reorder_path = text_file(tmp / "train.reorder", ["1 0", "0 1", "0 1"])
    return (["--source", source, "--reorder", reorder_path, "--output",
             str(tmp / "out" / "train.crossfit.reorder"), "--mixed-output",
             str(tmp / "out" / "train.mixed.reorder")], not_utf8(source, 2))


def reorder_score(tmp):
    hypothesis = text_file(tmp / "hyp.reorder", ["0 1", "1 0"], bad_line=2)
    reference = text_file(tmp / "ref.reorder", ["0 1", "1 0"])
    return (["--hypothesis", hypothesis, "--reference", reference], not_utf8(hypothesis, 2))


def reorder_ceiling(tmp):
    source = text_file(tmp / "train.en", ["a b", "a b", "c d"])
    reorder_path = text_file(tmp / "train.reorder", ["1 0", "0 1", "0 1"])
    target = text_file(tmp / "train.de", ["B A", "A B", "C D"], bad_line=3)
    return (["--source", source, "--reorder", reorder_path, "--target", target],
            not_utf8(target, 3))


def reorder_text(tmp):
    source = text_file(tmp / "test.he", ["a b"] * 5000, bad_line=4000)
    reorder_path = text_file(tmp / "test.reorder", ["1 0"] * 5000)
    return (["--source", source, "--reorder", reorder_path, "--output",
             str(tmp / "out" / "test.reordered"), "--workers", "1", "--chunk-size", "500"],
            not_utf8(source, 4000))


def bleu(tmp):
    generated = generate_output(tmp / "gen.out", ["a house", "a dog"], bad_line=5)
    reference = text_file(tmp / "ref.en", ["a house", "a dog"])
    return (["--generate-output", generated, "--reference", reference, "--target-lang", "en",
             "--json", str(tmp / "out" / "bleu.json")], not_utf8(generated, 5))


def bleu_reference(tmp):
    generated = generate_output(tmp / "gen.out", ["a house", "a dog"])
    reference = text_file(tmp / "ref.en", ["a house", "a dog"], bad_line=2)
    return (["--generate-output", generated, "--reference", reference, "--target-lang", "en",
             "--json", str(tmp / "out" / "bleu.json")], not_utf8(reference, 2))


def libreoffice_corpus(tmp):
    page = '<p id="par_id1">{}</p>\n<p id="par_id2">{}</p>'
    source_page = tmp / "en-US" / "text" / "page.html"
    text_file(source_page, page.format("Open", "Close").splitlines())
    target_page = tmp / "de" / "text" / "page.html"
    text_file(target_page, page.format("Öffnen", "Schließen").splitlines(), bad_line=2)
    return (["--source-help", str(tmp / "en-US"), "--target-help", str(tmp / "de"),
             "--source-lang", "en", "--target-lang", "de", "--out", str(tmp / "out"),
             "--valid-size", "0", "--test-size", "0"], not_utf8(target_page, 2))


def bible(tmp):
    wheel = tmp / "bible.whl"
    member = "data/eng/targets/BSB/ot_BSB.tsv"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(bible_corpus.SOURCE_MEMBER,
                         "id\ttext\no010010010011\tבְּ\n")
        archive.writestr(member, b"id\tsource_verse\ttext\n01001001001\t01001001\t"
                         + LATIN1_LINE + b"\n")
        archive.writestr(bible_corpus.ALIGNMENT_MEMBER, json.dumps({"records": []}))
    return (["--wheel", str(wheel), "--out", str(tmp / "out")],
            not_utf8(f"{wheel}/{member}", 2, column=25))


def aer(tmp):
    gold = text_file(tmp / "test.align", ["0-0 1?1", "0-0"], bad_line=2)
    links = text_file(tmp / "eflomal.align", ["0-0", "0-0"])
    return (["--gold", gold, "--links", f"eflomal={links}", "--json",
             str(tmp / "out" / "aer.json")], not_utf8(gold, 2))


def aer_links(tmp):
    gold = text_file(tmp / "test.align", ["0-0 1?1", "0-0"])
    links = text_file(tmp / "eflomal.align", ["0-0", "0-0"], bad_line=1)
    return (["--gold", gold, "--links", f"eflomal={links}", "--write-links",
             str(tmp / "out"), "--json", str(tmp / "out" / "aer.json")], not_utf8(links, 1))


def compare(tmp):
    baseline = generate_output(tmp / "baseline.out", ["a house", "a dog"])
    system = generate_output(tmp / "system.out", ["a house", "a dog"], bad_line=2)
    reference = text_file(tmp / "ref.en", ["a house", "a dog"])
    return (["--generated", f"baseline={baseline}", "--generated", f"system={system}",
             "--reference", reference, "--target-lang", "en", "--bootstrap-samples", "10",
             "--markdown", str(tmp / "out" / "table.md"), "--json",
             str(tmp / "out" / "table.json")], not_utf8(system, 2))


def compare_reference(tmp):
    baseline = generate_output(tmp / "baseline.out", ["a house", "a dog"])
    reference = text_file(tmp / "ref.en", ["a house", "a dog"], bad_line=1)
    return (["--generated", f"baseline={baseline}", "--reference", reference,
             "--target-lang", "en", "--json", str(tmp / "out" / "table.json")],
            not_utf8(reference, 1))


def fake_data_bin(tmp, bad_line=None):
    """A data-bin folder with dict.he.txt and dict.en.txt, and an unread checkpoint file:
    the commands read the text before they load a model."""
    data_bin = tmp / "data-bin"
    text_file(data_bin / "dict.en.txt", ["house 3", "dog 2"], bad_line)
    text_file(data_bin / "dict.he.txt", ["a 3", "b 2"])
    checkpoint = tmp / "checkpoint.pt"
    checkpoint.write_bytes(b"not read")
    return data_bin, checkpoint


def compare_dictionary(tmp):
    data_bin, checkpoint = fake_data_bin(tmp, bad_line=1)
    reference = text_file(tmp / "ref.en", ["a house", "a dog"])
    return (["--checkpoint", f"model={checkpoint}", "--data-bin", str(data_bin), "--reference",
             reference, "--target-lang", "en", "--output-dir", str(tmp / "out")],
            not_utf8(data_bin / "dict.en.txt", 1))


def swap_robustness(tmp):
    data_bin, checkpoint = fake_data_bin(tmp)
    source = text_file(tmp / "test.he", ["a b", "b a"], bad_line=2)
    reference = text_file(tmp / "test.en", ["a house", "a dog"])
    return (["--checkpoint", f"model={checkpoint}", "--data-bin", str(data_bin), "--source",
             source, "--reference", reference, "--source-lang", "he", "--target-lang", "en",
             "--output-dir", str(tmp / "out")], not_utf8(source, 2))


def swap_robustness_dictionary(tmp):
    data_bin, checkpoint = fake_data_bin(tmp, bad_line=2)
    source = text_file(tmp / "test.he", ["a b", "b a"])
    reference = text_file(tmp / "test.en", ["a house", "a dog"])
    return (["--checkpoint", f"model={checkpoint}", "--data-bin", str(data_bin), "--source",
             source, "--reference", reference, "--source-lang", "he", "--target-lang", "en",
             "--output-dir", str(tmp / "out")], not_utf8(data_bin / "dict.en.txt", 2))


def noise_curve(tmp):
    results = text_file(tmp / "xlpe.tsv", ["noise BLEU", "0 30.1", "0.1 29.5"], bad_line=3)
    return (["--results", f"xlpe={results}", "--output-dir", str(tmp / "out")],
            not_utf8(results, 3))


def noise_curve_reference(tmp):
    generated = generate_output(tmp / "gen.out", ["a house"])
    reference = text_file(tmp / "ref.en", ["a house"], bad_line=1)
    return (["--generate-outputs", f"0.1={generated}", "--reference", reference,
             "--target-lang", "en", "--output-dir", str(tmp / "out")], not_utf8(reference, 1))


def attention_heatmap(tmp):
    # the data-bin's dictionaries are the only text this command reads (through fairseq)
    data_bin, checkpoint = fake_data_bin(tmp, bad_line=2)
    return (["--checkpoint", f"a={checkpoint}", f"b={checkpoint}", "--data-bin", str(data_bin),
             "--output", str(tmp / "out" / "heatmap.png")],
            not_utf8(data_bin / "dict.en.txt", 2))


def dpe_order(tmp):
    # the data-bin's dictionaries are the only text this command reads (through fairseq)
    data_bin, checkpoint = fake_data_bin(tmp, bad_line=1)
    return (["--checkpoint", str(checkpoint), "--data-bin", str(data_bin),
             "--output", str(tmp / "valid.dpe-net.reorder")],
            not_utf8(data_bin / "dict.en.txt", 1))


def inxl_diagnostics(tmp):
    # the data-bin's dictionaries are the only text this command reads (through fairseq)
    data_bin, checkpoint = fake_data_bin(tmp, bad_line=1)
    return (["--checkpoint", str(checkpoint), "--data-bin", str(data_bin)],
            not_utf8(data_bin / "dict.en.txt", 1))


def study(tmp):
    reference = text_file(tmp / "test.en", ["a house", "a dog"], bad_line=2)
    return (["--data-bin", str(tmp / "data-bin"), "--source-lang", "he", "--target-lang", "en",
             "--reference", reference, "--models", "transformer", "--work", str(tmp / "out")],
            not_utf8(reference, 2))


def study_gold(tmp):
    # xlpe-aer reads the gold only after the training: the study checks it first
    reference = text_file(tmp / "test.en", ["a house", "a dog"])
    gold = text_file(tmp / "test.align", ["0-0", "0-0"], bad_line=1)
    source_bpe = text_file(tmp / "test.bpe.he", ["a", "b"])
    return (["--data-bin", str(tmp / "data-bin"), "--source-lang", "he", "--target-lang", "en",
             "--reference", reference, "--gold", gold, "--source-bpe", source_bpe,
             "--target-bpe", reference, "--models", "transformer", "--work", str(tmp / "out")],
            not_utf8(gold, 1))


def study_dictionary(tmp):
    data_bin, _ = fake_data_bin(tmp, bad_line=2)
    reference = text_file(tmp / "test.en", ["a house", "a dog"])
    return (["--data-bin", str(data_bin), "--source-lang", "he", "--target-lang", "en",
             "--reference", reference, "--models", "transformer", "--work", str(tmp / "out")],
            not_utf8(data_bin / "dict.en.txt", 2))


def provenance(tmp):
    record = text_file(tmp / "provenance.json", ["{", '"format": 1', "}"], bad_line=2)
    return ["show", record], not_utf8(record, 2)


def evaluate_recipe_env(tmp):
    recipe_env = text_file(tmp / "corpus" / "recipe.env", ["SRC=fr", "TGT=en"], bad_line=2)
    return [str(tmp / "corpus"), str(tmp / "out")], not_utf8(recipe_env, 2)


def train_schedule_env(tmp):
    """A folder of a training whose schedule.env (which names the model trained there) is
    not UTF-8: read before any lock is taken or file written."""
    text = tmp / "corpus" / "data-bin" / "text"
    text.mkdir(parents=True)
    for name in ("train.fr-en.fr.idx", "dict.fr.txt", "dict.en.txt"):
        (text / name).write_text("")
    (tmp / "ck").mkdir()
    (tmp / "ck" / "checkpoint_last.pt").write_bytes(b"")
    schedule_env = text_file(tmp / "ck" / "schedule.env", ["SCHEDULE=dpe-iwslt",
                                                           "TRAINED_MODEL=dpe"], bad_line=2)
    return ["transformer", str(tmp / "corpus"), str(tmp / "ck")], not_utf8(schedule_env, 2)


def prepare_raw(tmp):
    for split in ("train", "valid", "test"):
        for lang in ("fr", "en"):
            text_file(tmp / "raw" / f"{split}.{lang}", ["le chat", "la maison", "un chien"],
                      bad_line=2 if (split, lang) == ("valid", "fr") else None)
    return (["--src", "fr", "--tgt", "en", str(tmp / "raw"), str(tmp / "out")],
            not_utf8(tmp / "raw" / "valid.fr", 2))



CASES = {
    "xlpe-tokenize": [tokenize],
    "xlpe-bpe": [bpe_learn, bpe_apply, bpe_apply_codes],
    "xlpe-align": [align],
    "xlpe-reorder": [reorder],
    "xlpe-binarize": [binarize, binarize_source],
    "xlpe-preorder-train": [preorder_train],
    "xlpe-preorder": [preorder],
    "xlpe-preorder-crossfit": [preorder_crossfit],
    "xlpe-preorder-ensemble": [preorder_ensemble],
    "xlpe-reorder-score": [reorder_score],
    "xlpe-reorder-ceiling": [reorder_ceiling],
    "xlpe-reorder-text": [reorder_text],
    "xlpe-bleu": [bleu, bleu_reference],
    "xlpe-libreoffice-corpus": [libreoffice_corpus],
    "xlpe-bible-corpus": [bible],
    "xlpe-aer": [aer, aer_links],
    "xlpe-compare": [compare, compare_reference, compare_dictionary],
    "xlpe-swap-robustness": [swap_robustness, swap_robustness_dictionary],
    "xlpe-noise-curve": [noise_curve, noise_curve_reference],
    "xlpe-attention-heatmap": [attention_heatmap],
    "xlpe-dpe-order": [dpe_order],
    "xlpe-inxl-diagnostics": [inxl_diagnostics],
    "xlpe-study": [study, study_gold, study_dictionary],
    "xlpe-provenance": [provenance],
    "xlpe-evaluate": [evaluate_recipe_env],
    "xlpe-train": [train_schedule_env],
    "xlpe-prepare": [prepare_raw],
}


def test_every_console_command_has_a_case():
    commands = set(console_scripts())
    missing = commands - set(CASES) - set(BINARY_INPUTS_ONLY)
    assert not missing, f"console commands without a non-UTF-8 input case: {sorted(missing)}"
    stale = (set(CASES) | set(BINARY_INPUTS_ONLY)) - commands
    assert not stale, f"cases for commands setup.py no longer has: {sorted(stale)}"


def files_under(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("command, case", [
    pytest.param(command, case, id=f"{command}-{case.__name__}")
    for command, cases in CASES.items() for case in cases
])
def test_not_utf8_input_exits_1_naming_file_line_byte_and_column(command, case, tmp_path,
                                                                  capsys):
    argv, expected = case(tmp_path)
    inputs = files_under(tmp_path)
    module, function = console_scripts()[command].split(":")
    main = getattr(importlib.import_module(module), function)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    stderr = capsys.readouterr().err
    assert exit_info.value.code == 1, f"{command} exited {exit_info.value.code}:\n{stderr}"
    assert stderr.splitlines()[-1] == f"{command}: error: {expected}", stderr
    assert files_under(tmp_path) == inputs, f"{command} left output behind"


def test_the_installed_command_prints_no_traceback(tmp_path):
    source = tmp_path / "in.en"
    source.write_bytes(b"\xff\xfeh\x00i\x00\n")
    executable = Path(sys.executable).parent / "xlpe-tokenize"
    result = subprocess.run([str(executable), "--lang", "en", "--input", str(source),
                             "--output", str(tmp_path / "tok.en")],
                            capture_output=True, text=True,
                            env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"xlpe-tokenize: error: {source} line 1: not UTF-8 (byte 0xff at column 1)")
    assert "Traceback" not in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["in.en"]
