"""The workflow commands probed as a hostile user would: a table to start the next round from.

Each probe is a command line and what is set up for it (files, folders, a run that holds a
lock, a full disk, a PATH) -> the exit status, the key words of the one line
``PROG: error: ...`` it must print, and nothing left behind: no output folder, no partial or
temporary file, no input changed (docs/input-rules.md, "The error rule"). Every input a
command reads is checked before it creates its output folder. The probes run in-process
through the entry points setup.py names; the few that need fairseq-train itself (a full disk
while it saves, the plugin's errors under xlpe-train) run it on a tiny corpus at the end.
"""
import fcntl
import importlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
import torch

from support.checkpoint_states import fairseq_state
from support.console_scripts import console_scripts
from support.fairseq_commands import TINY_MODEL, run
from support.full_disk import fill_when_opened, small_tmpfs
from support.parallel_text import sentences, write_raw
from support.text_files import generate_output, text_file
from support.workflow_stubs import prepared
from xlpe_fairseq.data.positions_note import NO_PREORDERER
from xlpe_fairseq.io import run_command
from xlpe_fairseq.io.provenance import record_corpus
from xlpe_fairseq.workflow import pipeline
from xlpe_fairseq.workflow.steps import Steps


def run_main(command, argv):
    """The exit status of a console command run in-process."""
    module, function = console_scripts()[command].split(":")
    main = getattr(importlib.import_module(module), function)
    try:
        return main(argv) or 0
    except SystemExit as exit_info:
        return exit_info.code or 0


