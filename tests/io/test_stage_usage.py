"""One step of data preparation measured: wall and CPU time, peak memory of its largest
process and of its whole process tree, its exit status passed on; a step run inside the
command's process measured from its start; and the recipes' hook."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xlpe_fairseq.io import stage_usage

DATA_PREP = Path(__file__).resolve().parents[2] / "data_prep"
ALLOCATE = "import time; block = bytearray({mib} * 2**20); time.sleep(1.5)"


def logged(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def measure(log, name, *command):
    """The command line as the recipes run it: a fresh Python process (a child forked from a
    large one, pytest's, would count its parent's pages as its own)."""
    return subprocess.run([sys.executable, "-m", "xlpe_fairseq_cli.stage_usage", "--log",
                           str(log), "--name", name, "--interval", "0.1", "--", *command]
                          ).returncode


def test_a_step_logs_its_time_and_the_memory_of_its_largest_process(tmp_path):
    log = tmp_path / "stages.jsonl"
    assert measure(log, "allocate", sys.executable, "-c", ALLOCATE.format(mib=200)) == 0
    [step] = logged(log)
    assert step["step"] == "allocate" and step["status"] == 0, step
    assert abs(step["started"] - time.time()) < 60, "the start, in seconds since the epoch"
    assert 1.4 < step["wall_s"] < 30, step
    assert step["max_rss_mib"] >= 200, f"a process that held 200 MiB logged {step}"
    assert step["tree_peak_mib"] >= 150, f"the sampled tree missed the 200 MiB: {step}"
    assert 0 <= step["cpu_s"] < step["wall_s"], "a sleeping step costs little CPU time"


def test_the_tree_counts_workers_that_run_at_once(tmp_path):
    """Two workers of 150 MiB each at the same time: the step needed 300, its largest
    process alone 150."""
    log = tmp_path / "stages.jsonl"
    worker = ALLOCATE.format(mib=150)
    script = ("import subprocess, sys; "
              f"workers = [subprocess.Popen([sys.executable, '-c', {worker!r}]) for _ in '12']; "
              "[w.wait() for w in workers]")
    assert measure(log, "pool", sys.executable, "-c", script) == 0
    [step] = logged(log)
    assert step["tree_peak_mib"] >= 280, f"two 150 MiB workers at once logged {step}"
    assert 150 <= step["max_rss_mib"] < 280, step


def test_the_exit_status_is_the_commands_and_is_logged(tmp_path):
    log = tmp_path / "stages.jsonl"
    assert stage_usage.main(["--log", str(log), "--name", "fails", "--",
                             sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert logged(log)[0]["status"] == 3


def test_a_missing_command_is_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "xlpe_fairseq_cli.stage_usage", "--log",
                             str(tmp_path / "log"), "--name", "x", "--", "no-such-command-x"],
                            capture_output=True, text=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "no-such-command-x" in result.stderr and "Traceback" not in result.stderr


def run_in_recipe_shell(script, tmp_path, log=True):
    env_log = f"XLPE_STAGE_LOG={tmp_path / 'stages.jsonl'} " if log else ""
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail; source {DATA_PREP}/lib.sh; {env_log}{script}"],
        capture_output=True, text=True,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"})


def test_the_recipes_log_every_timed_step_when_asked(tmp_path):
    result = run_in_recipe_shell(
        f"export XLPE_STAGE_LOG; timed 'tokenize train.en' {sys.executable} -c pass; "
        "f() { true; }; timed 'a function' f", tmp_path)
    assert result.returncode == 0, result.stderr
    steps = logged(tmp_path / "stages.jsonl")
    assert [s["step"] for s in steps] == ["tokenize train.en", "a function"], steps
    assert steps[0]["cpu_s"] is not None and steps[1]["cpu_s"] is None, \
        "a shell function's step has its wall time only"
    assert "== tokenize train.en: " in result.stderr, "the step's time is still shown"


def test_without_the_variable_nothing_is_logged_and_a_failure_still_stops(tmp_path):
    result = run_in_recipe_shell(f"timed ok {sys.executable} -c pass", tmp_path, log=False)
    assert result.returncode == 0 and not (tmp_path / "stages.jsonl").exists()
    failed = run_in_recipe_shell(
        f"export XLPE_STAGE_LOG; timed broken {sys.executable} -c 'raise SystemExit(4)'; "
        "echo after", tmp_path)
    assert failed.returncode == 4 and "after" not in failed.stdout, \
        "a failed step must stop the recipe as it did unmeasured"


# a step in a process that held more before it: its peak is the step's, not the process's
IN_PROCESS = """
import runpy, subprocess, sys
measured = runpy.run_path(sys.argv[2])["measured"]  # without the plugin: a small process
before = bytearray(300 * 2**20)
del before
with measured(sys.argv[1], "small"):
    block = bytearray(20 * 2**20)
with measured(sys.argv[1], "with a child"):
    subprocess.run([sys.executable, "-c", "sum(range(3 * 10**7))"], check=True)
try:
    with measured(sys.argv[1], "fails"):
        raise SystemExit(3)
except SystemExit:
    pass
"""


def test_a_step_in_this_process_is_measured_from_its_start(tmp_path):
    log = tmp_path / "stages.jsonl"
    subprocess.run([sys.executable, "-c", IN_PROCESS, str(log), stage_usage.__file__],
                   check=True)
    small, child, fails = logged(log)
    assert small["step"] == "small" and small["status"] == 0, small
    assert small["max_rss_mib"] < 300, (
        f"the process's peak before the step was logged as the step's: {small}")
    assert child["cpu_s"] > 0.5, f"the step's child's CPU time was not counted: {child}"
    assert fails["status"] == 3, fails


def test_without_a_log_a_step_in_this_process_logs_nothing(tmp_path):
    with stage_usage.measured(None, "step"):
        pass
    with pytest.raises(ValueError):
        with stage_usage.measured(None, "step"):
            raise ValueError("the step's error goes on")
    assert not list(tmp_path.iterdir())


def test_a_process_started_for_a_step_logs_it_from_its_start(tmp_path):
    """A preorderer member: a process of its own, its start-up (the imports) part of the
    step."""
    log = tmp_path / "stages.jsonl"
    started = time.time() - 5.0
    with stage_usage.measured(str(log), "member", started=started):
        pass
    [step] = logged(log)
    assert step["started"] == round(started, 2) and step["wall_s"] >= 5.0, step
    assert step["cpu_s"] > 0.1, f"the process's CPU time since it started: {step}"
