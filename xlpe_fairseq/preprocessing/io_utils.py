"""Helpers shared by the data-preparation commands.

Atomic output files, input checks that name the file and the 1-based line, chunked
reading of parallel files, and an order-preserving parallel map with a progress bar.

Text is read as strict UTF-8. Python's decoding error knows neither the file nor the line,
so on one the file is scanned again in binary to name the first undecodable byte:
``FILE line N: not UTF-8 (byte 0xNN at column C)``, line and column (in bytes) 1-based.

One rule for lines, the same for counting and for reading: a line ends at ``\\n`` (as ``wc -l``
counts), a ``\\r`` right before it belongs to the line end (CRLF), and any other ``\\r`` is
refused, since text-mode ``open()`` would end a line there and shift every later line against
its partner in a parallel file. A UTF-8 byte-order mark at the start of a file is dropped.

Outputs (``check_outputs``, ``atomic_output``) are checked before any work: never an input,
never a directory, a device, a FIFO or a socket (a symlink is written through, to the file it
points to), in a directory that can be written. They appear atomically, and the commands run
by ``run_command`` remove their temporary files on SIGTERM, SIGHUP and SIGINT too, and the
workers of ``parallel_imap`` never outlive the command.
"""
import argparse
import collections
import contextlib
import ctypes
import glob
import itertools
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from tqdm import tqdm

from ..reordering.reorder_file import ReorderFileError


BYTE_ORDER_MARK = "\ufeff"


class InputError(ValueError):
    """Bad input data; the message names the file and, where it applies, the 1-based line."""


class ToolError(RuntimeError):
    """An external tool (aligner, symmetrizer) failed; the message holds its stderr."""


def default_workers():
    """Cores this process may run on (respects CPU affinity, unlike os.cpu_count)."""
    return len(os.sched_getaffinity(0))


def positive_int(text):
    """argparse type of counts and sizes (workers, threads, chunk sizes): an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def number_type(accepts, description):
    """An argparse type of a float for which ``accepts(value)`` holds, e.g. ``above 0``."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or not accepts(value):
            raise argparse.ArgumentTypeError(f"expected a number {description}, got {text!r}")
        return value
    return parse


def add_parallel_arguments(parser, chunk_size, unit="lines"):
    """``--workers`` and ``--chunk-size``, the options of every command that runs in chunks."""
    parser.add_argument("--workers", type=positive_int, default=default_workers(),
                        help="worker processes (default: all cores)")
    parser.add_argument("--chunk-size", type=positive_int, default=chunk_size,
                        help=f"{unit} per work unit (default: {chunk_size})")


