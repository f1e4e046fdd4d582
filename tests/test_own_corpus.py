"""Your own corpus end to end, on a pair the demo does not use: English->Japanese, so the
target goes through MeCab segmentation and BLEU through sacreBLEU's ja-mecab tokenizer.

One pair of raw files -> data_prep/prepare-corpus.sh (valid and test held out) ->
examples/train.sh for the Transformer and XL PE (InXL), tiny and briefly -> examples/evaluate.sh
(fairseq-generate, xlpe-bleu) -> xlpe-translate and the documented fairseq-interactive command
on raw text. The Transformer follows the README's "first try" as written, its pair and paths
replaced, a tiny model's options and a shorter budget appended."""
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fairseq.data import Dictionary, data_utils

from support.errors import assert_one_line_error
from support.first_try import FIRST_TRY_MODEL, readme_first_try
from support.parallel_text import sentences
from warm_python import REAL_PYTHON, real_processes
from xlpe_fairseq.evaluation import translate as translate_command
from xlpe_fairseq.evaluation.bleu import bleu_tokenizer, detokenize, score
from xlpe_fairseq.evaluation.generate_output import read_hypotheses
from xlpe_fairseq.tasks.translation_reorder import TranslationReorderTask

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
    "WORKERS": "1", "PREORDER_EPOCHS": "1", "PREORDER_SEEDS": "1", "OMP_NUM_THREADS": "1",
    "PYTHONWARNINGS": "ignore",
}


def completed(command, **kwargs):
    result = subprocess.run([str(c) for c in command], env=ENV, capture_output=True, text=True,
                            cwd=ROOT, **kwargs)
    assert result.returncode == 0, f"{command[:3]} failed:\n{result.stderr[-4000:]}"
    return result


def run(*command, **kwargs):
    return completed(command, **kwargs).stdout


def translated(out, checkpoint, source, *options):
    """xlpe-translate run in this process on ``source``: its lines, and what its task decoded,
    by source sentence (its BPE tokens): ``positions`` given to the model (none for a model
    that reads none), the best translation's beam ``score`` and ``nbest``, the
    --preorderer-nbest it decoded with."""
    decoded = {}
    inference_step = TranslationReorderTask.inference_step
    predict_positions = TranslationReorderTask.predict_positions

    def recorded_step(task, generator, models, sample, *args, **kwargs):
        beams = inference_step(task, generator, models, sample, *args, **kwargs)
        pad = task.src_dict.pad()
        for row, beam in zip(sample["net_input"]["src_tokens"], beams):
            decoded.setdefault(task.src_dict.string(row[row.ne(pad)]), {}).update(
                score=float(beam[0]["score"]), nbest=task.cfg.preorderer_nbest)
        return beams

    def recorded_positions(task, source_token_ids):
        sentences = list(source_token_ids)
        positions = predict_positions(task, sentences)
        for ids, predicted in zip(sentences, positions):
            decoded.setdefault(task.src_dict.string(ids), {})["positions"] = predicted.tolist()
        return positions

    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(stdout):
        patch.setattr(TranslationReorderTask, "inference_step", recorded_step)
        patch.setattr(TranslationReorderTask, "predict_positions", recorded_positions)
        translate_command.main(["--corpus", str(out), "--checkpoint", str(checkpoint),
                                "--input", str(source), "--cpu", *options])
    stdout.flush()
    return stdout.buffer.getvalue().decode("utf-8").splitlines(), decoded


def translate(out, checkpoint, source, *options):
    return translated(out, checkpoint, source, *options)[0]


def data_bin_test_split(out, variant):
    """The test split of OUT's data-bin ``variant``: its source sentences (BPE tokens) and
    its reorder positions."""
    data_bin = out / "data-bin" / variant
    dictionary = Dictionary.load(str(data_bin / "dict.en.txt"))
    tokens = data_utils.load_indexed_dataset(str(data_bin / "test.en-ja.en"), dictionary)
    positions = data_utils.load_indexed_dataset(str(data_bin / "test.reorder.en-ja"), None)
    return ([dictionary.string(tokens[i]) for i in range(len(tokens))],
            [positions[i].tolist() for i in range(len(positions))])


