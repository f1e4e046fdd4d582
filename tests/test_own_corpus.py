"""Your own corpus end to end, on a pair the demo does not use: English->Japanese, so the
target goes through MeCab segmentation and BLEU through sacreBLEU's ja-mecab tokenizer.

One pair of raw files -> data_prep/prepare-corpus.sh (valid and test held out) ->
examples/train.sh for the Transformer and XL PE (InXL), tiny and briefly -> examples/evaluate.sh
(fairseq-generate, xlpe-bleu) -> xlpe-translate and the documented fairseq-interactive command
on raw text."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recipes.test_recipes_offline import sentences
from xlpe_fairseq.evaluation.bleu import bleu_tokenizer, detokenize, score
from xlpe_fairseq.evaluation.generate_output import read_hypotheses

pytest.importorskip("fugashi", reason="Japanese segmentation: pip install 'xlpe-fairseq[ja]'")
pytest.importorskip("MeCab", reason="ja-mecab BLEU: pip install 'xlpe-fairseq[ja]'")

ROOT = Path(__file__).resolve().parents[1]
PAIRS = 300
HELD_OUT = 15  # 5% of the pairs each for valid and test
MODELS = ("transformer", "xlpe-inxl")
# a small model that trains in seconds; evaluated from checkpoint_best.pt, saved at the end
TRAIN_ARGS = [
    "--max-update", "40", "--warmup", "5", "--lr", "3e-3", "--max-tokens", "600",
    "--encoder-embed-dim", "64", "--encoder-ffn-embed-dim", "128", "--decoder-embed-dim", "64",
    "--decoder-ffn-embed-dim", "128", "--save-interval", "1000", "--validate-interval", "1000",
]
ENV = {
    **os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
    "WORKERS": "1", "PREORDER_EPOCHS": "1", "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore",
    "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1",
}


def run(*command, **kwargs):
    result = subprocess.run([str(c) for c in command], env=ENV, capture_output=True, text=True,
                            cwd=ROOT, **kwargs)
    assert result.returncode == 0, f"{command[:3]} failed:\n{result.stderr[-4000:]}"
    return result.stdout


def translate(out, checkpoint, source, *options):
    return run(sys.executable, "-m", "xlpe_fairseq.evaluation.translate", "--corpus", out,
               "--checkpoint", checkpoint, "--input", source, "--cpu", *options).splitlines()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """OUT of prepare-corpus.sh and a checkpoint folder per model, evaluated."""
    root = tmp_path_factory.mktemp("own-corpus")
    raw = root / "raw"
    raw.mkdir()
    for lang in ("en", "ja"):
        (raw / f"train.{lang}").write_text("\n".join(sentences(lang, PAIRS, 1)) + "\n",
                                           encoding="utf-8")
    out = root / "en-ja"
    # options after the operands, as a user may write them
    run("bash", ROOT / "data_prep/prepare-corpus.sh", raw, out, "--src", "en", "--tgt", "ja",
        "--merges", "100")
    # both models at once, one core each
    trainings = {
        model: subprocess.Popen(
            ["bash", str(ROOT / "examples/train.sh"), model, str(out / "data-bin"),
             str(root / model), *TRAIN_ARGS],
            env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for model in MODELS
    }
    for model, process in trainings.items():
        _, stderr = process.communicate()
        assert process.returncode == 0, f"train.sh {model} failed:\n{stderr[-4000:]}"
    scores = {model: run("bash", ROOT / "examples/evaluate.sh", out, root / model, "--model",
                         model, "--average", "0", "--cpu")
              for model in MODELS}
    return out, root, scores


def test_prepare_holds_out_valid_and_test_and_writes_every_data_bin(trained):
    out, _, _ = trained
    for split, pairs in (("train", PAIRS - 2 * HELD_OUT), ("valid", HELD_OUT),
                         ("test", HELD_OUT)):
        for lang in ("en", "ja"):
            lines = (out / "raw" / f"{split}.{lang}").read_text(encoding="utf-8").splitlines()
            assert len(lines) == pairs, (split, lang)
    for variant, splits in {"dpe": ("train", "valid"), "xlpe": ("train", "valid", "test")}.items():
        for split in splits:
            assert (out / "data-bin" / variant / f"{split}.reorder.en-ja.idx").exists()
    assert (out / "bpe" / "codes").exists() and (out / "preorderer.pt").exists()


@pytest.mark.parametrize("model", MODELS)
def test_evaluate_scores_japanese_with_mecab(trained, model):
    _, root, scores = trained
    assert "tok:ja-mecab" in scores[model], scores[model]
    assert (root / model / "bleu-test.json").exists()


@pytest.mark.parametrize("model", MODELS)
def test_translate_raw_text_as_generate_translates_the_test_set(trained, model):
    """The same sentences from raw text as from the data-bin: XL PE's positions predicted on
    the fly are those xlpe-preorder wrote for the test set."""
    out, root, _ = trained
    translations = translate(out, root / model / "checkpoint_best.pt", out / "raw" / "test.en")
    generated = detokenize(read_hypotheses(root / model / "generate-test.out", HELD_OUT), "ja")
    assert len(translations) == HELD_OUT
    same = sum(a == b for a, b in zip(translations, generated))
    # batches differ (padding, order), which may flip a near tie in the beam
    assert same >= HELD_OUT - 2, list(zip(translations, generated))
    references = (out / "raw" / "test.ja").read_text(encoding="utf-8").splitlines()
    assert "tok:ja-mecab" in score(translations, references, bleu_tokenizer("ja"))["bleu_signature"]


def test_translate_with_nbest_reorderings_keeps_one_translation_a_line(trained):
    """--preorderer-nbest reaches the task through xlpe-translate; a dominant search score keeps
    the translations of the preorderer's best reordering."""
    out, root, _ = trained
    checkpoint, source = root / "xlpe-inxl" / "checkpoint_best.pt", out / "raw" / "test.en"
    one_best = translate(out, checkpoint, source)
    nbest = translate(out, checkpoint, source, "--preorderer-nbest", "3")
    assert len(nbest) == HELD_OUT
    assert translate(out, checkpoint, source, "--preorderer-nbest", "3",
                     "--preorderer-nbest-weight", "1e6") == one_best