def find_not_utf8(name, lines):
    """InputError locating the first byte of ``lines`` that is not UTF-8, or None.

    ``lines`` are bytes ending in ``\\n``, e.g. a file opened in binary mode; ``name`` names
    it in the message. A multi-byte character never spans lines (no byte of one is 0x0a),
    so a line decodes on its own exactly as it does inside the whole file.
    """
    for lineno, line in enumerate(lines, start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as err:
            return InputError(f"{name} line {lineno}: not UTF-8 "
                              f"(byte 0x{line[err.start]:02x} at column {err.start + 1})")
    return None


def check_utf8(paths):
    """Raise InputError for the first undecodable byte of ``paths``, for files that a
    library (fairseq, fastBPE) reads without naming the file on a decoding error."""
    for path in paths:
        with open(path, "rb") as f:
            error = find_not_utf8(path, f)
        if error is not None:
            raise error


def check_dictionaries(data_bin):
    """check_utf8 of a fairseq data-bin's ``dict.*.txt`` (fairseq reads them itself)."""
    check_utf8(sorted(glob.glob(os.path.join(data_bin, "dict.*.txt"))))


@contextlib.contextmanager
def decoding_errors_named(*paths):
    """Turn a UnicodeDecodeError from reading ``paths`` as text into check_utf8's InputError.

    The first of ``paths`` that holds an undecodable byte is named (with several files read
    together, that need not be the one whose buffer failed first, but the byte is real).
    """
    try:
        yield
    except UnicodeDecodeError:
        check_utf8(paths)
        raise  # the files decode now: they changed while being read


@contextlib.contextmanager
def open_text(path):
    """The whole text of ``path`` (``f.read()``), decoding errors named as in
    decoding_errors_named; line-by-line readers use text_lines."""
    with open(path, encoding="utf-8") as f, decoding_errors_named(path):
        yield f


@contextlib.contextmanager
def text_lines(path):
    """An iterator over the lines of ``path`` without their line end, under the module's line
    rule (lines end at ``\\n`` or ``\\r\\n``, any other ``\\r`` is an InputError naming line and
    byte column; a leading byte-order mark is dropped), decoding errors named."""
    with open(path, encoding="utf-8", newline="\n") as f, decoding_errors_named(path):
        yield _checked_lines(path, f)


def _checked_lines(path, f):
    # (not the utf-8-sig codec: it drops a file of one to two bytes of a byte-order mark,
    # e.g. b"\xef", without a decoding error)
    for lineno, line in enumerate(f, start=1):
        if lineno == 1 and line.startswith(BYTE_ORDER_MARK):
            line = line[1:]
        line = line[:-1] if line.endswith("\n") else line
        line = line[:-1] if line.endswith("\r") else line
        cr = line.find("\r")
        if cr >= 0:
            raise InputError(
                f"{path} line {lineno}: carriage return (\\r) inside the line "
                f"(byte column {len(line[:cr].encode()) + 1}); lines end with \\n or \\r\\n "
                "(for old Mac line ends: tr '\\r' '\\n')")
        yield line


def read_lines(path):
    """All lines of a text file, without their line end; InputError if missing or not UTF-8."""
    require_files([path])
    with text_lines(path) as lines:
        return list(lines)


def check_length(path, lineno, tokens, limit, reader):
    """InputError if line ``lineno`` of ``path``, of ``tokens`` tokens, is longer than ``limit``
    (None: no limit), the most that ``reader`` handles (docs/input-rules.md lists them)."""
    if limit is not None and tokens > limit:
        raise InputError(f"{path} line {lineno}: {tokens} tokens, more than the {limit} "
                         f"that {reader} handles; split or leave out longer sentences")


def require_lines(path, count):
    """InputError unless ``count`` (lines read from ``path``) is at least one."""
    if count == 0:
        raise InputError(f"{path}: no lines (expected one sentence a line)")


def require_files(paths):
    """Raise InputError for the first path that is not an existing file."""
    for path in paths:
        if os.path.isdir(path):
            raise InputError(f"{path}: is a directory, expected a file")
        if not os.path.isfile(path):
            raise InputError(f"{path}: no such file")


def check_not_inputs(outputs, inputs):
    """Refuse to write over an input file, naming both."""
    real_inputs = {os.path.realpath(p): p for p in inputs}
    for out in outputs:
        if os.path.realpath(out) in real_inputs:
            raise InputError(f"{out}: output would overwrite an input file "
                             f"({real_inputs[os.path.realpath(out)]})")


def check_outputs(outputs, inputs=()):
    """Refuse, before any long work, outputs that would overwrite an input or that cannot be
    written (see output_target); probes each directory by creating a file in it."""
    outputs = [out for out in outputs if out]
    check_not_inputs(outputs, inputs)
    seen = {}
    for out in outputs:
        if os.path.realpath(out) in seen:
            raise InputError(f"{out}: given as two outputs ({seen[os.path.realpath(out)]})")
        seen[os.path.realpath(out)] = out
    for out in outputs:
        _check_writable(out, os.path.dirname(output_target(out)))


def check_output_directory(path):
    """check_outputs of an output folder: InputError unless ``path`` is a directory, or can
    be created as one, that can be written."""
    real = os.path.realpath(path)
    if os.path.exists(real) and not os.path.isdir(real):
        raise InputError(f"{path}: not a directory (expected an output folder)")
    _check_writable(path, real)


def _check_writable(name, directory):
    """InputError naming ``name`` unless ``directory``, or the folder it would be created
    in, is a directory that a file can be created in (probed: permissions, read-only
    file systems)."""
    while not os.path.isdir(directory):
        if os.path.exists(directory):
            raise InputError(f"{name}: cannot create it, {directory} is not a directory")
        directory = os.path.dirname(directory)
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".xlpe-probe.")
    except OSError as err:
        raise InputError(f"{name}: cannot write in {directory} ({err.strerror})") from None
    os.close(fd)
    os.unlink(probe)