def tree(folder):
    """Every entry under ``folder``: a file's bytes, a link's target, a folder as such; the
    folder locks left out (a lock file is how runs take turns, not an output)."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.name == ".xlpe-lock":
            continue
        if path.is_symlink():
            entries[name] = f"-> {os.readlink(path)}"
        elif path.is_dir():
            entries[name] = "folder"
        elif path.is_file():
            entries[name] = path.read_bytes()
    return entries


@dataclass
class Setup:
    """What a probe's setup gets: the test's folder, monkeypatch, and ``hold`` for a lock
    another run would hold (released when the test ends)."""
    tmp: Path
    monkeypatch: pytest.MonkeyPatch
    held: list

    def hold(self, folder, line):
        """``folder``'s lock held to write, as a run would, its line ``line``."""
        folder.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(folder / ".xlpe-lock", os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.write(descriptor, f"pid {os.getpid()}, {line}\n".encode())
        self.held.append(descriptor)


@dataclass
class Probe:
    command: str
    setup: Callable  # Setup -> argv
    status: int
    says: tuple  # words of the error line; "{tmp}" stands for the test's folder


# --- xlpe-prepare: every raw file, OUT's name and the programs, before OUT exists ------------

def raw(setup, **files):
    """A raw corpus (en-de, train/valid/test) under TMP/raw, with ``files`` (NAME=bytes, or a
    callable making NAME) in place of its own; argv into TMP/out."""
    folder = write_raw(setup.tmp / "raw", "en", "de")
    for name, content in files.items():
        path = folder / name.replace("_", ".")
        path.unlink()
        if callable(content):
            content(path)
        else:
            path.write_bytes(content)
    return ["--src", "en", "--tgt", "de", str(folder), str(setup.tmp / "out")]


def lines_of(*lines):
    return b"".join(line + b"\n" for line in lines)


def eight_lines(line=b"the house .", at=None, replaced=b""):
    return lines_of(*[replaced if k == at else line for k in range(8)])


def no_programs(setup):
    """A PATH without the environment, and a Python whose folder has no programs either."""
    (setup.tmp / "empty").mkdir()
    setup.monkeypatch.setenv("PATH", str(setup.tmp / "empty"))
    setup.monkeypatch.setattr(sys, "executable", str(setup.tmp / "empty" / "python3"))
    return raw(setup)


PREPARE = {
    "train not UTF-8": Probe("xlpe-prepare", lambda s: raw(
        s, train_en=lines_of(*[b"the house ."] * 29, b"caf\xe9 .")), 1,
        ("{tmp}/raw/train.en line 30: not UTF-8 (byte 0xe9",)),
    "train with a lone CR": Probe("xlpe-prepare", lambda s: raw(
        s, train_de=lines_of(b"das Haus .", b"ein\rHund .", *[b"das Haus ."] * 28)), 1,
        ("{tmp}/raw/train.de line 2: carriage return",)),
    "train of blank lines only": Probe("xlpe-prepare", lambda s: raw(
        s, train_en=lines_of(*[b" \t"] * 30)), 1, ("{tmp}/raw/train.en", "no line with a word")),
    "test with old Mac line ends": Probe("xlpe-prepare", lambda s: raw(
        s, test_en=b"the house .\r" * 8), 1, ("{tmp}/raw/test.en line 1: carriage return",)),
    "a blank test line": Probe("xlpe-prepare", lambda s: raw(
        s, test_de=eight_lines(b"das Haus .", at=3, replaced=b"   ")), 1,
        ("{tmp}/raw/test.de line 4: empty line",)),
    "a test line of 100k characters": Probe("xlpe-prepare", lambda s: raw(
        s, test_en=eight_lines(at=0, replaced=b"ab " * 33334)), 1,
        ("{tmp}/raw/test.en line 1: 33334 tokens, more than the 1023",)),
    "an empty valid file": Probe("xlpe-prepare", lambda s: raw(s, valid_de=b""), 1,
                                 ("{tmp}/raw/valid.de: empty",)),
    "train a directory": Probe("xlpe-prepare", lambda s: raw(s, train_en=Path.mkdir), 1,
                               ("{tmp}/raw/train.en: is a directory",)),
    "train a FIFO": Probe("xlpe-prepare", lambda s: raw(s, train_de=os.mkfifo), 1,
                          ("{tmp}/raw/train.de: not a regular file",)),
    "':' in OUT": Probe("xlpe-prepare", lambda s: [*raw(s)[:-1], str(s.tmp / "a:b")], 1,
                        ("{tmp}/a:b", "':'")),
    "OUT a file": Probe("xlpe-prepare", lambda s: [*raw(s)[:-1], text_file(s.tmp / "f", [])],
                        1, ("{tmp}/f: is a file",)),
    "no aligner on PATH or beside Python": Probe("xlpe-prepare", no_programs, 1,
                                                 ("eflomal-align not found",)),
    "a bad value": Probe("xlpe-prepare", lambda s: ["--merges", "0", *raw(s)], 2,
                         ("--merges must be a whole number",)),
    "no operands": Probe("xlpe-prepare", lambda s: ["--src", "en", "--tgt", "de"], 2,
                         ("usage: xlpe-prepare",)),
}


# --- xlpe-train and xlpe-evaluate: the corpus, the checkpoint folder, the checkpoint ---------

def being_prepared(setup):
    """An OUT that xlpe-prepare writes now: its lock held, its data-bin not made yet."""
    out = setup.tmp / "out"
    (out / "data-bin" / "text").mkdir(parents=True)
    setup.hold(out, "xlpe-prepare write, since 2026-12-07 10:00:00")
    return out


def without_preorderer(setup):
    out = prepared(setup.tmp / "out")
    (out / "data-bin" / "xlpe" / NO_PREORDERER).write_text(
        "it was prepared without the preorderer (xlpe-prepare --models named no XL PE model)\n")
    return out


def dpe_checkpoint_folder(setup):
    """A folder without schedule.env holding a transformer_dpe checkpoint."""
    folder = setup.tmp / "ck"
    folder.mkdir()
    torch.save(fairseq_state("transformer_dpe"), folder / "checkpoint_best.pt")
    return folder


TRAIN_AND_EVALUATE = {
    "train while xlpe-prepare writes OUT": Probe("xlpe-train", lambda s: [
        "transformer", str(being_prepared(s) / "data-bin"), str(s.tmp / "ck")], 1,
        ("{tmp}/out is being written by another run", "xlpe-prepare write")),
    "evaluate while xlpe-prepare writes OUT": Probe("xlpe-evaluate", lambda s: [
        str(being_prepared(s)), str(s.tmp / "ck"), "--model", "transformer", "--schedule",
        "dpe-iwslt"], 1, ("{tmp}/out is being written by another run", "xlpe-prepare write")),
    "train into OUT itself": Probe("xlpe-train", lambda s: [
        "transformer", str(prepared(s.tmp / "out") / "data-bin"), str(s.tmp / "out")], 1,
        ("{tmp}/out: the checkpoints (CHECKPOINT_DIR) would go into the corpus",)),
    "train into a folder of OUT": Probe("xlpe-train", lambda s: [
        "transformer", str(prepared(s.tmp / "out") / "data-bin"),
        str(s.tmp / "out" / "data-bin" / "text")], 1, ("would go into the corpus",)),
    "evaluate a folder of OUT": Probe("xlpe-evaluate", lambda s: [
        str(prepared(s.tmp / "out")), str(s.tmp / "out" / "ck"), "--model", "transformer",
        "--schedule", "dpe-iwslt"], 1, ("would go into the corpus",)),
    "':' in CHECKPOINT_DIR": Probe("xlpe-train", lambda s: [
        "transformer", str(prepared(s.tmp / "out") / "data-bin"), str(s.tmp / "c:k")], 1,
        ("{tmp}/c:k", "':'")),
    "--sbatch of XL PE without the preorderer": Probe("xlpe-train", lambda s: [
        "xlpe-inxl", str(without_preorderer(s) / "data-bin"), str(s.tmp / "ck"), "--sbatch"],
        1, ("has no valid positions", "without the preorderer")),
    "a dpe checkpoint scored as --model transformer": Probe("xlpe-evaluate", lambda s: [
        str(prepared(s.tmp / "out")), str(dpe_checkpoint_folder(s)), "--model", "transformer",
        "--schedule", "dpe-iwslt", "--average", "0"], 1,
        ("{tmp}/ck/checkpoint_best.pt", "transformer_dpe")),
    "train: an option without its value": Probe("xlpe-train", lambda s: [
        "transformer", str(prepared(s.tmp / "out") / "data-bin"), str(s.tmp / "ck"), "--size"],
        2, ("--size needs a value",)),
    "evaluate: no operands": Probe("xlpe-evaluate", lambda s: [], 2, ("usage: xlpe-evaluate",)),
}


# --- xlpe-study, xlpe-bleu, xlpe-compare ---------------------------------------------------

def study_without_positions(setup):
    data_bin = setup.tmp / "data-bin"
    data_bin.mkdir()
    for lang in ("he", "en"):
        (data_bin / f"dict.{lang}.txt").write_text("a 1\n")
    reference = text_file(setup.tmp / "test.en", ["a house", "a dog"])
    return ["--data-bin", str(data_bin), "--source-lang", "he", "--target-lang", "en",
            "--reference", reference, "--work", str(setup.tmp / "work"), "--models", "dpe",
            "--cpu"]


def scores(setup, *outputs):
    generated = generate_output(setup.tmp / "gen.out", ["a house", "a dog"])
    reference = text_file(setup.tmp / "ref.en", ["a house", "a dog"])
    return ["--generate-output", generated, "--reference", reference, "--target-lang", "en",
            *outputs]


def full_disk_scores(setup):
    fill_when_opened(setup.monkeypatch, ".out.json.*")
    return scores(setup, "--json", str(setup.tmp / "new" / "out.json"), "--detokenized-output",
                  str(setup.tmp / "hypotheses.en"))


def compared(setup, *outputs):
    argv = scores(setup)
    return ["--generated", f"base={argv[1]}", *argv[2:], "--bootstrap-samples", "10", *outputs]


OTHERS = {
    "a dpe row of a study on a data-bin without positions": Probe(
        "xlpe-study", study_without_positions, 1, ("{tmp}/data-bin/train.reorder.he-en.idx",
                                                    "dpe")),
    "xlpe-bleu --json on a full disk": Probe("xlpe-bleu", full_disk_scores, 1,
                                             ("{tmp}/new/out.json: No space left on device",)),
    "xlpe-bleu: one file for two outputs": Probe("xlpe-bleu", lambda s: scores(
        s, "--json", str(s.tmp / "o"), "--detokenized-output", str(s.tmp / "o")), 1,
        ("given as two outputs",)),
    "xlpe-compare: one file for two outputs": Probe("xlpe-compare", lambda s: compared(
        s, "--json", str(s.tmp / "o"), "--markdown", str(s.tmp / "o")), 1,
        ("given as two outputs",)),
}

PROBES = {**PREPARE, **TRAIN_AND_EVALUATE, **OTHERS}


@pytest.mark.parametrize("name", list(PROBES))
def test_a_probe_is_one_line_and_leaves_nothing_behind(name, tmp_path, monkeypatch, capfd):
    probe = PROBES[name]
    held = []
    try:
        argv = probe.setup(Setup(tmp_path, monkeypatch, held))
        before = tree(tmp_path)
        status = run_main(probe.command, argv)
    finally:
        for descriptor in held:
            os.close(descriptor)
    stderr = capfd.readouterr().err
    assert status == probe.status, f"{name}: exit {status}, not {probe.status}:\n{stderr}"
    assert "Traceback" not in stderr, stderr
    last = stderr.splitlines()[-1] if stderr else ""
    assert last.startswith(f"{probe.command}: error: "), f"{name}: no error line:\n{stderr}"
    for words in probe.says:
        assert words.format(tmp=tmp_path) in last, f"{name}: {words!r} not in {last!r}"
    assert tree(tmp_path) == before, f"{name}: {probe.command} wrote or changed files"


def test_every_workflow_command_has_probes():
    probed = {probe.command for probe in PROBES.values()}
    assert {"xlpe-prepare", "xlpe-train", "xlpe-evaluate", "xlpe-study"} <= probed, probed


# --- what a probe cannot show: the write that fails, the programs found ---------------------

def test_a_full_disk_in_the_align_step_is_one_line_naming_the_file(tmp_path, monkeypatch,
                                                                   capfd):
    """The aligner's input is joined from the splits in xlpe-prepare's own process."""
    bpe = tmp_path / "bpe"
    for lang in ("en", "de"):
        text_file(bpe / f"train.{lang}", ["a b", "c d"])
    fill_when_opened(monkeypatch, ".all.*")
    with pytest.raises(SystemExit) as exit_info:
        run_command(lambda: pipeline.align(Steps("xlpe-prepare"), {"WORKERS": "1"}, str(bpe),
                                           "en", "de", ("train",), "align", "align"),
                    "xlpe-prepare")
    stderr = capfd.readouterr().err
    assert exit_info.value.code == 1 and stderr.count("\n") == 1, stderr
    assert stderr.startswith(f"xlpe-prepare: error: {bpe}/.all.en.") and (
        stderr.endswith(": No space left on device\n")), stderr
    assert sorted(p.name for p in bpe.iterdir()) == ["train.de", "train.en"], "a partial file"


def test_a_real_full_disk_is_the_same_line(tmp_path, capfd):
    """Where a tmpfs can be mounted (not in CI's container), a full one: xlpe-bleu's line."""
    argv = scores(Setup(tmp_path, None, []))
    with small_tmpfs(tmp_path / "full") as full:
        before = tree(full)
        status = run_main("xlpe-bleu", [*argv, "--json", str(full / "out.json")])
        stderr = capfd.readouterr().err
        assert status == 1 and stderr.splitlines()[-1] == (
            f"xlpe-bleu: error: {full}/out.json: No space left on device"), stderr
        assert tree(full) == before, "a partial file on the full disk"


def test_the_steps_are_found_beside_python_without_the_environment_on_path(tmp_path,
                                                                            monkeypatch):
    """A virtual environment's commands run from it without being activated."""
    from xlpe_fairseq.io.children import program

    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for name in ("xlpe-tokenize", "xlpe-provenance", "fairseq-preprocess"):
        assert program(name) == os.path.join(os.path.dirname(sys.executable), name)


# --- fairseq-train itself, on a tiny corpus ------------------------------------------------

@pytest.fixture(scope="module")
def tiny_out(tmp_path_factory):
    """An OUT as xlpe-train reads it: 30 training pairs binarized into data-bin/text, its
    record written."""
    out = tmp_path_factory.mktemp("tiny-out")
    raw = out / "raw"
    raw.mkdir()
    for seed, (split, count) in enumerate((("train", 30), ("valid", 4), ("test", 4)), start=1):
        for lang in ("en", "de"):
            (raw / f"{split}.{lang}").write_text("\n".join(sentences(lang, count, seed)) + "\n")
    run("fairseq_cli.preprocess", "--source-lang", "en", "--target-lang", "de", "--trainpref",
        raw / "train", "--validpref", raw / "valid", "--testpref", raw / "test", "--destdir",
        out / "data-bin" / "text", "--workers", "1")
    for name, text in (("bpe/codes", "t h 2\n"), ("recipe.env", f"SRC=en\nTGT=de\nRAW={raw}\n"),
                       ("reference/valid.de", ""), ("reference/test.de", "")):
        (out / name).parent.mkdir(exist_ok=True)
        (out / name).write_text(text)
    record_corpus(str(out), str(raw), "en", "de", {}, ["xlpe-prepare"])
    return out


def train(out, save_dir, *options):
    return subprocess.run(
        [sys.executable, "-m", "xlpe_fairseq.workflow.train", "transformer", out / "data-bin",
         save_dir, "--max-update", "3", *TINY_MODEL, "--num-workers", "0", *options],
        capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})


