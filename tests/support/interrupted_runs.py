"""Runs stopped by a signal: a child started as a terminal starts it (SIGINT at its default
action, whatever the test run inherited: ``nohup make test &`` and a script's background jobs
ignore it, and a command rightly keeps an ignored signal ignored), a stand-in step that sleeps
until it is stopped, and what must be gone afterwards: its processes and temporary files."""
import os
import signal
import time
from pathlib import Path

from xlpe_fairseq.workflow.steps import TEMPORARY

# a stand-in for one of the commands a run starts: writes its pid to $STUB_MARK, then sleeps
SLEEPING_STUB = """#!{python}
import os, sys, time
with open(os.environ["STUB_MARK"], "w") as mark:
    mark.write(str(os.getpid()))
time.sleep(600)
"""


def default_sigint():
    """``preexec_fn`` of a child that Ctrl-C must end: SIGINT's default action, as a program
    started from a terminal has it, whatever the test runner inherited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def alive(pid):
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat_file:
            return stat_file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def assert_processes_end(pids, what="workers"):
    """Each of ``pids`` ends within 10 s (a survivor is killed, then reported)."""
    deadline = time.monotonic() + 10
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = [pid for pid in pids if alive(pid)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"{what} {survivors} outlived the command"


def temporaries(out):
    """The temporary files of a step (``steps.TEMPORARY``, ``*.tmp``) anywhere under ``out``."""
    return [str(path) for path in Path(out).rglob("*")
            if TEMPORARY.fullmatch(path.name) or path.name.endswith(".tmp")]
