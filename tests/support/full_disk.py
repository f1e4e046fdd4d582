"""A full disk for tests.

A test that may mount a small tmpfs (``small_tmpfs``: root with the privilege, as on a
developer's machine) fills a real one; CI runs as root in a container without that privilege,
so the tests that must run everywhere inject the failure instead (``fill_when_opened``): a file
opened for writing whose name matches a pattern is created as usual, but its descriptor is then
/dev/full's, whose every write fails with ENOSPC, as a full disk's writes do. What a command
leaves behind, and says, shows as it would on a full disk.
"""
import contextlib
import errno
import fnmatch
import os
import subprocess

import pytest


def fill_when_opened(monkeypatch, pattern):
    """Every ``os.open`` for writing of a file whose name matches ``pattern`` (fnmatch) gets a
    descriptor that fails every write with ENOSPC (``tempfile.mkstemp`` opens through it)."""
    real_open = os.open

    def opened(path, flags, mode=0o777, *, dir_fd=None):
        descriptor = real_open(path, flags, mode, dir_fd=dir_fd)
        name = os.path.basename(os.fsdecode(path))
        if flags & (os.O_WRONLY | os.O_RDWR) and fnmatch.fnmatch(name, pattern):
            full = real_open("/dev/full", os.O_WRONLY)
            os.dup2(full, descriptor)
            os.close(full)
        return descriptor

    monkeypatch.setattr(os, "open", opened)


@contextlib.contextmanager
def small_tmpfs(folder):
    """A tmpfs of 64 KiB mounted on ``folder`` and filled up; the test is skipped where this
    process may not mount one."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
                             capture_output=True)
    if mounted.returncode:
        pytest.skip("no tmpfs can be mounted here (CI: a container without the privilege)")
    try:
        with open(folder / "filler", "wb", buffering=0) as filler:
            with contextlib.suppress(OSError):
                while True:
                    filler.write(b"\0" * 4096)
        probe = folder / "probe"
        try:
            probe.write_bytes(b"\0" * 4096)
        except OSError as err:
            assert err.errno == errno.ENOSPC, err
        else:
            pytest.fail("the tmpfs took more after it was full")
        probe.unlink(missing_ok=True)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)
