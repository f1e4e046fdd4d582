"""The ordered parallel map: results in order, no thread or worker left, a dead worker an error."""
import os
import signal
import struct
import sys
import threading
import time

import pytest

from xlpe_fairseq.io.errors import ToolError
from xlpe_fairseq.io.workers import child_processes, parallel_imap


def children_left(before):
    """This process's children that ``before`` did not hold: the pool's workers, if any are
    left (a test process may have others, such as the end-to-end tests' fork server)."""
    return sorted(set(child_processes()) - before)


def _square_all(chunk):
    return [x * x for x in chunk]


@pytest.mark.parametrize("workers", [1, 2])
def test_parallel_imap_preserves_order(workers):
    chunks = [list(range(k, k + 3)) for k in range(0, 30, 3)]
    results = list(parallel_imap(_square_all, iter(chunks), workers, total=30))
    assert [x for chunk in results for x in chunk] == [x * x for x in range(30)]


def _slow_square_all(chunk):
    time.sleep(0.2)
    return _square_all(chunk)


def test_parallel_imap_stopped_early_leaves_no_thread_or_worker():
    """A command that stops reading (an error, a signal) must not leave the pool's manager
    thread behind: Python 3.11's exit hook then writes to its closed wake-up pipe and prints
    an OSError traceback."""
    threads_before = set(threading.enumerate())
    children_before = set(child_processes())
    results = parallel_imap(_slow_square_all, iter([[k] for k in range(20)]), 2)
    assert next(results) == [0]
    results.close()
    left = [thread.name for thread in set(threading.enumerate()) - threads_before
            if not thread.daemon]
    assert left == [], f"threads still running after the pool stopped: {left}"
    assert children_left(children_before) == [], "workers still running after the pool stopped"


def _die(chunk):
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_that_dies_is_an_error_not_a_hang():
    signal.alarm(120)  # a hang fails the test instead of the whole run
    try:
        with pytest.raises(ToolError, match="a worker process died"):
            list(parallel_imap(_die, iter([[1], [2], [3]]), 2))
    finally:
        signal.alarm(0)


def _deaf_to_sigterm(chunk):
    """A worker that never acts on SIGTERM, as one blocked in C on a lock it inherited."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(60)
    return chunk


def assert_stops_at_once(func, chunks, waited_for):
    """The command stops (KeyboardInterrupt from its input) while workers run ``func``: the
    pool ends within 30 s, not after ``waited_for``, and leaves no worker."""
    signal.alarm(60)  # a hang fails the test instead of the whole run
    try:
        before = set(child_processes())
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            list(parallel_imap(func, chunks, 2))
        assert time.monotonic() - started < 30, f"the pool waited for {waited_for}"
        assert children_left(before) == [], "workers still running after the pool stopped"
    finally:
        signal.alarm(0)


def test_a_worker_deaf_to_sigterm_is_killed_when_the_command_stops():
    def chunks():
        yield [0]
        yield [1]
        time.sleep(1)  # both workers ignore SIGTERM by now
        raise KeyboardInterrupt

    assert_stops_at_once(_deaf_to_sigterm, chunks(), "its deaf workers")


def _half_a_result_then_wait(chunk):
    """A worker stopped while it sends a large result: the results pipe holds half a message."""
    results = sys._getframe(1).f_locals["result_queue"]  # concurrent.futures' worker loop
    results._writer._send(struct.pack("!i", 1 << 20) + b"x" * 100)
    time.sleep(60)
    return chunk


def test_a_worker_stopped_in_the_middle_of_a_result_does_not_hang_the_command():
    def chunks():
        yield [0]
        time.sleep(1)  # the worker has sent half its result by now
        raise KeyboardInterrupt

    assert_stops_at_once(_half_a_result_then_wait, chunks(), "the rest of the result")


def _half_a_result_then_die(chunk):
    """Chunk [0]: a worker killed (e.g. by the OOM killer) while it sends a large result, half
    of it in the results pipe; the other worker lives on with its chunk."""
    if chunk == [0]:
        results = sys._getframe(1).f_locals["result_queue"]  # concurrent.futures' worker loop
        results._writer._send(struct.pack("!i", 1 << 20) + b"x" * 100)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)
    return chunk


def test_a_worker_that_dies_in_the_middle_of_a_result_is_an_error_not_a_hang():
    signal.alarm(60)  # a hang fails the test instead of the whole run
    try:
        before = set(child_processes())
        started = time.monotonic()
        with pytest.raises(ToolError, match="a worker process died"):
            list(parallel_imap(_half_a_result_then_die, iter([[0], [1]]), 2))
        assert time.monotonic() - started < 30, \
            "the pool waited for the rest of the dead worker's result, or for the live worker"
        assert children_left(before) == [], "workers still running after the pool stopped"
    finally:
        signal.alarm(0)
