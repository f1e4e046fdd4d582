"""The commands a workflow command runs: each in its own process group, ended with the
workflow command (Ctrl-C, SIGTERM, an error), never through a shell."""
import ctypes
import os
import shutil
import signal
import subprocess
import sys

from ..io import ToolError, termination_deferred

# how long a command has to end after SIGTERM before it is killed
END_GRACE_SECONDS = 10


def _start_in_own_group():
    """Run in the child before it executes: its own process group, so that a signal meant for
    the terminal's job reaches this command, which ends the child; and SIGTERM when this
    command dies, even by SIGKILL (Linux)."""
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def program(name):
    """The path of the program ``name``: on PATH, else beside this Python (the commands of a
    virtual environment that is not activated); ToolError where neither has it."""
    found = shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))
    if found is None:
        raise ToolError(f"{name}: no such command; is the environment with xlpe-fairseq and "
                        "fairseq active?")
    return found


def start_child(command, **options):
    """Start ``command`` (a list of words; no shell; its program found by ``program``) in its
    own process group; ``options`` go to subprocess.Popen (streams, environment)."""
    command = [program(command[0]) if os.sep not in command[0] else command[0], *command[1:]]
    with termination_deferred():
        try:
            return subprocess.Popen(command, preexec_fn=_start_in_own_group, **options)
        except FileNotFoundError:
            raise ToolError(f"{command[0]}: no such command; is the environment with "
                            "xlpe-fairseq and fairseq active?") from None


def run_child(command, **streams):
    """Run ``command`` to its end (``start_child``) and return its exit status. On any way out
    of this command (a signal, an error) the child's process group is ended: SIGTERM, then
    SIGKILL for what is left after a grace period."""
    child = None
    try:
        child = start_child(command, **streams)
        return child.wait()
    except BaseException:
        if child is not None:
            end_process_group(child)
        raise


def end_process_group(child):
    """End ``child``'s process group: SIGTERM, then SIGKILL after a grace period."""
    with termination_deferred():
        for signum in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(child.pid, signum)
            except ProcessLookupError:
                break
            try:
                child.wait(timeout=END_GRACE_SECONDS)
                break
            except subprocess.TimeoutExpired:
                continue
        child.wait()


def run_step(command):
    """run_child; a failure ends this command with the child's exit status (it has said why)."""
    status = run_child(command)
    if status:
        raise SystemExit(status if status > 0 else 128 - status)