def test_translate_prints_no_warnings_or_fairseq_logs(trained):
    """Only translations on stdout; on stderr nothing a user cannot act on (the user's shell
    has no PYTHONWARNINGS)."""
    out, root, _ = trained
    env = {k: v for k, v in ENV.items() if k not in ("PYTHONWARNINGS", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")}
    result = subprocess.run(
        [sys.executable, "-m", "xlpe_fairseq.evaluation.translate", "--corpus", str(out),
         "--checkpoint", str(root / "transformer" / "checkpoint_best.pt"), "--cpu"],
        input="This is a test .\n", env=env, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.stdout.splitlines()) == 1, result.stdout
    assert not result.stderr.strip(), "xlpe-translate printed on stderr:\n" + result.stderr[-3000:]


def test_translate_refuses_a_broken_codes_file_in_one_line(trained, tmp_path):
    """fastBPE crashes (a segmentation fault) on a codes line of fewer than three fields: the
    codes are checked first, as by xlpe-bpe apply."""
    out, root, _ = trained
    codes = tmp_path / "codes"
    codes.write_text((out / "bpe" / "codes").read_text(encoding="utf-8") + "x\n",
                     encoding="utf-8")
    broken_line = len(codes.read_text(encoding="utf-8").splitlines())
    result = subprocess.run(
        [sys.executable, "-m", "xlpe_fairseq.evaluation.translate", "--corpus", str(out),
         "--bpe-codes", str(codes), "--checkpoint",
         str(root / "transformer" / "checkpoint_best.pt"), "--cpu"],
        input="This is a test .\n", env=ENV, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1, result.stderr[-3000:]
    assert result.stderr.count("\n") == 1 and f"{codes} line {broken_line}:" in result.stderr, \
        result.stderr[-3000:]
    assert not result.stdout, result.stdout


def test_fairseq_interactive_as_documented_translates_raw_text(trained, tmp_path):
    """docs/own-corpus.md's fairseq-interactive command: Moses with the pipeline's settings and
    the corpus's BPE turn raw English into the same output as xlpe-translate."""
    out, root, _ = trained
    source = tmp_path / "raw.en"
    source.write_text("the dog sees a small house.\nWe read a book today.\n", encoding="utf-8")
    checkpoint = root / "xlpe-inxl" / "checkpoint_best.pt"
    stdout = run("fairseq-interactive", out / "data-bin" / "text", "--user-dir",
                 ROOT / "xlpe_fairseq", "--task", "translation_reorder", "--path", checkpoint,
                 "--source-lang", "en", "--target-lang", "ja", "--tokenizer", "moses",
                 "--moses-no-dash-splits", "--moses-no-escape", "--bpe", "fastbpe",
                 "--bpe-codes", out / "bpe" / "codes", "--preorderer", out / "preorderer.pt",
                 "--beam", "5", "--cpu", "--input", source)
    detokenized = [line.split("\t")[2] for line in stdout.splitlines() if line.startswith("D-")]
    assert detokenized == translate(out, checkpoint, source)
