"""The provenance chain as a property: on a tiny corpus, change one input at a time (each raw
file, the BPE codes, an option, a data-bin file, the checkpoint) and rerun the step after it:
it rebuilds what depends on the change, or refuses in one line, and never exits 0 with the
result of the inputs as they were.

One OUT of prepare-corpus.sh and one checkpoint folder go through the changes in turn; each
change is checked where its effect shows: prepare-corpus.sh's rerun and OUT/provenance.json,
train.sh's resume, evaluate.sh's scores and their record, xlpe-translate --corpus."""
import fcntl
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.parallel_text import sentences

ROOT = Path(__file__).resolve().parents[1]
ENV = {
    **os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
    "WORKERS": "1", "PREORDER_EPOCHS": "1", "PREORDER_SEEDS": "1", "OMP_NUM_THREADS": "1",
    "PYTHONWARNINGS": "ignore",
}
SIZES = {"train": 60, "valid": 6, "test": 6}
TRAIN = ["--max-update", "6", "--lr", "3e-3", "--max-tokens", "400", "--encoder-embed-dim",
         "32", "--encoder-ffn-embed-dim", "64", "--decoder-embed-dim", "32",
         "--decoder-ffn-embed-dim", "64"]


def bash(script, *args):
    return subprocess.run(["bash", str(ROOT / script), *map(str, args)], env=ENV, cwd=ROOT,
                          capture_output=True, text=True)


def succeeds(script, *args):
    result = bash(script, *args)
    assert result.returncode == 0, f"{script} failed:\n{result.stderr[-3000:]}"
    return result


