"""A fairseq command run as a child of an xlpe-* command: launched as the xlpe-* commands are
(``xlpe_fairseq_cli.fairseq``: fairseq's stack's unactionable warnings silenced), its report read
as it comes, shown and logged, with a traceback that one of the plugin's errors ended turned into
that error's one line (``plugin_errors.error_in_report``), as the xlpe-* commands report every
error."""
import re
import subprocess
import sys

from ..io import InputError, OptionError
from ..plugin_errors import error_in_report
from .processes import end_process_group, start_child

_TRACEBACK = b"Traceback (most recent call last):"
# fairseq's log lines ("2026-12-07 18:04:11 | INFO | ..."): the command goes on after a
# traceback it printed and survived (a DataLoader worker's)
_LOG_LINE = re.compile(rb"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} \| ")


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


def run_with_report(command, log, read=None):
    """Run fairseq's ``command`` (``launched``, in its own process group, ended with this command), its report
    (stdout and stderr) on stdout and appended to ``log``, each line also given to ``read``;
    returns its exit status. A traceback is held back until the command goes on or ends: one
    that the plugin's error ended is raised as that error (the log keeps it whole), any other
    is shown."""
    held, child = [], None
    try:
        with open(log, "ab") as report:
            child = start_child(launched(command), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
            for line in child.stdout:
                report.write(line)
                report.flush()
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
    _show(held)
    return status


def _show(lines):
    for line in lines:
        sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
