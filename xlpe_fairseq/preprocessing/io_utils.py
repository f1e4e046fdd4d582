"""Helpers shared by the data-preparation commands.

Atomic output files, input checks that name the file and the 1-based line, chunked
reading of parallel files, and an order-preserving parallel map with a progress bar.

Text is read as strict UTF-8. Python's decoding error knows neither the file nor the line,
so on one the file is scanned again in binary to name the first undecodable byte:
``FILE line N: not UTF-8 (byte 0xNN at column C)``, line and column (in bytes) 1-based.
"""
import collections
import contextlib
import glob
import itertools
import multiprocessing
import os
import sys
import tempfile

from tqdm import tqdm

from ..reordering.reorder_file import ReorderFileError


class InputError(ValueError):
    """Bad input data; the message names the file and, where it applies, the 1-based line."""


class ToolError(RuntimeError):
    """An external tool (aligner, symmetrizer) failed; the message holds its stderr."""


def default_workers():
    """Cores this process may run on (respects CPU affinity, unlike os.cpu_count)."""
    return len(os.sched_getaffinity(0))


def add_parallel_arguments(parser, chunk_size, unit="lines"):
    """``--workers`` and ``--chunk-size``, the options of every command that runs in chunks."""
    parser.add_argument("--workers", type=int, default=default_workers(),
                        help="worker processes (default: all cores)")
    parser.add_argument("--chunk-size", type=int, default=chunk_size,
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
    """``open(path, encoding="utf-8")``, with decoding errors named as in decoding_errors_named."""
    with open(path, encoding="utf-8") as f, decoding_errors_named(path):
        yield f


def read_lines(path):
    """All lines of a text file, without their newline; InputError if missing or not UTF-8."""
    require_files([path])
    with open_text(path) as f:
        return [line.rstrip("\n") for line in f]


def require_files(paths):
    """Raise InputError for the first path that is not an existing file."""
    for path in paths:
        if not os.path.isfile(path):
            raise InputError(f"{path}: no such file")


def check_not_inputs(outputs, inputs):
    """Refuse to write over an input file."""
    real_inputs = {os.path.realpath(p) for p in inputs}
    for out in outputs:
        if os.path.realpath(out) in real_inputs:
            raise InputError(f"{out}: output would overwrite an input file")


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
    files = [open(path, encoding="utf-8") for path in paths]
    try:
        rows = zip(*((line.rstrip("\n") for line in f) for f in files))
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
    finally:
        for f in files:
            f.close()


def read_chunks(path, chunk_size):
    """Yield ``(first_lineno, lines)`` of one file, lines without their newline."""
    for lineno, rows in read_parallel_chunks([path], chunk_size):
        yield lineno, [row[0] for row in rows]


@contextlib.contextmanager
def atomic_output(path, mode="w"):
    """Open a temporary file next to ``path``; on success move it over ``path``.

    A failed or interrupted step therefore never leaves a half-written output that a
    rerun (or the pipeline's freshness check) would mistake for a finished one.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".")
    # mkstemp creates the file private (0600); give it the permissions open() would.
    os.chmod(tmp, 0o666 & ~_umask())
    encoding = None if "b" in mode else "utf-8"
    try:
        with os.fdopen(fd, mode, encoding=encoding) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


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
        # the whole chunk iterator ahead in its feeder thread; a window of pending
        # chunks keeps memory bounded while results still come back in input order.
        window = 2 * workers
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            pending = collections.deque()
            for chunk in chunks:
                if len(pending) >= window:
                    yield _collect(pending.popleft(), bar, size)
                pending.append(pool.apply_async(func, (chunk,)))
            while pending:
                yield _collect(pending.popleft(), bar, size)


def _collect(async_result, bar, size):
    result = async_result.get()
    bar.update(size(result))
    return result


def run_command(main_body, prog):
    """Run a command body, turning bad-input and tool errors into a message and exit status 1
    (argparse keeps status 2 for a wrong command line)."""
    try:
        main_body()
    except (InputError, ReorderFileError, ToolError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        sys.exit(1)
