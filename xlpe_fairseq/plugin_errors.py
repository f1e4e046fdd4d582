"""The plugin's errors inside fairseq's own commands: one line, not a traceback.

fairseq-train, -generate and -interactive let every exception end in a traceback. The plugin's
errors about the user's data (reorder positions that do not fit their source, a missing
positions file, a bad preorderer) and about its options already name the file, the line and
what was expected; the traceback only buries that line. ``report_plugin_errors`` prints them
as the xlpe-* commands do: ``PROG: error: MESSAGE``, exit 1 for input and 2 for options (as
argparse does). Any other exception keeps Python's report.
"""
import os
import sys

from .io.errors import (  # noqa: F401  (re-exported: the plugin's modules import them here)
    INPUT_ERRORS,
    InputError,
    MissingReorderPositionsError,
    OptionError,
    ReorderFileError,
)

# torch's DataLoader re-raises a worker's exception with the worker's traceback as its message
_WORKER_TRACEBACK = "\nOriginal Traceback (most recent call last):"


def one_line(error):
    """The message of ``error``; for an error re-raised from a DataLoader worker, the
    original message, from the last line of the worker's traceback."""
    message = str(error)
    if _WORKER_TRACEBACK in message:
        message = message.rstrip().rsplit("\n", 1)[-1].partition(": ")[2]
    return message


def report_plugin_errors(previous_hook=None):
    """An ``excepthook`` for the plugin's errors; others go to ``previous_hook``."""
    previous_hook = previous_hook or sys.__excepthook__

    def hook(kind, error, traceback):
        if not issubclass(kind, (OptionError, *INPUT_ERRORS)):
            previous_hook(kind, error, traceback)
            return
        print(f"{os.path.basename(sys.argv[0])}: error: {one_line(error)}", file=sys.stderr)
        if issubclass(kind, OptionError):
            # Python exits 1 after any uncaught exception; a bad command line is 2
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(2)

    return hook
