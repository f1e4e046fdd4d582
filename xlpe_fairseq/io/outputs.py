"""Writing outputs safely: checked before any work, written atomically, temporaries cleaned up.

Outputs (``check_outputs``, ``atomic_output``) are checked before any work: never an input,
never a directory, a device, a FIFO or a socket (a symlink is written through, to the file it
points to), in a directory that can be written. They appear atomically; a temporary file or
folder left by a killed process is removed by the next write of the same output. A write that
fails (a full disk) is an OSError naming the output, which ``run_command`` says in one line,
and leaves no temporary file.
"""
import contextlib
import errno
import io
import os
import shutil
import tempfile

from .errors import InputError


def check_not_inputs(outputs, inputs):
    """Refuse to write over an input file, naming both."""
    real_inputs = {os.path.realpath(p): p for p in inputs}
    for out in outputs:
        if os.path.realpath(out) in real_inputs:
            raise InputError(f"{out}: output would overwrite an input file "
                             f"({real_inputs[os.path.realpath(out)]})")


def check_outputs(outputs, inputs=()):
    """Refuse, before any long work, outputs that would overwrite an input or that cannot be
    written (see output_target); probes each directory by creating the temporary file
    atomic_output would write first."""
    outputs = [out for out in outputs if out is not None]
    check_not_inputs(outputs, inputs)
    seen = {}
    for out in outputs:
        if os.path.realpath(out) in seen:
            raise InputError(f"{out}: given as two outputs ({seen[os.path.realpath(out)]})")
        seen[os.path.realpath(out)] = out
    for out in outputs:
        target = output_target(out)
        _check_writable(out, os.path.dirname(target), target)


def check_output_directory(path):
    """check_outputs of an output folder: InputError unless ``path`` is a directory, or can
    be created as one, that can be written."""
    if not os.fspath(path):
        raise InputError("'': an empty name, expected an output folder")
    real = os.path.realpath(path)
    if os.path.exists(real) and not os.path.isdir(real):
        raise InputError(f"{path}: not a directory (expected an output folder)")
    _check_writable(path, real)


def _temporary_prefix(target):
    """The start of the temporary file's name that atomic_output writes ``target`` under."""
    return f".{os.path.basename(target)}.{os.getpid()}."


def _check_writable(name, directory, target=None):
    """InputError naming ``name`` unless ``directory``, or the folder it would be created
    in, is a directory that a file can be created in (probed with the temporary file that
    atomic_output writes ``target`` under first: permissions, read-only file systems, names
    too long), and the folders to create have names the file system takes."""
    missing = []
    while not os.path.isdir(directory):
        if os.path.exists(directory):
            raise InputError(f"{name}: cannot create it, {directory} is not a directory")
        missing.append(os.path.basename(directory))
        directory = os.path.dirname(directory)
    longest = os.pathconf(directory, "PC_NAME_MAX")
    for folder in missing:
        if len(os.fsencode(folder)) > longest:
            raise InputError(f"{name}: cannot create a folder of a name longer than the "
                             f"{longest} bytes the file system takes")
    prefix = _temporary_prefix(target) if target else ".xlpe-probe."
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=prefix)
    except OSError as err:
        if err.errno == errno.ENAMETOOLONG and target:
            base = len(os.fsencode(os.path.basename(target)))
            # mkstemp adds 8 characters
            allowed = longest - (len(os.fsencode(prefix)) + 8 - base)
            raise InputError(f"{name}: a file name of {base} bytes, longer than the {allowed} "
                             "it may have here (it is written under a longer temporary name "
                             "first)") from None
        raise InputError(f"{name}: cannot write in {directory} ({err.strerror})") from None
    os.close(fd)
    os.unlink(probe)


def output_target(path):
    """The file an output ``path`` will be: a symlink is followed (written through); InputError
    for an empty name, a directory or a name ending in a slash, something other than a regular
    file (device, FIFO, socket: replacing one, e.g. /dev/null, would break the system), or a
    parent that is not a directory."""
    path = os.fspath(path)
    if not path:
        raise InputError("'': an empty name, expected an output file name")
    real = os.path.realpath(path)
    if os.path.isdir(real):
        raise InputError(f"{path}: is a directory, expected an output file name")
    # realpath drops a trailing slash: "new/" would become a file "new"
    if path.endswith(("/", os.sep)):
        raise InputError(f"{path}: names a folder (it ends in a slash), expected an output "
                         "file name")
    if os.path.exists(real) and not os.path.isfile(real):
        raise InputError(f"{path}: not a regular file (a device, FIFO or socket); "
                         "outputs are written to regular files only")
    parent = os.path.dirname(real)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise InputError(f"{path}: cannot create it, {parent} is not a directory")
    return real


