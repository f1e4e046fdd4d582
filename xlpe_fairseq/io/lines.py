"""Reading and checking input text: UTF-8, one line rule, line counts, chunks of parallel files.

Text is read as strict UTF-8. Python's decoding error knows neither the file nor the line,
so on one the file is scanned again in binary to name the first undecodable byte:
``FILE line N: not UTF-8 (byte 0xNN at column C)``, line and column (in bytes) 1-based.

One rule for lines, the same for counting and for reading: a line ends at ``\\n`` (as ``wc -l``
counts), a ``\\r`` right before it belongs to the line end (CRLF), and any other ``\\r`` is
refused, since text-mode ``open()`` would end a line there and shift every later line against
its partner in a parallel file. A UTF-8 byte-order mark at the start of a file is dropped.
"""
import codecs
import contextlib
import glob
import itertools
import os
import re
import sys

from .errors import InputError


BYTE_ORDER_MARK = "\ufeff"


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
            return _not_utf8(name, lineno, line, err)
    return None


def _not_utf8(name, lineno, line, err):
    return InputError(f"{name} line {lineno}: not UTF-8 "
                      f"(byte 0x{line[err.start]:02x} at column {err.start + 1})")


def check_utf8(paths):
    """Raise InputError for the first undecodable byte of ``paths``, for files that a
    library (fairseq, fastBPE) reads without naming the file on a decoding error."""
    for path in paths:
        with open(path, "rb") as f:
            error = find_not_utf8(path, f)
        if error is not None:
            raise error


# a carriage return that does not end a line (a line end of old Macs): refused by the line rule
_LONE_CR = re.compile(rb"\r(?=[^\n])")


def check_text(paths):
    """InputError for the first line of ``paths`` that the line rule refuses (not UTF-8, a
    carriage return inside a line), found before a command writes anything: each file is
    scanned in large blocks, and read line by line only to name the line."""
    for path in paths:
        decoder = codecs.getincrementaldecoder("utf-8")()
        ended_in_cr = False
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                try:
                    decoder.decode(block)
                except UnicodeDecodeError:
                    _name_the_line(path)
                if _LONE_CR.search(block) or (ended_in_cr and not block.startswith(b"\n")):
                    _name_the_line(path)
                ended_in_cr = block.endswith(b"\r")
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                _name_the_line(path)


def _name_the_line(path):
    """Raise the InputError that reading ``path`` under the line rule raises."""
    with text_lines(path) as lines:
        for _ in lines:
            pass
    raise InputError(f"{path}: changed while it was read")


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


def stdin_lines():
    """The lines of standard input as text_lines gives a file's, each as soon as it is read:
    stdin is read as bytes and decoded line by line, so that an undecodable byte is named
    (``<stdin> line N: not UTF-8 ...``; stdin cannot be read again to find it)."""
    return _checked_lines("<stdin>", _decoded_lines("<stdin>", sys.stdin.buffer))


def _decoded_lines(name, binary_lines):
    for lineno, line in enumerate(binary_lines, start=1):
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as err:
            raise _not_utf8(name, lineno, line, err) from None


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
        if not os.fspath(path):
            raise InputError("'': an empty name, expected an input file")
        if os.path.isdir(path):
            raise InputError(f"{path}: is a directory, expected a file")
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file")
        # inputs are read more than once (counted, then read; checked, then handed to a tool)
        if not os.path.isfile(path):
            raise InputError(f"{path}: not a regular file (a pipe, process substitution or "
                             "device, which can be read only once); save it to a file first")


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
