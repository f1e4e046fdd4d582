"""A fairseq command run as a child of an xlpe-* command: launched as the xlpe-* commands are
(``xlpe_fairseq_cli.fairseq``: fairseq's stack's unactionable warnings silenced), its report read
as it comes, shown and logged, with a traceback that one of the plugin's errors ended turned into
that error's one line (``plugin_errors.error_in_report``), as the xlpe-* commands report every
error. A checkpoint that fairseq fails to write (a full disk) is one line naming it too, and its
partial file is removed: fairseq leaves its hidden ``NAME.pt.tmp``, or a truncated copy."""
import collections
import contextlib
import os
import re
import subprocess
import sys

from ..io import InputError, OptionError, open_output
from ..plugin_errors import error_in_report
from ..io.children import end_process_group, start_child

_TRACEBACK = b"Traceback (most recent call last):"
# fairseq's log lines ("2026-12-07 18:04:11 | INFO | ..."): the command goes on after a
# traceback it printed and survived (a DataLoader worker's)
_LOG_LINE = re.compile(rb"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} \| ")
# fairseq's lines around a checkpoint's save (trainer.save_checkpoint), a copy of it that
# failed (checkpoint_utils.save_checkpoint), and a system error's reason in a report
_SAVING = re.compile(r"\| (Saving|Finished saving) checkpoint to (.+)$")
_COPY_FAILED = re.compile(r"Failed to copy (\S+) to (\S+)")
_SYSTEM_ERROR = re.compile(r"\[Errno [0-9]+\] ([^:'\n]+)")
# the report's last lines, where a failed save's reason is
_TAIL = 200


def launched(command):
    """``command`` (``fairseq-train ARGS...``) as the xlpe-* commands' launcher runs it."""
    return [sys.executable, "-m", "xlpe_fairseq_cli.fairseq", *command]


def raise_plugin_error(lines):
    """Raise the plugin's error that ended a fairseq command whose report is ``lines``
    (text), as the InputError or OptionError it was; nothing if none ended it."""
    found = error_in_report(lines)
    if found:
        message, status = found
        raise (OptionError if status == 2 else InputError)(message)


def raise_write_error(lines, log):
    """Raise InputError naming the checkpoint that a fairseq command whose report is ``lines``
    (text) ended failing to write, its partial file removed; nothing if it ended otherwise."""
    saving, start = None, 0
    for number, line in enumerate(lines):
        found = _SAVING.search(line.rstrip("\n"))
        if found:
            saving = found.group(2) if found.group(1) == "Saving" else None
            start = number
    lines = lines[start:]
    copy = next(filter(None, map(_COPY_FAILED.search, reversed(lines))), None)
    if copy:
        path, partial = copy.group(2), copy.group(2)
    elif saving:
        path, partial = saving, saving + ".tmp"
    else:
        return
    with contextlib.suppress(FileNotFoundError):
        os.unlink(partial)
    reasons = [found.group(1) for found in map(_SYSTEM_ERROR.search, lines) if found]
    reason = reasons[-1] if reasons else next(
        (line.strip() for line in reversed(lines) if line.strip()), "no reason given")
    raise InputError(f"{path}: cannot be written ({reason}); fairseq-train stopped there, its "
                     f"whole report: {log}")


def run_with_report(command, log, read=None):
    """Run fairseq's ``command`` (``launched``, in its own process group, ended with this command), its report
    (stdout and stderr) on stdout and appended to ``log``, each line also given to ``read``;
    returns its exit status. A traceback is held back until the command goes on or ends: one
    that the plugin's error ended is raised as that error (the log keeps it whole), one of a
    checkpoint not written as ``raise_write_error``'s line, any other is shown."""
    held, child, tail = [], None, collections.deque(maxlen=_TAIL)
    try:
        with open_output(log, "ab") as report:
            child = start_child(launched(command), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
            for line in child.stdout:
                report.write(line)
                report.flush()
                tail.append(line.decode("utf-8", "replace"))
                if line.startswith(_TRACEBACK) or (held and not _LOG_LINE.match(line)):
                    held.append(line)
                    continue
                _show(held + [line])
                held = []
                if read:
                    read(line.decode("utf-8", "replace"))
            status = child.wait()
    except BaseException:
        if child is not None:
            end_process_group(child)
        raise
    if status:
        raise_plugin_error([line.decode("utf-8", "replace") for line in held])
        raise_write_error(list(tail), log)
    _show(held)
    return status


def _show(lines):
    for line in lines:
        sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
