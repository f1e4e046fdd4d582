"""Stop fairseq's batch-prefetch threads before the interpreter finalizes.

With ``--data-buffer-size`` > 0 (fairseq's default is 10) every epoch iterator collates
batches ahead in a ``BackgroundConsumer``, a daemon thread that fairseq never stops or joins.
When training stops in the middle of an epoch (``--max-update``, ``--stop-time-hours``,
early stopping, an exception), that thread is still collating the rest of the epoch when
Python exits. CPython 3.11 ends a daemon thread that asks for the GIL once finalization has
begun with ``pthread_exit``. If the thread is just returning from a torch op that had released
the GIL, the forced unwind crosses a ``noexcept`` C++ frame, and ``std::terminate`` aborts the
process: ``terminate called without an active exception``, exit status 134, after
``done training``.

``atexit`` handlers run after Python has joined the non-daemon threads and before
finalization, while daemon threads still run normally. So the hook registered here asks each
live consumer to stop after the batch it is collating, empties its queue so that its last
``put`` cannot block, and joins it.
"""
import atexit
import logging
import queue
import threading
import time

from fairseq.data.iterators import BackgroundConsumer

logger = logging.getLogger(__name__)

_registered = False


def stop_prefetch_threads(timeout=60.0):
    """Stop and join every live ``BackgroundConsumer``; return those still alive after
    ``timeout`` seconds (a collate that hangs must not hang the exit as well)."""
    consumers = [
        thread for thread in threading.enumerate()
        if isinstance(thread, BackgroundConsumer) and thread.is_alive()
    ]
    for consumer in consumers:
        # the consumer leaves its loop once count >= _max_len, checked after each put
        consumer._max_len = 0
    deadline = time.monotonic() + timeout
    for consumer in consumers:
        while consumer.is_alive() and time.monotonic() < deadline:
            _discard_queued_batches(consumer._queue)
            consumer.join(0.05)
    left = [consumer for consumer in consumers if consumer.is_alive()]
    if left:
        logger.warning(
            "%d batch-prefetch thread(s) still running after %.0f s at exit; the process "
            "may abort during interpreter shutdown", len(left), timeout,
        )
    return left


def _discard_queued_batches(batches):
    while True:
        try:
            batches.get_nowait()
        except queue.Empty:
            return


def stop_prefetch_threads_at_exit():
    """Register ``stop_prefetch_threads`` with ``atexit`` (once per process)."""
    global _registered
    if not _registered:
        atexit.register(stop_prefetch_threads)
        _registered = True
