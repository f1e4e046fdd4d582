"""The plugin's errors inside fairseq's commands end in one line, with argparse's exit codes."""
import subprocess
import sys

import pytest

from xlpe_fairseq.plugin_errors import one_line

# the hook as the plugin installs it when fairseq's commands load it (the end-to-end CLI tests
# run that path); fairseq's start-up is left out to keep these fast
RAISE = """
import sys
from xlpe_fairseq.plugin_errors import OptionError, report_plugin_errors
sys.excepthook = report_plugin_errors(sys.excepthook)
from xlpe_fairseq.reordering.reorder_file import ReorderFileError
sys.argv[0] = "fairseq-train"
print("trained so far", flush=False)
raise {}
"""


def run(statement):
    return subprocess.run([sys.executable, "-c", RAISE.format(statement)], capture_output=True,
                          text=True, env={"PYTHONWARNINGS": "ignore", "PATH": ""})


@pytest.mark.parametrize("statement,code", [
    ("ReorderFileError('train.reorder.bin line 3: expected 4 positions, found 5')", 1),
    ("OptionError('--order-lambda must be in [0, 1], got 2.0')", 2),
])
def test_plugin_errors_print_one_line_and_exit_like_argparse(statement, code):
    result = run(statement)
    message = statement.split("'")[1]
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"fairseq-train: error: {message}", result.stderr
    assert result.stdout == "trained so far\n", "buffered output is flushed before the exit"


def test_other_errors_keep_their_traceback():
    result = run("KeyError('model')")
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "KeyError: 'model'" in result.stderr, result.stderr


def test_an_error_from_a_data_loader_worker_keeps_only_its_message():
    wrapped = ("Caught ReorderPositionsError in DataLoader worker process 0.\n"
               "Original Traceback (most recent call last):\n"
               '  File "reorder_dataset.py", line 129, in _validate\n'
               "xlpe_fairseq.data.reorder_dataset.ReorderPositionsError: d/train.reorder.he-en.bin "
               "line 7: position 9 out of range\n")
    assert one_line(ValueError(wrapped)) == "d/train.reorder.he-en.bin line 7: position 9 out of range"
    assert one_line(ValueError("a: b")) == "a: b"