def output_target(path):
    """The file an output ``path`` will be: a symlink is followed (written through); InputError
    for a directory, something other than a regular file (device, FIFO, socket: replacing
    one, e.g. /dev/null, would break the system), or a parent that is not a directory."""
    real = os.path.realpath(path)
    if os.path.isdir(real):
        raise InputError(f"{path}: is a directory, expected an output file name")
    if os.path.exists(real) and not os.path.isfile(real):
        raise InputError(f"{path}: not a regular file (a device, FIFO or socket); "
                         "outputs are written to regular files only")
    parent = os.path.dirname(real)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise InputError(f"{path}: cannot create it, {parent} is not a directory")
    return real


def count_lines(path):
    """Number of lines of a file (a final line without newline counts)."""
    count = 0
    last = b"\n"
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def check_same_line_count(paths):
    """Raise InputError unless all files have the same number of lines; return that number."""
    require_files(paths)
    counts = {path: count_lines(path) for path in paths}
    if len(set(counts.values())) > 1:
        listing = ", ".join(f"{path}: {n} lines" for path, n in counts.items())
        raise InputError(f"parallel files differ in length ({listing})")
    return next(iter(counts.values()))


def read_parallel_chunks(paths, chunk_size):
    """Yield ``(first_lineno, rows)`` where rows are tuples of stripped lines, one per file.

    ``first_lineno`` is the 1-based line number of the chunk's first row. Reads lazily so
    memory stays bounded by the chunk size. Call check_same_line_count first.
    """
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(open(path, encoding="utf-8", newline="\n"))
                 for path in paths]
        rows = zip(*(_checked_lines(path, f) for path, f in zip(paths, files)))
        lineno = 1
        # only the reading is guarded: errors from the consumer (thrown in at the yield)
        # are not this function's to rename
        while True:
            with decoding_errors_named(*paths):
                chunk = list(itertools.islice(rows, chunk_size))
            if not chunk:
                break
            yield lineno, chunk
            lineno += len(chunk)


def read_chunks(path, chunk_size):
    """Yield ``(first_lineno, lines)`` of one file, lines without their newline."""
    for lineno, rows in read_parallel_chunks([path], chunk_size):
        yield lineno, [row[0] for row in rows]


@contextlib.contextmanager
def atomic_output(path, mode="w"):
    """Open a temporary file next to ``path``; on success move it over ``path``.

    A failed or interrupted step therefore never leaves a half-written output that a
    rerun (or the pipeline's freshness check) would mistake for a finished one. ``path`` is
    checked by output_target; folders created for it are removed again on failure. The
    temporary file's name holds the process id, so that one left by a killed process
    (SIGKILL) is removed by the next write of the same output.
    """
    real = output_target(path)
    directory, name = os.path.split(real)
    prefix = f".{name}."
    with created_directories(directory, path):
        remove_stale_temporaries(directory, prefix)
        try:
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=f"{prefix}{os.getpid()}.")
        except OSError as err:
            raise InputError(f"{path}: cannot write in {directory} ({err.strerror})") from None
        # mkstemp creates the file private (0600); give it the permissions open() would.
        os.chmod(tmp, 0o666 & ~_umask())
        encoding = None if "b" in mode else "utf-8"
        try:
            with os.fdopen(fd, mode, encoding=encoding) as f:
                yield f
            os.replace(tmp, real)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