def test_a_full_disk_while_fairseq_saves_is_one_line_and_no_tmp_is_left(tiny_out, tmp_path):
    """fairseq writes checkpoint_best.pt to checkpoint_best.pt.tmp first; a tiny corpus's
    first save is that one (every update ends an epoch)."""
    save_dir = tmp_path / "ck"
    save_dir.mkdir()
    (save_dir / "checkpoint_best.pt.tmp").symlink_to("/dev/full")
    result = train(tiny_out, save_dir)
    assert result.returncode == 1, result.stderr[-3000:]
    last = result.stderr.splitlines()[-1]
    assert last == (f"xlpe-train: error: {save_dir}/checkpoint_best.pt: cannot be written (No "
                    f"space left on device); fairseq-train stopped there, its whole report: "
                    f"{save_dir}/train.log"), result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    left = sorted(p.name for p in save_dir.iterdir())
    assert left == [".xlpe-lock", "schedule.env", "train.log"], left


def test_the_plugins_error_under_xlpe_train_is_one_line_on_stderr(tiny_out, tmp_path):
    result = train(tiny_out, tmp_path / "ck", "--", "--order-lambda", "2")
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stderr.splitlines()[-1].startswith("xlpe-train: error: --order-lambda"), (
        result.stderr[-3000:])
    assert "Traceback" not in result.stderr + result.stdout
    assert "--order-lambda" not in result.stdout, "the error went to stdout"


