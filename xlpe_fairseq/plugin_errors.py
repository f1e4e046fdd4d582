"""The plugin's errors, and how a command that runs one of fairseq's finds them in its report.

Every error the plugin raises about the user's data or options is an ``InputError`` (exit 1)
or an ``OptionError`` (exit 2) of the ground floor (``io.errors``), with a message that names
the file, the line and what was expected. Inside a process of its own (a notebook, fairseq's
commands) the plugin raises them as any library does: fairseq's commands end in a traceback
whose last line is that message. The xlpe-* commands that run fairseq's commands as children
(xlpe-train, xlpe-evaluate, xlpe-study) show the message alone (``error_in_report``).
"""
import re

from .io.errors import InputError, OptionError  # noqa: F401  (the plugin's modules import them here)


class ReorderFileError(InputError):
    """A reorder line or tensor that is not a permutation of the source positions."""


class ReorderPositionsError(ReorderFileError):
    """Binarized reorder positions that do not fit the source they belong to."""


class MissingReorderPositionsError(InputError):
    """A model needs reorder positions for a split and the data-bin has none."""


PLUGIN_ERRORS = (InputError, OptionError, ReorderFileError, ReorderPositionsError,
                 MissingReorderPositionsError)
# the line of a traceback that one of the plugin's errors ended: "MODULE.CLASS: MESSAGE"
_REPORTED = re.compile("(%s): (.*)" % "|".join(
    re.escape(f"{kind.__module__}.{kind.__qualname__}") for kind in PLUGIN_ERRORS))


def error_in_report(lines):
    """``(message, exit status)`` of the plugin's error that ended a fairseq command whose
    report (stdout and stderr) is ``lines``, or None if none did; the status is argparse's, 2
    for an option and 1 for input. An error of a DataLoader worker, re-raised with the
    worker's traceback as its message, is found on that traceback's last line, the report's."""
    for line in reversed(lines):
        found = _REPORTED.fullmatch(line.rstrip("\n"))
        if found:
            kind, message = found.groups()
            return message, 2 if kind.endswith(".OptionError") else 1
    return None
