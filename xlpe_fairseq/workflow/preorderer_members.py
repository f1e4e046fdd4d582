"""Preorderer members trained side by side (PREORDER_JOBS), each in a process of its own:
threads of one process stall beside other work on the same cores, processes do not. A member
is a function call in a spawned interpreter (``multiprocessing``'s spawn: torch's OpenMP
threads, which this process may have run by then, are not safe to fork), its stderr in its
log, its usage logged as a step's when XLPE_STAGE_LOG names a log, its errors reported and
its signals handled as a command's (``io.run_command``), and it ends with this command, even
one killed by SIGKILL (Linux)."""
import ctypes
import multiprocessing
import os
import signal
import sys
import time

from ..io import run_command, termination_deferred
from ..io.stage_usage import measured

# how long a member has to end after SIGTERM before it is killed
END_GRACE_SECONDS = 10
_PR_SET_PDEATHSIG = 1


def start_member(train, settings, log, stage_log, name):
    """A process that calls ``train(**settings)`` (a module-level function, sent by name), its
    stderr appended to ``log``, logged as step ``name`` in ``stage_log`` (None: not logged),
    its start-up included."""
    process = multiprocessing.get_context("spawn").Process(
        target=_member, args=(train, settings, log, stage_log, name, os.getpid(), time.time()))
    with termination_deferred():  # a started member is one this command knows to end
        process.start()
    return process


def _member(train, settings, log, stage_log, name, parent, started):
    # Ctrl-C reaches every process of the terminal's job: this command ends its members
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the command died before the line above
        os._exit(1)
    descriptor = os.open(log, os.O_WRONLY | os.O_APPEND)
    os.dup2(descriptor, sys.stderr.fileno())
    os.close(descriptor)

    def body():
        with measured(stage_log, name, started=started):
            train(**settings)

    run_command(body, "xlpe-preorder-train")


def end_members(processes):
    """End the members of ``processes`` still running: SIGTERM, then SIGKILL after a grace
    period."""
    with termination_deferred():
        running = [process for process in processes if process.exitcode is None]
        for process in running:
            process.terminate()
        for process in running:
            process.join(END_GRACE_SECONDS)
            if process.exitcode is None:
                process.kill()
                process.join()