class _OutputFile(io.FileIO):
    """The file an output is written to: a write that fails (a full disk, an I/O error) names
    the output, not the hidden temporary file it goes to first (Python's error of a write
    names no file at all)."""

    def __init__(self, descriptor, output):
        super().__init__(descriptor, "wb")
        self.output = output

    def write(self, data):
        try:
            return super().write(data)
        except OSError as err:
            raise OSError(err.errno, err.strerror, self.output) from None


def _stream(descriptor, output, mode):
    """A file object over ``descriptor`` as ``open(..., mode)`` gives one, whose write errors
    name ``output``."""
    buffered = io.BufferedWriter(_OutputFile(descriptor, output))
    return buffered if "b" in mode else io.TextIOWrapper(buffered, encoding="utf-8")


def open_output(path, mode="wb"):
    """``open(path, mode)`` for writing (``w``, ``wb``, ``a``, ``ab``), written in place: for
    files that are not outputs (a log, a temporary file of a step), whose write errors then
    name ``path``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (
        os.O_APPEND if "a" in mode else os.O_TRUNC)
    return _stream(os.open(path, flags, 0o666), os.fspath(path), mode)


class _Temporary:
    """An output's temporary file next to it, its ``stream`` open for writing; ``commit``
    moves it over the output."""

    def __init__(self, path, mode):
        self.path = path
        self.real = output_target(path)
        directory, name = os.path.split(self.real)
        remove_stale_temporaries(directory, f".{name}.")
        try:
            descriptor, self.name = tempfile.mkstemp(dir=directory,
                                                     prefix=_temporary_prefix(self.real))
        except OSError as err:
            raise InputError(f"{path}: cannot write in {directory} ({err.strerror})") from None
        # mkstemp creates the file private (0600); give it the permissions open() would.
        os.chmod(self.name, 0o666 & ~_umask())
        self.stream = _stream(descriptor, os.fspath(path), mode)

    def commit(self):
        try:
            os.replace(self.name, self.real)
        except OSError as err:
            raise OSError(err.errno, err.strerror, os.fspath(self.path)) from None

    def discard(self):
        # close() closes the file also where flushing what is left fails again (a full disk)
        with contextlib.suppress(OSError):
            self.stream.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.name)


@contextlib.contextmanager
def atomic_output(path, mode="w"):
    """Open a temporary file next to ``path``; on success move it over ``path``.

    A failed or interrupted step therefore never leaves a half-written output that a
    rerun (or the pipeline's freshness check) would mistake for a finished one. ``path`` is
    checked by output_target; folders created for it are removed again on failure. The
    temporary file's name holds the process id, so that one left by a killed process
    (SIGKILL) is removed by the next write of the same output. A write that fails (a full
    disk) is an OSError naming ``path``, and leaves nothing.
    """
    with atomic_outputs([path], mode) as (stream,):
        yield stream


@contextlib.contextmanager
def atomic_outputs(paths, mode="w"):
    """atomic_output of several files that appear together at the end, or none of them: each
    one written whole (a full disk found) before any is moved over its output."""
    temporaries = []
    with contextlib.ExitStack() as stack:
        for path in paths:
            stack.enter_context(created_directories(os.path.dirname(output_target(path)),
                                                    path))
        try:
            for path in paths:
                temporaries.append(_Temporary(path, mode))
            yield [temporary.stream for temporary in temporaries]
            for temporary in temporaries:
                temporary.stream.close()
            for temporary in temporaries:
                temporary.commit()
        except BaseException:
            for temporary in temporaries:
                temporary.discard()
            raise


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
            if entry.name.startswith(prefix) and pid.isdigit() and not process_running(int(pid)):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


def process_running(pid):
    """Whether process ``pid`` still runs (another user's counts as running)."""
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
