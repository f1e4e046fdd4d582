"""External programs (eflomal, fairseq's commands) run as children: each in its own process
group, ended with the command that started it (Ctrl-C, SIGTERM, an error, even SIGKILL on
Linux), never through a shell."""
import ctypes
import os
import shutil
import signal
import subprocess
import sys

from .command import termination_deferred
from .errors import ToolError

# how long a command has to end after SIGTERM before it is killed
END_GRACE_SECONDS = 10
_PR_SET_PDEATHSIG = 1


def _prctl():
    """libc's prctl, looked up before a fork: the child runs only what is loaded already."""
    return ctypes.CDLL(None).prctl if sys.platform.startswith("linux") else None


def _in_own_group(prctl):
    """What the child runs before it executes: its own process group, so that a signal meant
    for the terminal's job reaches the command that started it, which ends the child; and
    SIGTERM when that command dies, even by SIGKILL (Linux)."""
    def start():
        os.setpgid(0, 0)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    return start


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
    own process group; ``options`` go to subprocess.Popen (streams, environment, folder)."""
    command = [program(command[0]) if os.sep not in command[0] else command[0], *command[1:]]
    start = _in_own_group(_prctl())
    with termination_deferred():
        try:
            return subprocess.Popen(command, preexec_fn=start, **options)
        except FileNotFoundError:
            raise ToolError(f"{command[0]}: no such command; is the environment with "
                            "xlpe-fairseq and fairseq active?") from None


def completed_child(command, **options):
    """Run ``command`` to its end (``start_child``): a ``subprocess.CompletedProcess`` with
    what it wrote to the streams given as ``subprocess.PIPE``. On any way out of this command
    (a signal, an error) the child's process group is ended: SIGTERM, then SIGKILL for what is
    left after a grace period."""
    child = None
    try:
        child = start_child(command, **options)
        stdout, stderr = child.communicate()
        return subprocess.CompletedProcess(command, child.returncode, stdout, stderr)
    except BaseException:
        if child is not None:
            end_process_group(child)
        raise


def run_child(command, **options):
    """``completed_child``'s exit status."""
    return completed_child(command, **options).returncode


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


def exit_status(returncode):
    """A child's return code as a shell's exit status (128 + N for a signal N)."""
    return returncode if returncode >= 0 else 128 - returncode
