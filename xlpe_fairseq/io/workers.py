"""An order-preserving parallel map over worker processes that never outlive the command."""
import collections
import ctypes
import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as ResultNotYet
from concurrent.futures.process import BrokenProcessPool

from tqdm import tqdm

from .command import termination_deferred
from .errors import ToolError


def parallel_imap(func, chunks, workers, total=None, desc="", unit="lines", size=len):
    """Apply ``func`` to each chunk in ``workers`` processes, yielding results in order.

    The progress bar advances by ``size(result)`` per chunk.
    ``total`` is the expected number of items over all chunks, for the bar only.
    With one worker everything runs in this process.
    """
    bar = tqdm(total=total, desc=desc, unit=" " + unit, file=sys.stderr,
               mininterval=1.0)
    with bar:
        if workers <= 1:
            for chunk in chunks:
                result = func(chunk)
                bar.update(size(result))
                yield result
            return
        # fork keeps workers cheap (no re-import of the package). Pool.imap would read
        # the whole chunk iterator ahead; a window of pending chunks keeps memory bounded
        # while results still come back in input order. A process pool executor, unlike
        # multiprocessing.Pool, reports a worker that died (a crash, the OOM killer)
        # instead of waiting for its result forever.
        window = 2 * workers
        before = set(multiprocessing.active_children())
        executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                       initializer=_start_worker, initargs=(os.getpid(),))
        try:
            pending = collections.deque()
            processes = set()  # the workers forked so far
            for chunk in chunks:
                if len(pending) >= window:
                    yield _collect(pending.popleft(), bar, size, processes)
                with termination_deferred():  # the first submit forks the workers
                    pending.append(executor.submit(func, chunk))
                processes |= set(multiprocessing.active_children()) - before
            while pending:
                yield _collect(pending.popleft(), bar, size, processes)
        except BaseException:
            with termination_deferred():
                # stop at once: the running chunks' results are not wanted any more. The
                # workers end first so that shutdown can wait for the executor's manager
                # thread without waiting for their chunks: left running, that thread closes
                # its wake-up pipe while Python 3.11's exit hook may write to it, which
                # prints an OSError traceback after a SIGTERM (a shutdown without waiting
                # drops the thread, so a later one cannot join it)
                started = set(multiprocessing.active_children()) - before
                for process in started:
                    process.terminate()
                # a worker blocked in C (on a lock held when it was forked) never runs the
                # handler SIGTERM calls, and shutdown would wait for it forever: SIGKILL
                deadline = time.monotonic() + 3
                for process in started:
                    process.join(timeout=max(0.0, deadline - time.monotonic()))
                    if process.is_alive():
                        process.kill()
                # a worker ended while it sent a result leaves half a message in the results
                # pipe, and the executor's thread would wait for the rest forever: with the
                # workers gone, this process holds the pipe's last write end, and closing it
                # turns the wait into an end of file, which the thread takes for a broken pool
                executor._result_queue._writer.close()
                executor.shutdown(wait=True, cancel_futures=True)
            raise
        executor.shutdown()


_PR_SET_PDEATHSIG = 1


def _start_worker(parent_pid):
    """Worker initializer: Ctrl-C, which reaches every process of the terminal's job, is left
    to the command's process, which ends the workers; and a worker dies with the command's
    process, even one killed by SIGKILL, instead of waiting for work forever (Linux; elsewhere
    only a worker whose parent is already gone exits)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)


_WORKER_DIED = ("a worker process died (killed by a signal, e.g. out of memory); "
                "run with --workers 1 to see its error")
# how long the executor has to report a dead worker as a broken pool before it is taken for
# one that died in the middle of a result
_DEATH_GRACE_SECONDS = 3.0


def _collect(future, bar, size, processes):
    """The result of ``future``; a dead worker among ``processes`` is a ToolError, also when the
    executor cannot tell: a worker that died while it sent a result leaves half a message in
    the results pipe, and the executor's thread waits for the rest for as long as any other
    worker, alive, holds the pipe open."""
    noticed_death = None
    while True:
        try:
            result = future.result(timeout=1.0)
        except BrokenProcessPool:
            raise ToolError(_WORKER_DIED) from None
        except ResultNotYet:
            if noticed_death is None:
                if any(process.exitcode is not None for process in processes):
                    noticed_death = time.monotonic()
            elif time.monotonic() - noticed_death > _DEATH_GRACE_SECONDS:
                raise ToolError(_WORKER_DIED) from None
            continue
        bar.update(size(result))
        return result


def child_processes(parent=None):
    """Process ids of the children of ``parent`` (default: this process), read from /proc;
    empty where there is no /proc."""
    parent = str(os.getpid() if parent is None else parent)
    children = []
    for entry in filter(str.isdigit, os.listdir("/proc") if os.path.isdir("/proc") else []):
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                their_parent = stat.read().rsplit(")", 1)[1].split()[1]
        except OSError:  # it ended meanwhile
            continue
        if their_parent == parent:
            children.append(int(entry))
    return children
