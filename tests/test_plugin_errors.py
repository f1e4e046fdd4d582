"""The plugin's errors are ordinary exceptions; the xlpe-* commands that run fairseq's commands
find them in the child's report and say them in one line, with argparse's exit codes."""
import subprocess
import sys

import pytest

from xlpe_fairseq.plugin_errors import (
    MissingReorderPositionsError,
    OptionError,
    ReorderFileError,
    error_in_report,
)

RAISE = """
import sys
from xlpe_fairseq.plugin_errors import OptionError, ReorderFileError
print("trained so far", flush=True)
raise {}
"""


def report_of(statement):
    result = subprocess.run([sys.executable, "-c", RAISE.format(statement)], capture_output=True,
                            text=True, env={"PYTHONWARNINGS": "ignore", "PATH": ""})
    assert result.returncode == 1 and "Traceback" in result.stderr, result.stderr
    return (result.stdout + result.stderr).splitlines(keepends=True)


@pytest.mark.parametrize("statement,status", [
    ("ReorderFileError('train.reorder.bin line 3: expected 4 positions, found 5')", 1),
    ("OptionError('--order-lambda must be in [0, 1], got 2.0')", 2),
])
def test_the_plugins_error_is_found_at_the_end_of_a_report(statement, status):
    message = statement.split("'")[1]
    assert error_in_report(report_of(statement)) == (message, status)


def test_other_errors_are_not_taken_for_the_plugins():
    assert error_in_report(report_of("KeyError('model')")) is None
    assert error_in_report(report_of("ValueError('ReorderFileError: looks alike')")) is None


def test_every_error_of_the_plugin_is_bad_input_or_a_bad_option():
    """run_command reports InputError (exit 1) and OptionError (exit 2) in one line."""
    from xlpe_fairseq.io import InputError

    for kind in (ReorderFileError, MissingReorderPositionsError):
        assert issubclass(kind, InputError), kind
    assert issubclass(OptionError, ValueError)


def test_an_error_from_a_data_loader_worker_is_found_by_its_own_message():
    wrapped = ("Caught ReorderPositionsError in DataLoader worker process 0.\n"
               "Original Traceback (most recent call last):\n"
               '  File "reorder_dataset.py", line 129, in _validate\n'
               "xlpe_fairseq.plugin_errors.ReorderPositionsError: d/train.reorder.he-en.bin "
               "line 7: position 9 out of range\n")
    report = ["Traceback (most recent call last):\n", '  File "train.py", line 1\n',
              f"xlpe_fairseq.plugin_errors.ReorderPositionsError: {wrapped}"]
    assert error_in_report("".join(report).splitlines()) == (
        "d/train.reorder.he-en.bin line 7: position 9 out of range", 1)
