"""data_prep/prepare-bible-he-en.sh (xlpe_fairseq/workflow/bible_recipe.py) on a tiny corpus
in place of the Bible (the recipe run with its corpus step copying that corpus): the corpus, then xlpe-prepare's layout with
both sides taken as tokenized, which examples/demo.sh and the other examples read; a rerun that
skips every step, one run at a time in OUTDIR, and no temporary file left by an interrupted or
a killed run."""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.interrupted_runs import SLEEPING_STUB, alive, default_sigint, temporaries
from support.parallel_text import write_raw
from warm_python import real_processes

# the recipe, its corpus step (bible_corpus.write_corpus, called in its process) copying the
# corpus the test prepared (STUB_CORPUS) where it writes the Bible's
RECIPE_RUN = """
import os, shutil, sys
from xlpe_fairseq.preprocessing import bible_corpus
from xlpe_fairseq.workflow import bible_recipe

def copy_corpus(out, cache):
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(os.environ["STUB_CORPUS"]):
        shutil.copy(os.path.join(os.environ["STUB_CORPUS"], name), out)

bible_corpus.write_corpus = copy_corpus
sys.exit(bible_recipe.main(["--prog", "prepare-bible-he-en.sh", *sys.argv[1:]]))
"""
HOLDER = """
import sys, time
from xlpe_fairseq.io.locks import claim_folder
claim_folder(sys.argv[1], "write", "the corpus (OUTDIR)", "prepare-bible-he-en.sh")
print("held", flush=True)
time.sleep(300)
"""


def tiny_corpus(folder):
    """{train,valid,test}.{he,en,ids} and {valid,test}.gold.align, as xlpe-bible-corpus
    writes them: the synthetic German text stands in for the Hebrew side; the English ends
    its sentences with a full stop Moses would split off ("book."), and no space twice."""
    write_raw(folder, "de", "en")
    for split in ("train", "valid", "test"):
        (folder / f"{split}.de").rename(folder / f"{split}.he")
        english = folder / f"{split}.en"
        english.write_text(english.read_text().replace(" .\n", ".\n"))
        count = len((folder / f"{split}.en").read_text().splitlines())
        (folder / f"{split}.ids").write_text("".join(f"{split}{k}\n" for k in range(count)))
        if split != "train":
            (folder / f"{split}.gold.align").write_text("0-0\n" * count)
    return folder


def stubs(tmp_path, **commands):
    """A folder of stub commands, first on PATH, and the environment that runs them."""
    folder = tmp_path / "stubs"
    folder.mkdir(exist_ok=True)
    for name, text in commands.items():
        (folder / name).write_text(text.format(python=sys.executable))
        (folder / name).chmod(0o755)
    path = os.pathsep.join([str(folder), os.path.dirname(sys.executable), os.environ["PATH"]])
    return {**os.environ, "PATH": path, "STUB_CORPUS": str(tiny_corpus(tmp_path / "bible")),
            "WORKERS": "1", "MERGES": "40", "PREORDER_EPOCHS": "1", "PREORDER_THREADS": "1",
            "PREORDER_SEEDS": "1", "PREORDER_SECONDS": "20", "OMP_NUM_THREADS": "1",
            "PYTHONWARNINGS": "ignore"}


def recipe_command(*args):
    return [sys.executable, "-c", RECIPE_RUN, *map(str, args)]