def refuses(script, *args, says):
    """One line saying ``says``, exit 1 (train.sh shows fairseq-train's report on stdout)."""
    result = bash(script, *args)
    output = result.stderr + result.stdout
    assert result.returncode == 1 and says in output and "Traceback" not in output, (
        f"{script} {args}: expected a refusal saying {says!r}, got exit {result.returncode}:\n"
        f"{output[-3000:]}")


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def record(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def prepare(raw, out, *options):
    return succeeds("data_prep/prepare-corpus.sh", "--src", "en", "--tgt", "fr", *options, raw,
                    out).stderr


def evaluate(out, checkpoints):
    succeeds("examples/evaluate.sh", out, checkpoints, "--average", "0", "--beam", "1", "--cpu")
    return record(checkpoints / "provenance-test.json"), record(checkpoints / "bleu-test.json")


def rewrite(path, change):
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(change(lines)) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    root = tmp_path_factory.mktemp("provenance-chain")
    raw = root / "raw"
    raw.mkdir()
    for seed, (split, count) in enumerate(SIZES.items(), start=1):
        for lang in ("en", "fr"):
            (raw / f"{split}.{lang}").write_text("\n".join(sentences(lang, count, seed)) + "\n",
                                                 encoding="utf-8")
    out, checkpoints = root / "out", root / "checkpoints"
    prepare(raw, out)
    succeeds("examples/train.sh", "transformer", out / "data-bin", checkpoints, *TRAIN)
    return raw, out, checkpoints


def test_every_link_writes_its_record(chain):
    raw, out, checkpoints = chain
    corpus = record(out / "provenance.json")
    assert corpus["inputs"]["test.fr"] == {"path": str(raw / "test.fr"),
                                           "sha256": sha256(raw / "test.fr")}
    assert corpus["files"]["reference/test.fr"] == sha256(raw / "test.fr")
    training = record(checkpoints / "provenance.json")
    assert (training["model"], training["data_bin"]) == ("transformer",
                                                         str(out / "data-bin" / "text"))
    evaluation, _ = evaluate(out, checkpoints)
    assert evaluation["checkpoint"]["sha256"] == sha256(checkpoints / "checkpoint_best.pt")
    assert evaluation["corpus_record"]["sha256"] == sha256(out / "provenance.json")


def test_changed_inputs_rebuild_what_depends_on_them_or_are_refused(chain, tmp_path):
    raw, out, checkpoints = chain
    _, scores = evaluate(out, checkpoints)

    # the raw reference: scored as prepared until the corpus is prepared anew, then the new one
    rewrite(raw / "test.fr", lambda lines: lines[::-1])
    result = succeeds("examples/evaluate.sh", out, checkpoints, "--average", "0", "--beam", "1",
                      "--cpu")
    assert "test.fr changed since" in result.stderr, result.stderr
    assert record(checkpoints / "bleu-test.json") == scores, "scored against OUT's copy"
    log = prepare(raw, out)
    assert "== apply BPE test.fr" in log and "== tokenize train.en: up to date" in log
    evaluation, _ = evaluate(out, checkpoints)
    assert evaluation["reference"]["sha256"] == sha256(raw / "test.fr")

    # valid's source: rebuilt (the preorderer chooses its epoch on valid), the record holding
    # its new content; the checkpoint, trained on the same training split, still decodes
    rewrite(raw / "valid.en", lambda lines: lines[1:] + lines[:1])
    log = prepare(raw, out)
    assert "== train preorderer (seed 1" in log and "seed 1): up to date" not in log
    assert record(out / "provenance.json")["inputs"]["valid.en"]["sha256"] == sha256(
        raw / "valid.en")
    evaluate(out, checkpoints)

    # a training side: the corpus is rebuilt; the checkpoint of the old one is refused by
    # every consumer
    rewrite(raw / "train.fr", lambda lines: lines[1:] + lines[:1])
    prepare(raw, out)
    data_bin = out / "data-bin"
    says = "it was trained on"
    refuses("examples/evaluate.sh", out, checkpoints, "--average", "0", "--cpu", says=says)
    refuses("examples/train.sh", "transformer", data_bin, checkpoints, *TRAIN,
            "--max-update", "8", says="cannot resume")
    (tmp_path / "new.en").write_text("the dog sees a house .\n")
    translate = subprocess.run(
        [sys.executable, "-m", "xlpe_fairseq.evaluation.translate", "--corpus", out,
         "--checkpoint", checkpoints / "checkpoint_best.pt", "--input", tmp_path / "new.en",
         "--cpu"], env=ENV, capture_output=True, text=True)
    assert translate.returncode == 1 and says in translate.stderr, translate.stderr

    # an option: another BPE, so other dictionaries; a training afresh in the same folder
    prepare(raw, out, "--merges", "20")
    assert record(out / "provenance.json")["settings"]["MERGES"] == "20"
    refuses("examples/evaluate.sh", out, checkpoints, "--average", "0", "--cpu", says=says)
    succeeds("examples/train.sh", "transformer", data_bin, checkpoints, *TRAIN, "--restart")
    assert any(name.startswith("replaced-") for name in os.listdir(checkpoints))
    first, _ = evaluate(out, checkpoints)

    # the codes edited by hand, a data-bin file changed: refused until restored
    for changed, says in ((out / "bpe" / "codes", "bpe/codes: changed since"),
                          (data_bin / "text" / "test.en-fr.fr.bin",
                           "test.en-fr.fr.bin: changed since")):
        kept = changed.read_bytes()
        changed.write_bytes(kept + b"\0")
        refuses("examples/evaluate.sh", out, checkpoints, "--average", "0", "--cpu", says=says)
        refuses("examples/train.sh", "transformer", data_bin, checkpoints, *TRAIN, says=says)
        changed.write_bytes(kept)

    # the checkpoint: another one is scored and recorded as such
    (checkpoints / "checkpoint_best.pt").write_bytes(
        sorted(checkpoints.glob("checkpoint_*_*.pt"))[0].read_bytes())
    second, _ = evaluate(out, checkpoints)
    assert first["checkpoint"]["sha256"] != second["checkpoint"]["sha256"]
    assert second["checkpoint"]["sha256"] == sha256(checkpoints / "checkpoint_best.pt")


def test_two_runs_into_one_out_or_one_checkpoint_folder_refuse_the_second(chain, tmp_path):
    raw, out, checkpoints = chain
    with open(out / ".xlpe-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a preparation in progress holds it
        says = f"{out} is in use by another run"
        result = bash("data_prep/prepare-corpus.sh", "--src", "en", "--tgt", "fr", raw, out)
        assert result.returncode == 1 and says in result.stderr, result.stderr
        result = bash("examples/evaluate.sh", out, checkpoints, "--average", "0", "--cpu")
        # evaluation names the preparation that is writing OUT
        assert result.returncode == 1 and f"{out} is being written by another run" in \
            result.stderr, result.stderr
    with open(checkpoints / ".xlpe-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a training in progress holds it
        result = bash("examples/evaluate.sh", out, checkpoints, "--average", "0", "--cpu")
        assert result.returncode == 1 and f"{checkpoints} is in use" in result.stderr


@pytest.mark.parametrize("out", ["", "/", "/usr", "/sys/xlpe"])
def test_a_folder_no_run_may_mean_is_refused_before_anything_is_written(chain, tmp_path, out):
    raw, *_ = chain
    result = bash("data_prep/prepare-corpus.sh", "--src", "en", "--tgt", "fr", raw, out)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "expected a folder" in result.stderr
    assert not Path("/tok").exists() and not Path("/recipe.env").exists()