def beam_scores(decoded):
    return {sentence: seen["score"] for sentence, seen in decoded.items()}



def first_try(raw, out, checkpoints):
    """The README's first try for en->ja, run by the commands installed in the environment
    running the tests."""
    return [[installed(c[0]), *c[1:]] for c in readme_first_try(raw, out, checkpoints, "ja")]


def installed(name):
    """The path of console script ``name`` in the environment running the tests: the
    README's commands are the installed ones, not the checkout's scripts."""
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    assert path, f"{name} is not installed beside {sys.executable} (pip install -e .)"
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """OUT of prepare-corpus.sh and a checkpoint folder per model, evaluated; the
    Transformer's as the README's first try, with each of its commands' results."""
    root = tmp_path_factory.mktemp("own-corpus")
    raw = root / "raw"
    raw.mkdir()
    for lang in ("en", "ja"):
        # every fourth pair a software string: a placeholder before the sentence
        lines = [f"%s {line}" if number % 4 == 0 else line
                 for number, line in enumerate(sentences(lang, PAIRS, 1))]
        (raw / f"train.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = root / "en-ja"
    new_text = root / "new.en"
    new_text.write_text("the dog sees a small house .\nwe read a book today .\n",
                        encoding="utf-8")
    prepare, train, evaluate, translate_command = first_try(raw, out, root / "transformer")
    first = [completed(prepare)]
    # XL PE alongside the first try, one core each
    xlpe = subprocess.Popen(
        ["bash", str(ROOT / "examples/train.sh"), "xlpe-inxl", str(out / "data-bin"),
         str(root / "xlpe-inxl"), *TRAIN_ARGS],
        env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first.append(completed([*train, *FIRST_TRY_MODEL]))
    _, stderr = xlpe.communicate()
    assert xlpe.returncode == 0, f"train.sh xlpe-inxl failed:\n{stderr[-4000:]}"
    xlpe = subprocess.Popen(
        ["bash", str(ROOT / "examples/evaluate.sh"), str(out), str(root / "xlpe-inxl"),
         "--model", "xlpe-inxl", "--average", "0", "--cpu"],
        env=ENV, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first.append(completed([*evaluate, "--cpu"]))
    with open(new_text, encoding="utf-8") as stdin:
        first.append(completed([*translate_command, "--cpu"], stdin=stdin))
    stdout, stderr = xlpe.communicate()
    assert xlpe.returncode == 0, f"evaluate.sh xlpe-inxl failed:\n{stderr[-4000:]}"
    return out, root, {"transformer": first[2].stdout, "xlpe-inxl": stdout}, first


def test_first_try_of_the_readme_runs_as_written(trained):
    """Prepare, train with a short budget, the default evaluation and a translation: all exit
    0 for a Japanese target; the short budget is scaled, not left deep in the warm-up."""
    _, root, _, (prepare, train, evaluate, translate_result) = trained
    assert "\nadvice: " in prepare.stderr, prepare.stderr[-2000:]
    assert "below the schedule's 15000: warm-up and checkpoint interval shrunk" in train.stderr
    assert "30 updates, warmup 8," in train.stderr and "a checkpoint every 2 updates" in train.stderr
    assert "tok:ja-mecab" in evaluate.stdout
    hypotheses = (root / "transformer" / "hypotheses-test.ja").read_text(encoding="utf-8")
    assert len(hypotheses.splitlines()) == HELD_OUT
    japanese = "[\u3000-\u30ff\u4e00-\u9fff]"
    assert not re.search(f"{japanese} +{japanese}", hypotheses), "no segmenter's spaces"
    assert len(translate_result.stdout.splitlines()) == 2


def test_prepare_holds_out_valid_and_test_and_writes_every_data_bin(trained):
    out, *_ = trained
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
    _, root, scores, _ = trained
    assert "tok:ja-mecab" in scores[model], scores[model]
    assert (root / model / "bleu-test.json").exists()


@pytest.mark.parametrize("model", MODELS)
def test_translate_raw_text_as_generate_translates_the_test_set(trained, model):
    """The same sentences from raw text as from the data-bin: XL PE's positions predicted on
    the fly are those xlpe-preorder wrote for the test set."""
    out, root, scores, _ = trained
    # the checkpoint evaluate.sh decoded: the best, or (the first try) the last ones averaged
    checkpoint = re.search(r"\((checkpoint\w*\.pt), test\)", scores[model]).group(1)
    translations, decoded = translated(out, root / model / checkpoint, out / "raw" / "test.en")
    sentences, written = data_bin_test_split(out, "xlpe")
    assert sorted(decoded) == sorted(set(sentences)), \
        "xlpe-translate decoded other sentences from raw text than the data-bin's test split"
    fed = [decoded[sentence].get("positions") for sentence in sentences]
    if model == "transformer":
        assert fed == [None] * HELD_OUT, "a Transformer was given reorder positions"
    else:
        wrong = [(n, got, expected) for n, (got, expected) in enumerate(zip(fed, written), 1)
                 if got != expected]
        assert not wrong, "(line, positions given to the model, positions xlpe-preorder " \
            f"wrote) where they differ: {wrong}"
    generated = detokenize(read_hypotheses(root / model / "generate-test.out", HELD_OUT))
    assert len(translations) == HELD_OUT
    same = sum(a == b for a, b in zip(translations, generated))
    # batches differ (padding, order), which may flip a near tie in the beam
    assert same >= HELD_OUT - 2, list(zip(translations, generated))
    references = (out / "raw" / "test.ja").read_text(encoding="utf-8").splitlines()
    assert "tok:ja-mecab" in score(translations, references, bleu_tokenizer("ja"))["bleu_signature"]


def test_translate_with_nbest_reorderings_keeps_one_translation_a_line(trained):
    """--preorderer-nbest reaches the task through xlpe-translate (1 by default: the best
    reordering); a dominant search score keeps the translations of the preorderer's best
    reordering."""
    out, root, *_ = trained
    checkpoint, source = root / "xlpe-inxl" / "checkpoint_best.pt", out / "raw" / "test.en"
    one_best, best = translated(out, checkpoint, source, "--preorderer-nbest", "1")
    nbest, decoded = translated(out, checkpoint, source, "--preorderer-nbest", "3")
    assert len(nbest) == HELD_OUT
    assert {seen["nbest"] for seen in decoded.values()} == {3}, \
        "--preorderer-nbest 3 did not reach the task"
    # the translation of another reordering scores otherwise, even where its text is the same
    dominated, decoded = translated(out, checkpoint, source, "--preorderer-nbest", "3",
                                    "--preorderer-nbest-weight", "1e6")
    assert dominated == one_best
    assert beam_scores(decoded) == pytest.approx(beam_scores(best), rel=1e-5, abs=1e-6), \
        "a dominant search score did not keep the best reordering's translations"
    default, decoded = translated(out, checkpoint, source)
    assert default == one_best, "the default is not the best reordering alone"
    assert {seen["nbest"] for seen in decoded.values()} == {1}
    assert beam_scores(decoded) == pytest.approx(beam_scores(best), rel=1e-5, abs=1e-6), \
        "the default is not the best reordering alone"


def test_translate_prints_no_warnings_or_fairseq_logs(trained):
    """Only translations on stdout; on stderr nothing a user cannot act on (the user's shell
    has no PYTHONWARNINGS): the installed command, as a user runs it."""
    out, root, *_ = trained
    env = {k: v for k, v in real_processes(ENV).items() if k != "PYTHONWARNINGS"}
    result = subprocess.run(
        [os.path.join(os.path.dirname(REAL_PYTHON), "xlpe-translate"), "--corpus", str(out),
         "--checkpoint", str(root / "transformer" / "checkpoint_best.pt"), "--cpu"],
        input="This is a test .\n", env=env, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.stdout.splitlines()) == 1, result.stdout
    assert not result.stderr.strip(), "xlpe-translate printed on stderr:\n" + result.stderr[-3000:]


def test_translate_refuses_a_broken_codes_file_in_one_line(trained, tmp_path):
    """fastBPE crashes (a segmentation fault) on a codes line of fewer than three fields: the
    codes are checked first, as by xlpe-bpe apply."""
    out, root, *_ = trained
    codes = tmp_path / "codes"
    codes.write_text((out / "bpe" / "codes").read_text(encoding="utf-8") + "x\n",
                     encoding="utf-8")
    broken_line = len(codes.read_text(encoding="utf-8").splitlines())
    result = subprocess.run(
        [sys.executable, "-m", "xlpe_fairseq.evaluation.translate", "--corpus", str(out),
         "--bpe-codes", str(codes), "--checkpoint",
         str(root / "transformer" / "checkpoint_best.pt"), "--cpu"],
        input="This is a test .\n", env=ENV, capture_output=True, text=True, cwd=ROOT)
    assert_one_line_error(result, 1, f"{codes} line {broken_line}:", prog="xlpe-translate")
    assert result.stderr.count("\n") == 1, result.stderr[-3000:]
    assert not result.stdout, result.stdout


def test_fairseq_interactive_as_documented_translates_raw_text(trained, tmp_path):
    """docs/own-corpus.md's fairseq-interactive command: the plugin's tokenizer (the pipeline's
    tokenization, detokenization by target language) and the corpus's BPE turn raw English into
    the same output as xlpe-translate."""
    out, root, *_ = trained
    source = tmp_path / "raw.en"
    source.write_text("the dog sees a small house.\nWe read a book today.\n", encoding="utf-8")
    checkpoint = root / "xlpe-inxl" / "checkpoint_best.pt"
    stdout = run("fairseq-interactive", out / "data-bin" / "text", "--user-dir",
                 ROOT / "xlpe_fairseq", "--task", "translation_reorder", "--path", checkpoint,
                 "--source-lang", "en", "--target-lang", "ja", "--tokenizer", "xlpe",
                 "--bpe", "fastbpe",
                 "--bpe-codes", out / "bpe" / "codes", "--preorderer", out / "preorderer.pt",
                 "--beam", "5", "--cpu", "--input", source)
    detokenized = [line.split("\t")[2] for line in stdout.splitlines() if line.startswith("D-")]
    assert detokenized == translate(out, checkpoint, source)


def test_a_rerun_from_other_older_files_and_another_option_rebuilds_what_they_change(
        trained, tmp_path):
    """Into a copy of OUT, from a second raw folder whose files are older than OUT's (the test
    split in another order) and another --max-len: every step whose inputs or settings changed
    runs again, and every data-bin and the evaluation hold the new test split."""
    out, root, *_ = trained
    copy = tmp_path / "en-ja"
    shutil.copytree(out, copy, symlinks=True)
    raw2 = tmp_path / "raw2"
    raw2.mkdir()
    for split in ("train", "valid", "test"):
        for lang in ("en", "ja"):
            lines = (out / "raw" / f"{split}.{lang}").read_text(encoding="utf-8").splitlines()
            if split == "test":
                lines.reverse()
            (raw2 / f"{split}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run(["touch", "-d", "2020-01-01", *raw2.iterdir()], check=True)
    old_test = (copy / "bpe" / "test.en").read_text(encoding="utf-8").splitlines()
    log = completed(["bash", ROOT / "data_prep/prepare-corpus.sh", "--src", "en", "--tgt", "ja",
                     "--max-len", "150", raw2, copy]).stderr
    for step in ("tokenize test.en", "clean train (1..150 tokens", "apply BPE test.en",
                 "fairseq-preprocess", "preorder valid/test", "binarize positions"):
        assert f"== {step}" in log and f"== {step}: up to date" not in log, step
    assert "== tokenize train.en: up to date, skipped" in log, "unchanged steps are kept"
    new_test = (copy / "bpe" / "test.en").read_text(encoding="utf-8").splitlines()
    assert new_test == old_test[::-1]

    dictionary = Dictionary.load(str(copy / "data-bin" / "text" / "dict.en.txt"))
    predicted = (copy / "bpe" / "test.pred.reorder").read_text(encoding="utf-8").splitlines()
    for variant in ("text", "dpe", "xlpe"):
        tokens = data_utils.load_indexed_dataset(
            str(copy / "data-bin" / variant / "test.en-ja.en"), dictionary)
        assert [dictionary.string(tokens[i][:-1]) for i in range(len(tokens))] == new_test, variant
    positions = data_utils.load_indexed_dataset(
        str(copy / "data-bin" / "xlpe" / "test.reorder.en-ja"), None)
    assert [" ".join(map(str, positions[i].tolist())) for i in range(len(positions))] == predicted

    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir()
    for name in ("checkpoint_best.pt", "schedule.env"):
        shutil.copy(root / "xlpe-inxl" / name, checkpoints / name)
    completed(["bash", ROOT / "examples/evaluate.sh", copy, checkpoints, "--average", "0",
               "--cpu"])
    sources = {}
    for line in (checkpoints / "generate-test.out").read_text(encoding="utf-8").splitlines():
        if line.startswith("S-"):
            number, text = line[2:].split("\t", 1)
            sources[int(number)] = text
    assert [sources[i] for i in range(len(sources))] == [
        line.replace("@@ ", "") for line in new_test]
    assert f"RAW={raw2}" in (copy / "recipe.env").read_text(encoding="utf-8")


def test_evaluate_with_a_text_model_on_an_xlpe_checkpoint_names_what_it_is(trained, tmp_path):
    """A checkpoint folder without train.sh's record: the checkpoint of another model than
    --model is refused before decoding, in one line that names its architecture."""
    out, root, *_ = trained
    shutil.copy(root / "xlpe-inxl" / "checkpoint_best.pt", tmp_path / "checkpoint_best.pt")
    result = subprocess.run(
        ["bash", str(ROOT / "examples/evaluate.sh"), str(out), str(tmp_path), "--model",
         "transformer", "--schedule", "dpe-iwslt", "--average", "0", "--cpu"],
        env=ENV, capture_output=True, text=True, cwd=ROOT)
    assert_one_line_error(result, 1, "--arch transformer_xlpe", "--model transformer",
                          "not a checkpoint of that training")
    assert not (tmp_path / "generate-test.out").exists(), "refused before decoding"


def test_placeholders_come_back_in_the_hypotheses_as_written(trained, tmp_path):
    """fairseq-generate --score-reference makes the reference the hypothesis: through MeCab,
    BPE, fairseq's --remove-bpe and xlpe-bleu's detokenization, every line comes back as
    written, its placeholders too (MeCab split '%s' into '% s')."""
    out, root, *_ = trained
    reference = out / "raw" / "test.ja"
    lines = reference.read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("%s ") for line in lines), "the test split holds placeholders"
    generated = tmp_path / "generate-test.out"
    generated.write_text(run(
        "fairseq-generate", out / "data-bin" / "text", "--user-dir", ROOT / "xlpe_fairseq",
        "--task", "translation_reorder", "--path", root / "transformer" / "checkpoint_best.pt",
        "--gen-subset", "test", "--score-reference", "--remove-bpe", "--batch-size", "16",
        "--required-batch-size-multiple", "1", "--cpu"), encoding="utf-8")
    hypotheses = tmp_path / "hypotheses.ja"
    run("xlpe-bleu", "--name", "reference", "--generate-output", generated, "--reference",
        reference, "--target-lang", "ja", "--detokenized-output", hypotheses)
    assert hypotheses.read_text(encoding="utf-8").splitlines() == lines