def recipe(*args, env):
    return subprocess.run(recipe_command(*args), capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """One --xlpe run on the tiny corpus, then a rerun into the same OUTDIR."""
    root = tmp_path_factory.mktemp("bible")
    env, out = stubs(root), root / "out"
    first = recipe("--xlpe", out, env=env)
    second = recipe("--xlpe", out, env=env) if first.returncode == 0 else None
    return out, first, second


def test_the_layout_the_examples_read(prepared):
    out, first, _ = prepared
    assert first.returncode == 0, first.stderr[-3000:]
    expected = [
        "corpus/test.gold.align", "corpus/train.ids", "bpe/codes", "bpe/train.align",
        "bpe/test.align", "bpe/train.dpe.reorder", "bpe/valid.dpe.reorder",
        "bpe/test.btg.reorder", "bpe/test.pred.reorder", "data-bin/text/dict.he.txt",
        "data-bin/text/test.he-en.en.bin", "data-bin/dpe/train.reorder.he-en.bin",
        "data-bin/dpe/valid.reorder.he-en.idx", "data-bin/xlpe/dict.en.txt",
        "data-bin/xlpe/test.he-en.he.idx", "data-bin/xlpe/test.reorder.he-en.bin",
        "preorderer.pt", "preorderer.test.score", "reference/test.en", "recipe.env",
        "provenance.json"]
    missing = [name for name in expected if not (out / name).is_file()]
    assert not missing, f"missing {missing} in {sorted(map(str, out.rglob('*')))}"
    assert not (out / "data-bin-xlpe").exists(), "xlpe-prepare's layout only"
    assert "TOKENIZED=he,en\n" in (out / "recipe.env").read_text()
    for split in ("valid", "test"):
        for lang in ("he", "en"):
            assert (out / "tok" / f"{split}.{lang}").read_text() == \
                (out / "corpus" / f"{split}.{lang}").read_text(), \
                f"{split}.{lang} is taken as tokenized, not tokenized again"
    assert (out / "reference" / "test.en").read_text() == (out / "corpus" / "test.en").read_text()
    assert "40 BPE merges" in first.stderr, "MERGES reaches xlpe-prepare"
    assert f"== done: {out}/data-bin/{{text,dpe,xlpe}}" in first.stderr
    assert first.stderr.rstrip().endswith(
        f"gold word alignments of valid and test: {out}/corpus/{{valid,test}}.gold.align")
    assert not temporaries(out), temporaries(out)


def test_without_xlpe_no_preorderer_is_trained(tmp_path):
    env, out = stubs(tmp_path), tmp_path / "out"
    result = recipe(out, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (out / "data-bin" / "dpe" / "train.reorder.he-en.bin").is_file()
    assert not (out / "preorderer.pt").exists()
    assert "the preorderer: not trained" in result.stderr


def test_a_rerun_skips_every_step(prepared):
    out, first, second = prepared
    assert second is not None and second.returncode == 0, (second or first).stderr[-3000:]
    ran = [step for step in re.findall(r"^== (.*): [0-9.]+ s$", second.stderr, re.M)
           if step != "record provenance"]
    assert not ran, f"a rerun on unchanged inputs ran {ran}"
    for step in ("corpus", "tokenize train.he", "learn BPE", "align", "reorder train (dpe)",
                 "fairseq-preprocess"):
        assert f"== {step}: up to date, skipped\n" in second.stderr, step


def test_a_second_run_into_the_same_outdir_is_refused_naming_the_live_holder(tmp_path):
    env, out = stubs(tmp_path), tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        result = recipe(out, env=env)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(
        f"prepare-bible-he-en.sh: error: {out} is in use by another run (pid {holder.pid}, "
        "prepare-bible-he-en.sh write, since "), result.stderr
    assert sorted(os.listdir(out)) == [".xlpe-lock"], "the refused run wrote into OUTDIR"


def start_until_aligning(env, out, mark):
    run = subprocess.Popen(recipe_command(out), stderr=subprocess.PIPE, text=True, env=env,
                           preexec_fn=default_sigint)
    deadline = time.monotonic() + 120
    while not (mark.exists() and mark.read_text()) and run.poll() is None:
        assert time.monotonic() < deadline, "the aligner stub never started"
        time.sleep(0.1)
    assert run.poll() is None, run.stderr.read()
    aligner = int(mark.read_text())
    mark.unlink()
    return run, aligner


def test_a_killed_run_leaves_temporaries_the_next_removes_and_ctrl_c_leaves_none(tmp_path):
    mark, out = tmp_path / "aligning", tmp_path / "out"
    env = real_processes({**stubs(tmp_path, **{"eflomal-align": SLEEPING_STUB}),
                          "STUB_MARK": str(mark)})
    run, aligner = start_until_aligning(env, out, mark)
    run.kill()
    run.communicate(timeout=60)
    joined = [path for path in temporaries(out) if Path(path).name.startswith(".all.")]
    assert joined, "the align step's joined text was expected while it ran"
    run, aligner = start_until_aligning(env, out, mark)
    assert not any(Path(path).exists() for path in joined), "a killed run's files were kept"
    run.send_signal(signal.SIGINT)
    stderr = run.communicate(timeout=60)[1]
    assert run.returncode == 128 + signal.SIGINT, stderr
    assert not alive(aligner), "the step outlived the command"
    assert not temporaries(out), temporaries(out)
