"""xlpe-train through examples/train.sh: fairseq-train runs in its own process group and ends
with the command, no folder name reaches a shell, a name fairseq cannot take is refused in one
line, a linked data-bin is resolved, the progress is shown while training, an interrupted
training leaves a folder that xlpe-evaluate calls unfinished, and a read-only corpus is read
without a lock. fairseq-train is a stub here:
what it is given and how it is run is the subject, not training."""
import json
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from support.interrupted_runs import default_sigint
from support.workflow_stubs import fairseq_stub, prepared, read_only_run, stubs
from warm_python import real_processes
from xlpe_fairseq.io import Terminated
from xlpe_fairseq.workflow import fairseq_commands, train as train_workflow
from xlpe_fairseq.workflow.evaluate import unfinished_training

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "examples" / "train.sh"


def fairseq_train_stub(env, body):
    """Replace the stubs' fairseq-train: it records its arguments, process id and process
    group in ARGS.json next to the stubs, then runs ``body``."""
    record = Path(env["PYTHONPATH"].split(os.pathsep)[0]).parent / "ARGS.json"
    fairseq_stub(env, "train",
                 f"json.dump({{'argv': sys.argv[1:], 'pid': os.getpid(), 'pgid': os.getpgid(0)}}, "
                 f"open({str(record)!r}, 'w'))\n{body}\n")
    return record


def train(*args, env, cwd=None):
    return subprocess.run(["bash", str(TRAIN), *map(str, args)], capture_output=True,
                          text=True, env={**os.environ, **env}, cwd=cwd)


def wait_for(path):
    for _ in range(600):
        if path.exists() and path.stat().st_size:
            return json.loads(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} was not written: the stub never started")


def ended(pid):
    for _ in range(300):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_fairseq_train_runs_in_its_own_group_and_ends_with_the_command(tmp_path, signum):
    out, env = prepared(tmp_path / "out"), stubs(tmp_path)
    record = fairseq_train_stub(env, "time.sleep(120)")
    save_dir = tmp_path / "ck"
    process = subprocess.Popen(["bash", str(TRAIN), "transformer", str(out), str(save_dir)],
                               env=real_processes({**os.environ, **env}),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_sigint)
    child = wait_for(record)
    assert child["pgid"] == child["pid"] != os.getpgid(process.pid), (
        "fairseq-train must lead its own process group, apart from the command's")
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signum, stderr
    assert ended(child["pid"]), "fairseq-train outlived the command"
    assert "Traceback" not in stderr, stderr
    # schedule.env written before training, no record of a finished one: evaluation says so
    assert (save_dir / "schedule.env").exists() and not (save_dir / "provenance.json").exists()
    assert "no record of a finished training" in unfinished_training(str(save_dir))


