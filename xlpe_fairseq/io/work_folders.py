"""The folders a run writes into, checked before anything is written: an empty name, ``/``, a
system folder or a folder below one, an existing file, or a folder that cannot be written is
refused in one line (``xlpe-provenance folder`` for the shell scripts)."""
import os

from .errors import InputError

# top-level folders of the system: no run writes into them or below them
SYSTEM_FOLDERS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
                  "/proc", "/run", "/sbin", "/sys", "/usr", "/var")
# below these a user's folder can live (e.g. /var/tmp, /usr/local/src)
USER_FOLDERS_BELOW = ("/var/tmp", "/var/lib", "/usr/local", "/run/user")


def check_work_folder(path, what, writable=True):
    """Refuse, before anything is written, a folder a run would write into that cannot be
    meant: an empty name, ``/``, a system folder or a folder below one, an existing file, and
    (``writable``) one that cannot be written. A folder only read (a corpus, which may be
    read-only) need not be writable. Returns the folder's absolute path."""
    if not path:
        raise InputError(f"'': an empty name, expected a folder for {what} (an unset variable?)")
    real = os.path.realpath(path)
    if real == "/":
        raise InputError(f"{path}: is the root folder /, expected a folder of your own for {what}")
    for system in SYSTEM_FOLDERS:
        below = real.startswith(system + "/") and not any(
            real == user or real.startswith(user + "/") for user in USER_FOLDERS_BELOW)
        if real == system or below:
            raise InputError(f"{path}: {'is' if real == system else 'is below'} the system "
                             f"folder {system}, expected a folder of your own for {what}")
    if os.path.exists(real) and not os.path.isdir(real):
        raise InputError(f"{path}: is a file, expected a folder for {what}")
    parent = real
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not writable:
        return real
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{path}: cannot be written ({parent} is not a writable folder)")
    return real
