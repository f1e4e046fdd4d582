"""Writing outputs safely: checked before any work, written atomically, temporaries cleaned up.

Outputs (``check_outputs``, ``atomic_output``) are checked before any work: never an input,
never a directory, a device, a FIFO or a socket (a symlink is written through, to the file it
points to), in a directory that can be written. They appear atomically; a temporary file or
folder left by a killed process is removed by the next write of the same output.
"""
import contextlib
import errno
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
    with created_directories(directory, path):
        remove_stale_temporaries(directory, f".{name}.")
        try:
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=_temporary_prefix(real))
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