@contextlib.contextmanager
def atomic_outputs(paths, mode="w"):
    """atomic_output of several files that appear together at the end, or none of them."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(atomic_output(path, mode)) for path in paths]


@contextlib.contextmanager
def created_directories(directory, named=None):
    """Create ``directory`` and missing parents (InputError naming ``named`` if impossible);
    remove the ones created here again if the block fails, leaving no empty folder behind."""
    created = []
    missing = os.path.abspath(directory)
    while not os.path.isdir(missing):
        created.append(missing)
        missing = os.path.dirname(missing)
    try:
        for folder in reversed(created):
            os.mkdir(folder)
    except OSError as err:
        raise InputError(f"{named or directory}: cannot create {folder} ({err.strerror})") from None
    try:
        yield
    except BaseException:
        for folder in created:
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        raise


@contextlib.contextmanager
def temporary_directory(directory, prefix):
    """tempfile.TemporaryDirectory in ``directory`` whose name, ``prefix`` + process id, lets a
    later run remove one left by a killed process (see remove_stale_temporaries)."""
    with created_directories(directory):
        remove_stale_temporaries(directory, prefix)
        with tempfile.TemporaryDirectory(dir=directory, prefix=f"{prefix}{os.getpid()}.") as tmp:
            yield tmp


def remove_stale_temporaries(directory, prefix):
    """Remove ``prefix``PID``.*`` entries of ``directory`` whose process no longer runs."""
    with os.scandir(directory) as entries:
        for entry in entries:
            pid = entry.name[len(prefix):].partition(".")[0]
            if entry.name.startswith(prefix) and pid.isdigit() and not _running(int(pid)):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


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
            for chunk in chunks:
                if len(pending) >= window:
                    yield _collect(pending.popleft(), bar, size)
                with termination_deferred():  # the first submit forks the workers
                    pending.append(executor.submit(func, chunk))
            while pending:
                yield _collect(pending.popleft(), bar, size)
        except BaseException:
            with termination_deferred():
                # stop at once: the running chunks' results are not wanted any more. The
                # workers end first so that shutdown can wait for the executor's manager
                # thread without waiting for their chunks: left running, that thread closes
                # its wake-up pipe while Python 3.11's exit hook may write to it, which
                # prints an OSError traceback after a SIGTERM (a shutdown without waiting
                # drops the thread, so a later one cannot join it)
                for process in set(multiprocessing.active_children()) - before:
                    process.terminate()
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


def _collect(future, bar, size):
    try:
        result = future.result()
    except BrokenProcessPool:
        raise ToolError("a worker process died (killed by a signal, e.g. out of memory); "
                        "run with --workers 1 to see its error") from None
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


class Terminated(SystemExit):
    """SIGTERM, SIGHUP or SIGINT (Ctrl-C) as an exception, so that temporary files and folders
    are removed on the way out; the exit status is the shell's 128 + signal number."""


_deferred_termination = {"depth": 0, "signal": None}


@contextlib.contextmanager
def termination_deferred():
    """Hold a signal that ``run_command`` turns into ``Terminated`` until the block
    ends, then raise it.

    Forking runs Python's at-fork hooks: ``Terminated`` raised inside one is printed and
    dropped (the command would go on and exit 0), and one raised just after the fork leaves a
    worker that nobody terminates.
    """
    _deferred_termination["depth"] += 1
    try:
        yield
    finally:
        _deferred_termination["depth"] -= 1
        signum = _deferred_termination["signal"]
        if not _deferred_termination["depth"] and signum is not None:
            _deferred_termination["signal"] = None
            raise Terminated(128 + signum)


def run_command(main_body, prog):
    """Run a command body, turning bad-input and tool errors into a message and exit status 1
    (argparse keeps status 2 for a wrong command line)."""
    main_pid = os.getpid()

    def terminate(signum, frame):
        if os.getpid() != main_pid:  # a forked worker: die as the signal says
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        if _deferred_termination["depth"]:
            _deferred_termination["signal"] = signum
            return
        raise Terminated(128 + signum)

    # only the main thread may set handlers (a command called from another thread keeps
    # the default action); a signal the caller ignores (nohup's SIGHUP, SIGINT in a background
    # job) stays ignored
    handled = [signum for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
               if threading.current_thread() is threading.main_thread()
               and signal.getsignal(signum) is not signal.SIG_IGN]
    previous = {signum: signal.signal(signum, terminate) for signum in handled}
    try:
        main_body()
    except (InputError, ReorderFileError, ToolError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        sys.exit(1)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