@pytest.mark.parametrize("name", ["with space", "it's", "$x", "$(touch PWNED)"])
def test_no_folder_name_reaches_a_shell(tmp_path, name):
    out, env = prepared(tmp_path / f"out {name}"), stubs(tmp_path)
    record = fairseq_train_stub(env, "")
    save_dir = tmp_path / f"ck {name}"
    result = train("transformer", out, save_dir, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    argv = json.loads(record.read_text())["argv"]
    assert argv[0] == str(out / "data-bin" / "text")
    assert argv[argv.index("--save-dir") + 1] == str(save_dir)
    assert (save_dir / "schedule.env").read_text() == (
        "SCHEDULE=dpe-iwslt\nTRAINED_MODEL=transformer\n")
    record = json.loads((save_dir / "provenance.json").read_text())
    assert (record["kind"], record["data_bin"]) == ("training", str(out / "data-bin" / "text"))
    assert not list(tmp_path.rglob("PWNED")), "a name was run by a shell"


@pytest.mark.parametrize("where", ["out", "ck"])
@pytest.mark.parametrize("bad", ["line\nbreak", "co:lon"])
def test_a_name_fairseq_cannot_take_is_refused_in_one_line_before_any_work(tmp_path, where,
                                                                         bad):
    out = prepared(tmp_path / (f"out {bad}" if where == "out" else "out"))
    save_dir = tmp_path / (f"ck {bad}" if where == "ck" else "ck")
    env = stubs(tmp_path)
    result = train("transformer", out, save_dir, env=env)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("train.sh: error: "), result.stderr
    assert not save_dir.exists() and not (tmp_path / "calls").exists()


@pytest.mark.parametrize("args", [[""], ["transformer", "", "ck"], ["transformer", "OUT", ""]])
def test_an_empty_operand_is_a_one_line_usage_error(tmp_path, args):
    result = train(*args, env={}, cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("train.sh: error: '' is not a "), result.stderr
    assert not any(tmp_path.iterdir())


def test_a_linked_data_bin_is_resolved(tmp_path):
    out, env = prepared(tmp_path / "out"), stubs(tmp_path)
    record = fairseq_train_stub(env, "")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "link").symlink_to(out / "data-bin")
    result = train("transformer", "link", "ck", env=env, cwd=tmp_path / "work")
    assert result.returncode == 0, result.stderr
    assert "run the data_prep recipe" not in result.stderr
    assert json.loads(record.read_text())["argv"][0] == str(out / "data-bin" / "text")


def test_the_progress_is_shown_while_training(tmp_path):
    out, env = prepared(tmp_path / "out"), stubs(tmp_path)
    fairseq_train_stub(env, "for update in (2, 4, 6):\n"
                       "    print(f'epoch 001:  {update} / 6 loss=1.0, num_updates={update}, "
                       "ups=1.0', flush=True)\n    time.sleep(0.2)")
    save_dir = tmp_path / "ck"
    result = train("transformer", out, save_dir, "--max-update", "30", env=env)
    assert result.returncode == 0, result.stderr
    progress = [line for line in result.stderr.splitlines() if line.startswith("train.sh: update ")]
    assert progress[0] == "train.sh: update 2/30", result.stderr
    assert progress[2].startswith("train.sh: update 6/30, ") and progress[2].endswith(" left"), (
        progress)
    assert "updates/s, about " in progress[2], progress
    assert "--log-interval 2, the checkpoint interval" in result.stderr, (
        "a checkpoint interval under fairseq's 100 updates logs at each checkpoint")
    assert "num_updates=6" in result.stdout, "fairseq-train's report on stdout"
    assert "num_updates=6" in (save_dir / "train.log").read_text()


def test_the_dry_run_logs_every_checkpoint_interval_and_every_10_updates_on_the_cpu(tmp_path):
    out = prepared(tmp_path / "out")
    result = train("transformer", out, tmp_path / "ck", "--max-update", "30", "--dry-run",
                   env={"CUDA_VISIBLE_DEVICES": ""})
    command = shlex.split(result.stdout)
    assert command[command.index("--log-interval") + 1] == "2", result.stdout
    result = train("transformer", out, tmp_path / "ck", "--dry-run",
                   env={"CUDA_VISIBLE_DEVICES": ""})
    command = shlex.split(result.stdout)
    assert command[command.index("--log-interval") + 1] == "10", (
        "on the CPU, a rate within the first minute, not at update 100")
    assert "(--log-interval 10, on the CPU)" in result.stderr


def test_the_model_is_named_one_way(tmp_path):
    out = prepared(tmp_path / "out")
    result = train("transformer", out, tmp_path / "ck", "--model", "dpe", "--dry-run", env={})
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "the model is the first operand, not --model" in result.stderr
    assert "MODEL DATA_DIR CHECKPOINT_DIR" in result.stderr


@pytest.mark.parametrize("restart", [[], ["--restart"]])
def test_a_stopped_training_says_what_was_saved_and_the_command_that_resumes(
        tmp_path, monkeypatch, capsys, restart):
    """fairseq-train's report read as it comes, then SIGTERM: the last line names the update
    checkpoint_last.pt holds and the command again, without --restart (which would set the
    run aside)."""
    out, save_dir = prepared(tmp_path / "out"), tmp_path / "ck"

    def report_then_sigterm(command, log, read):
        for line in ("2026-12-07 18:04:11 | INFO | fairseq.trainer | begin training epoch 1",
                     f"Saved checkpoint {save_dir}/checkpoint_1_20.pt (epoch 1 @ 20 updates, "
                     "score 9.0) (writing took 0.1 seconds)", "epoch 001 | num_updates 24"):
            read(line)
        raise Terminated(143)

    monkeypatch.setattr(fairseq_commands, "run_with_report", report_then_sigterm)
    with pytest.raises(Terminated):
        train_workflow.main(["transformer", str(out), str(save_dir), "--max-update", "300",
                             *restart])
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == (f"xlpe-train: stopped by SIGTERM at update 24/300; saved: update 20 in "
                    f"{save_dir}/checkpoint_last.pt (the 4 updates since are lost); resume: "
                    f"xlpe-train transformer {out} {save_dir} --max-update 300")


def test_a_read_only_corpus_is_trained_on_without_a_lock(tmp_path):
    out, env = prepared(tmp_path / "out"), stubs(tmp_path)
    save_dir = tmp_path / "ck"
    result = subprocess.run(read_only_run("train", "train.sh", out, "transformer", out, save_dir,
                                          "--max-update", "30"), capture_output=True, text=True,
                            env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    assert not (out / ".xlpe-lock").exists(), "nothing is written into a read-only corpus"
    assert (tmp_path / "calls").read_text().startswith(f"fairseq-train {out}/data-bin/text ")
    assert (save_dir / ".xlpe-lock").exists() and (save_dir / "schedule.env").exists()
