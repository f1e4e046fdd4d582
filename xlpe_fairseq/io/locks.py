"""Folder locks: one run writes a folder, or any number of runs read it, never both.

The lock is ``FOLDER/.xlpe-lock``, held with ``flock``: the kernel releases it when its
process ends, however it ends, and a shell takes part with ``flock -s``/``-x`` on the file.
Each holder writes a line ``pid N, PROG MODE, since TIME`` into the file; a run refused names
the runs that hold the lock now, the live ones only (a reader that has ended may have left its
line behind).
"""
import fcntl
import os
import time

from .errors import InputError
from .outputs import process_running
from .work_folders import check_work_folder

LOCK_NAME = ".xlpe-lock"
# the folders this process holds for writing: a step of the same run claims them again
_WRITING = set()


class FolderInUse(InputError):
    """Another run holds the folder's lock; the message names it."""


def claim_folder(path, mode, what, prog):
    """Refuse a folder no run may mean (``check_work_folder``), create it (``mode`` "write"),
    and take its lock: exclusive to write, shared to read, held until this process exits (a
    folder this process holds for writing it holds for any claim). A folder this process
    cannot write (a read-only corpus) is read without a lock. Returns
    the folder's real path; InputError naming the live holders when another run has it."""
    real = check_work_folder(path, what, writable=mode == "write")
    if real in _WRITING:
        return real
    if mode == "write":
        try:
            os.makedirs(real, exist_ok=True)
        except OSError as err:
            raise InputError(f"{path}: cannot create it ({err.strerror})") from None
    elif not os.access(real, os.W_OK):
        return real
    lock = os.path.join(real, LOCK_NAME)
    try:
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as err:
        raise InputError(f"{lock}: cannot open the folder's lock ({err.strerror})") from None
    try:
        fcntl.flock(descriptor, (fcntl.LOCK_EX if mode == "write" else fcntl.LOCK_SH)
                    | fcntl.LOCK_NB)
    except BlockingIOError:
        holders = live_holders(lock)
        os.close(descriptor)
        holders = holders or "which one cannot be seen from here"
        raise FolderInUse(f"{path} is in use by another run ({holders}): wait for it to end, "
                         "or use another folder") from None
    # the descriptor stays open, and the lock held, until the process exits
    line = f"pid {os.getpid()}, {prog} {mode}, since {time.strftime('%Y-%m-%d %H:%M:%S')}"
    # a writer is the only holder; readers share the file with the readers still running
    kept = [] if mode == "write" else [
        text for pid, text in _recorded_holders(descriptor) if process_running(pid)]
    os.lseek(descriptor, 0, os.SEEK_SET)
    os.ftruncate(descriptor, 0)
    os.write(descriptor, "".join(f"{text}\n" for text in [*kept, line]).encode("utf-8"))
    if mode == "write":
        _WRITING.add(real)
    return real


def check_not_written(path, what):
    """FolderInUse naming the run that writes ``path`` now (a preparation still making it):
    before a run that reads it looks for files not made yet."""
    lock = os.path.join(path, LOCK_NAME)
    try:
        descriptor = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        holders = live_holders(lock) or "which one cannot be seen from here"
        raise FolderInUse(f"{path} is being written by another run ({holders}): wait for it to "
                          f"end, then use it as {what}") from None
    finally:
        os.close(descriptor)


def live_holders(lock):
    """The runs that hold ``lock`` open now, in words: each one's own line in the file where it
    wrote one, else its process id and program (/proc); a line of a run that has ended is
    not among them."""
    opened = _processes_with_open(lock)
    try:
        with open(lock, "rb") as stream:
            recorded = dict(_parse_holders(stream.read()))
    except OSError:
        recorded = {}
    if not opened:  # no /proc to look into: the lines of the processes still running
        return "; ".join(text for pid, text in sorted(recorded.items()) if process_running(pid))
    # the processes without a line of their own: e.g. a shell holding the lock with flock, or
    # a run whose line a later reader replaced
    return "; ".join([recorded[pid] for pid in sorted(opened) if pid in recorded]
                     or [f"pid {pid}, {_program(pid)}" for pid in sorted(opened)])


def _recorded_holders(descriptor):
    os.lseek(descriptor, 0, os.SEEK_SET)
    content = b""
    while block := os.read(descriptor, 1 << 16):
        content += block
    return _parse_holders(content)


def _parse_holders(content):
    """``(pid, line)`` of each ``pid N, ...`` line of a lock file."""
    holders = []
    for text in content.decode("utf-8", "replace").splitlines():
        number = text.removeprefix("pid ").partition(",")[0]
        if text.startswith("pid ") and number.isdigit():
            holders.append((int(number), text))
    return holders


def _processes_with_open(path):
    """Process ids, other than this one, that have ``path`` open (those /proc lets us see)."""
    try:
        target = os.stat(path)
        pids = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return set()
    found = set()
    for pid in pids:
        if int(pid) == os.getpid():
            continue
        try:
            descriptors = os.listdir(f"/proc/{pid}/fd")
        except OSError:  # ended meanwhile, or another user's
            continue
        for descriptor in descriptors:
            try:
                opened = os.stat(f"/proc/{pid}/fd/{descriptor}")
            except OSError:
                continue
            if (opened.st_dev, opened.st_ino) == (target.st_dev, target.st_ino):
                found.add(int(pid))
                break
    return found


def _program(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as stream:
            words = stream.read().split(b"\0")
    except OSError:
        return "a process that has ended"
    names = [os.path.basename(word.decode("utf-8", "replace")) for word in words[:2] if word]
    return " ".join(names) or "a process"