def test_on_a_tiny_corpus_the_banner_says_checkpoint_best_is_scored(tiny_out, tmp_path,
                                                                     capfd):
    """30 pairs are one batch: every update ends an epoch, and fairseq saves no numbered
    checkpoint there."""
    status = run_main("xlpe-train", ["transformer", str(tiny_out / "data-bin"),
                                     str(tmp_path / "ck"), "--max-update", "300", "--dry-run"])
    banner = capfd.readouterr().err
    assert status == 0, banner
    assert ("xlpe-evaluate: checkpoint_best.pt, fewer than 2 checkpoints saved: an epoch of "
            "this corpus is 1 update(s)") in banner, banner
    assert "checkpoints averaged" not in banner, banner


HOLDER = """import fcntl, os, sys, time
descriptor = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(descriptor, fcntl.LOCK_EX)
os.write(descriptor, b"pid %d, xlpe-prepare write, since 2026-12-07 10:00:00\\n" % os.getpid())
print("held", flush=True)
time.sleep(60)
"""


def test_a_running_prepare_is_named_with_its_own_line(tmp_path):
    """The probes hold the lock in this process; here another process holds it."""
    out = tmp_path / "out"
    (out / "data-bin" / "text").mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out / ".xlpe-lock")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        result = subprocess.run(
            [sys.executable, "-m", "xlpe_fairseq.workflow.train", "transformer",
             out / "data-bin", tmp_path / "ck"], capture_output=True, text=True)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert (f"{out} is being written by another run (pid {holder.pid}, xlpe-prepare write"
            in result.stderr), result.stderr
    assert not (tmp_path / "ck").exists()
