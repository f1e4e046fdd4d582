"""xlpe-evaluate (examples/evaluate.sh execs it): what the shell version could not promise.
Its commands end with it on SIGTERM and Ctrl-C and leave no temporary file; no folder name
reaches a shell, and the names fairseq cannot take are refused in one line before any work; a
read-only corpus is read without a lock; a refusal names the run that holds the lock now; a
link to the corpus is followed to the folder it names; a checkpoint of another model or schedule
than the folder's training is refused; an unfinished training is said to be one.

fairseq-generate is the stub of tests/support/workflow_stubs.py, and the checkpoints hold a
training's settings and no weights; one test decodes nothing but reads a trained tiny
checkpoint."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from evaluation.tiny_checkpoints import session_checkpoints
from support.checkpoint_states import fairseq_state
from support.interrupted_runs import default_sigint
from support.workflow_stubs import (
    fairseq_stub,
    prepared,
    read_only_run,
    stubs,
    trained_checkpoint,
)
from warm_python import real_processes
from xlpe_fairseq.io.provenance import record_corpus, write_record

ROOT = Path(__file__).resolve().parents[2]
EVALUATE = ROOT / "examples" / "evaluate.sh"


def evaluate(*args, env=None, cwd=None, **kwargs):
    return subprocess.run(["bash", str(EVALUATE), *map(str, args)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, cwd=cwd, **kwargs)


def checkpoint_folder(path, model="dpe", schedule="dpe-iwslt", checkpoints=("checkpoint_best.pt",)):
    path.mkdir(parents=True)
    (path / "schedule.env").write_text(f"SCHEDULE={schedule}\nTRAINED_MODEL={model}\n")
    for name in checkpoints:
        trained_checkpoint(path / name, model, schedule)
    return path


def a_dead_pid():
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def gone(pid):
    """The process has ended (a zombie left to a container's init counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_decoding_in_its_own_group_and_leaves_no_temporary(tmp_path, signum):
    env = stubs(tmp_path)
    fairseq_stub(env, "generate", f"open({str(tmp_path / 'generate.pid')!r}, 'w').write("
                 "str(os.getpid()))\ntime.sleep(300)\n")
    out, folder = prepared(tmp_path / "out"), checkpoint_folder(tmp_path / "ck")
    run = subprocess.Popen(["bash", str(EVALUATE), str(out), str(folder), "--average", "0"],
                           env=real_processes({**os.environ, **env}), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    pid_file = tmp_path / "generate.pid"
    for _ in range(600):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        time.sleep(0.1)
    generate = int(pid_file.read_text())
    assert os.getpgid(generate) == generate != os.getpgid(run.pid), (
        "fairseq-generate runs in a process group of its own")
    assert [name for name in os.listdir(folder) if name.startswith(".generate-test.out.")]
    run.send_signal(signum)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr, stderr
    for _ in range(100):
        if gone(generate):
            break
        time.sleep(0.1)
    assert gone(generate), f"fairseq-generate (pid {generate}) outlived evaluate.sh"
    assert sorted(os.listdir(folder)) == [".xlpe-lock", "checkpoint_best.pt", "generate-test.log",
                                          "schedule.env"], "no temporary file, no output"


def test_a_temporary_left_by_a_killed_run_is_removed_by_the_next(tmp_path):
    env = stubs(tmp_path)
    out, folder = prepared(tmp_path / "out"), checkpoint_folder(tmp_path / "ck")
    stale = folder / f".generate-test.out.{a_dead_pid()}.x1y2z3"
    stale.write_text("S-0\tle\n")
    result = evaluate(out, folder, "--average", "0", env=env)
    assert result.returncode == 0, result.stderr
    assert not stale.exists(), "the dead run's partial output is removed"
    assert (folder / "generate-test.out").exists()


@pytest.mark.parametrize("name", ["it's", "a]b", "$x", "sp ace/$(touch PWNED)", "`touch PWNED`",
                                  "-dash"])
def test_folder_names_reach_no_shell(tmp_path, name):
    env = stubs(tmp_path)
    out = prepared(tmp_path / name / "out")
    folder = checkpoint_folder(tmp_path / name / "ck")
    result = evaluate("--average", "0", "--", os.path.relpath(out, tmp_path),
                      os.path.relpath(folder, tmp_path), env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not list(tmp_path.rglob("PWNED")) and not Path("PWNED").exists(), "a name ran"
    calls = (tmp_path / "calls").read_text()
    assert f"fairseq-generate {out}/data-bin/dpe " in calls, calls
    assert (folder / "generate-test.out").exists()


@pytest.mark.parametrize("name, says", [("new\nline", "has a line break in its name"),
                                        ("co:lon", "has ':' in its name")])
@pytest.mark.parametrize("which", ["DATA", "SAVE_DIR"])
def test_a_folder_name_fairseq_cannot_take_is_refused_before_any_work(tmp_path, name, says,
                                                                       which):
    env = stubs(tmp_path)
    out = prepared(tmp_path / (name if which == "DATA" else "out"))
    folder = checkpoint_folder(tmp_path / (name if which == "SAVE_DIR" else "ck"))
    before = sorted(os.listdir(folder))
    result = evaluate(out, folder, env=env)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert says in result.stderr, result.stderr
    assert sorted(os.listdir(folder)) == before and not (tmp_path / "calls").exists()
    assert not (out / ".xlpe-lock").exists()


def test_a_read_only_corpus_is_read_without_a_lock(tmp_path):
    env = stubs(tmp_path)
    out, folder = prepared(tmp_path / "out"), checkpoint_folder(tmp_path / "ck")
    result = subprocess.run(read_only_run("evaluate", "evaluate.sh", out, out, folder,
                                          "--average", "0"), capture_output=True, text=True,
                            env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    assert not (out / ".xlpe-lock").exists(), "nothing is written into a read-only corpus"
    assert (folder / "generate-test.out").exists() and (folder / ".xlpe-lock").exists()


HOLDER = """
import fcntl, os, sys, time
lock = open(sys.argv[1], "a+")
fcntl.flock(lock, fcntl.LOCK_EX)
lock.write(f"pid {os.getpid()}, train.sh write, since 2026-12-01 10:00:00\\n")
lock.flush()
print("held", flush=True)
time.sleep(300)
"""


@pytest.mark.parametrize("overwritten", [False, True])
def test_the_lock_refusal_names_the_live_holder_not_a_run_that_ended(tmp_path, overwritten):
    """A reader that has ended left its line after the holder's, or (as the shell scripts
    write theirs) in place of it: the refusal names the holder, by its line or its process."""
    env = stubs(tmp_path)
    out, folder = prepared(tmp_path / "out"), checkpoint_folder(tmp_path / "ck")
    lock = folder / ".xlpe-lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        dead = a_dead_pid()
        with open(lock, "w" if overwritten else "a") as stream:
            stream.write(f"pid {dead}, evaluate.sh read, since 2026-12-01 11:00:00\n")
        result = evaluate(out, folder, "--average", "0", env=env)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"evaluate.sh: error: {folder} is in use by another run (pid "
                                    f"{holder.pid}, "), result.stderr
    assert ("train.sh write" in result.stderr) != overwritten, result.stderr
    assert f"pid {dead}" not in result.stderr, "a run that has ended holds nothing"
    assert not (tmp_path / "calls").exists()


def test_a_linked_corpus_is_named_by_the_folder_it_links_to(tmp_path):
    env = stubs(tmp_path)
    out, folder = prepared(tmp_path / "real" / "out"), checkpoint_folder(tmp_path / "ck")
    (tmp_path / "corpus").symlink_to(out)
    result = evaluate("corpus", folder, "--average", "0", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"fairseq-generate {out}/data-bin/dpe " in (tmp_path / "calls").read_text()
    # the data-bin moved to another disk and linked back: the same files, as recorded
    moved = tmp_path / "disk" / "data-bin"
    moved.parent.mkdir()
    (out / "data-bin").rename(moved)
    (out / "data-bin").symlink_to(moved)
    result = evaluate(out, folder, "--average", "0", env=env)
    assert result.returncode == 0, result.stderr
    (moved / "dpe" / "test.fr-en.fr.idx").write_text("changed")
    result = evaluate(".", folder, "--average", "0", env=env, cwd=out)
    assert result.returncode == 1 and result.stderr == (
        f"evaluate.sh: error: {out}/data-bin/dpe/test.fr-en.fr.idx: changed since {out} was "
        f"prepared ({out}/provenance.json); rerun the data_prep recipe into it (or prepare "
        "another OUT)\n"), result.stderr
    (moved / "dpe" / "test.fr-en.fr.idx").write_text("")
    (out / "reference" / "valid.en").unlink()
    for data, cwd in (("corpus", tmp_path), (".", out)):
        result = evaluate(data, folder, "--subset", "valid", env=env, cwd=cwd)
        assert result.returncode == 1 and result.stderr == (
            f"evaluate.sh: error: {out}/reference/valid.en: no such file; has the data_prep recipe made the valid "
            f"split of {out}?\n"), result.stderr


@pytest.mark.parametrize("state, refused", [
    (fairseq_state("transformer_reorder_emb", reorder_emb="both"), None),
    (fairseq_state("transformer_reorder_emb_wmt_en_de_big", reorder_emb="both"), None),
    (fairseq_state("transformer"), "saved with --arch transformer, but re-both on the schedule "
     "dpe-iwslt ({folder}/schedule.env) trains with --arch transformer_reorder_emb or "
     "transformer_reorder_emb_wmt_en_de or transformer_reorder_emb_wmt_en_de_big"),
    (fairseq_state("transformer_reorder_emb", reorder_emb="encoder"),
     "saved with --reorder-emb encoder, but re-both"),
    (fairseq_state("transformer_reorder_emb", reorder_emb="both", keep=20, weight_decay=0.0),
     "saved with --keep-interval-updates 20, but re-both on the schedule dpe-iwslt"),
    (fairseq_state("transformer_reorder_emb", reorder_emb="both", metric="bleu"),
     "saved with --best-checkpoint-metric bleu"),
])
def test_a_checkpoint_of_another_model_or_schedule_is_refused(tmp_path, state, refused):
    env = stubs(tmp_path)
    out, folder = prepared(tmp_path / "out"), checkpoint_folder(tmp_path / "ck", "re-both")
    torch.save(state, folder / "checkpoint_best.pt")
    result = evaluate(out, folder, "--average", "0", env=env)
    if refused is None:
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"evaluate.sh: error: {folder}/checkpoint_best.pt: "
                                    f"{refused.format(folder=folder)}"), result.stderr
    assert not (tmp_path / "calls").exists(), "nothing is decoded or recorded"


@pytest.mark.parametrize("state, model, to_pass", [
    (fairseq_state("transformer_dpe"), "transformer", "dpe, the model"),
    (fairseq_state("transformer_wmt_en_de", encoder_layers=6), "dpe",
     "transformer or transformer-deep, the models"),
])
def test_a_checkpoint_of_another_model_than_model_is_refused_naming_the_model_to_pass(
        tmp_path, state, model, to_pass):
    """A folder whose records name no trained model (another recipe's): --model is held to
    the checkpoint, and the refusal names the model it was saved as."""
    env = stubs(tmp_path)
    out, folder = prepared(tmp_path / "out"), tmp_path / "ck"
    folder.mkdir()
    (folder / "schedule.env").write_text("SCHEDULE=dpe-iwslt\n")
    torch.save(state, folder / "checkpoint_best.pt")
    result = evaluate(out, folder, "--model", model, "--average", "0", env=env)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"evaluate.sh: error: {folder}/checkpoint_best.pt: saved "
                                    f"with --arch {state['cfg']['model'].arch}, but --model "
                                    f"{model} trains with"), result.stderr
    assert result.stderr.endswith(f": pass --model {to_pass} it was saved as\n"), result.stderr
    assert not (tmp_path / "calls").exists(), "nothing is decoded"


@pytest.mark.parametrize("recipe, tokenized", [("LOWERCASE=0\n", False),
                                               ("LOWERCASE=0\nTOKENIZED=fr,en\n", True),
                                               ("LOWERCASE=0\nTOKENIZED=fr\n", False),
                                               ("LOWERCASE=1\n", True)])
def test_a_target_tokenized_when_prepared_is_scored_against_its_detokenized_reference(
        tmp_path, recipe, tokenized):
    """xlpe-prepare --tokenized en (or --lowercase): the reference copied is tokenized text,
    which is detokenized as the hypotheses are (the stub's hypotheses are the reference's
    tokens: "... mat ￭." detokenized is "... mat.", which only a detokenized reference
    matches)."""
    env = stubs(tmp_path)
    out, folder = prepared(tmp_path / "out"), checkpoint_folder(tmp_path / "ck")
    (out / "reference" / "test.en").write_text("the cat sat on the mat \uffed.\n",
                                                    encoding="utf-8")
    (out / "recipe.env").write_text(f"SRC=fr\nTGT=en\n{recipe}RAW={out / 'raw'}\n"
                                    "TOKENIZATION=reversible\n")
    record_corpus(str(out), str(out / "raw"), "fr", "en", {}, ["prepare-corpus.sh"])
    result = evaluate(out, folder, "--average", "0", env=env)
    assert result.returncode == 0, result.stderr
    assert (folder / "hypotheses-test.en").read_text(encoding="utf-8") == \
        "the cat sat on the mat.\n"
    scores = json.loads((folder / "bleu-test.json").read_text())
    assert (scores["bleu"] == 100) == tokenized, f"{scores}: the reference detokenized: {tokenized}"


def test_the_finished_trainings_command_says_what_was_given_after_a_double_dash(tmp_path):
    """A training given `-- --keep-interval-updates 8` saved its checkpoints with 8: its record
    says so, and the checkpoint is its own."""
    env = stubs(tmp_path)
    out, folder = prepared(tmp_path / "out"), checkpoint_folder(tmp_path / "ck", "re-both")
    torch.save(fairseq_state("transformer_reorder_emb", reorder_emb="both", keep=8),
               folder / "checkpoint_best.pt")
    write_record(str(folder / "provenance.json"), "training",
                 ["fairseq-train", "--arch", "transformer_reorder_emb", "--reorder-emb", "both",
                  "--keep-interval-updates", "5", "--keep-interval-updates", "8"],
                 model="re-both", schedule="dpe-iwslt")
    result = evaluate(out, folder, "--average", "0", env=env)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return session_checkpoints(tmp_path_factory)


def test_a_trained_transformer_copied_into_a_re_both_folder_is_refused(tmp_path, tiny):
    _, checkpoints = tiny
    env = stubs(tmp_path)
    out, folder = prepared(tmp_path / "out"), checkpoint_folder(tmp_path / "ck", "re-both")
    (folder / "checkpoint_best.pt").write_bytes(checkpoints["untied"].read_bytes())
    result = evaluate(out, folder, "--average", "0", env=env)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "saved with --arch transformer, but re-both on the schedule dpe-iwslt" in result.stderr
    assert not (folder / "bleu-test.json").exists() and not (tmp_path / "calls").exists()


@pytest.mark.parametrize("record, newer, says", [
    (False, None, "holds no record of a finished training"),
    (True, "checkpoint_last.pt", "checkpoint_last.pt is newer than the record of its finished "
     "training"),
    (True, "schedule.env", "schedule.env is newer than the record of its finished training"),
    (True, None, None),
])
def test_an_unfinished_training_is_said_to_be_one(tmp_path, record, newer, says):
    env = stubs(tmp_path)
    out = prepared(tmp_path / "out")
    folder = checkpoint_folder(tmp_path / "ck", checkpoints=("checkpoint_best.pt",
                                                             "checkpoint_last.pt"))
    if record:
        write_record(str(folder / "provenance.json"), "training", ["fairseq-train"],
                     model="dpe", schedule="dpe-iwslt")
        past = time.time() - 60
        for name in ("schedule.env", "checkpoint_best.pt", "checkpoint_last.pt"):
            os.utime(folder / name, (past, past))
        if newer:
            os.utime(folder / newer, (past + 120, past + 120))
    result = evaluate(out, folder, "--average", "0", env=env)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if ": warning: " in line]
    if says is None:
        assert not warnings, result.stderr
        return
    assert len(warnings) == 1 and warnings[0].startswith(f"evaluate.sh: warning: {folder}")
    assert says in warnings[0] and "its checkpoints so far are scored" in warnings[0], warnings


def test_the_module_runs_under_its_own_name(tmp_path):
    result = subprocess.run([sys.executable, "-m", "xlpe_fairseq.workflow.evaluate", "--help"],
                            capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("usage: xlpe-evaluate DATA "), (
        result.stdout + result.stderr)
    result = subprocess.run([sys.executable, "-m", "xlpe_fairseq.workflow.evaluate"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.startswith(
        "xlpe-evaluate: error: usage: xlpe-evaluate DATA ")
