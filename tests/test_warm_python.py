"""The end-to-end tests' ``python -m`` from a warm fork server must report what a fresh
``python -m`` reports, or their checks of exit statuses and one-line errors prove nothing."""
import os
import re
import subprocess
import sys

import pytest

from synthetic_corpus import preprocess_corpus, write_corpus
from test_cli_end_to_end import USER_DIR
from warm_python import run_module

COMMAND = """\
import atexit, logging, os, sys
atexit.register(lambda: print("atexit ran", flush=True))
print("imported", sorted(name for name in sys.modules if name.startswith(("fairseq", "xlpe")))[:3])
print("logging", logging.getLogger().level, logging.getLogger().handlers)
print("argv", sys.argv[1:], "cwd", os.path.basename(os.getcwd()), "env", os.environ["WARM_TEST"])
print("stdin", sys.stdin.read().strip())
ending = sys.argv[1]
if ending == "raise":
    raise ValueError("a bug")
if ending == "message":
    sys.exit("command: error: a message")
if ending == "status":
    sys.exit(3)
"""


@pytest.fixture(scope="module")
def command(tmp_path_factory):
    folder = tmp_path_factory.mktemp("warm")
    (folder / "warm_test_command.py").write_text(COMMAND)
    return folder


@pytest.mark.parametrize("ending", ["return", "raise", "message", "status"])
def test_a_forked_command_exits_and_prints_as_a_fresh_python_does(command, ending):
    env = {**os.environ, "WARM_TEST": "set", "PYTHONPATH": str(command)}
    fresh = subprocess.run([sys.executable, "-m", "warm_test_command", ending], input="in\n",
                           capture_output=True, text=True, env=env, cwd=command)
    forked = run_module("warm_test_command", [ending], stdin="in\n", env=env, cwd=command)
    assert (forked.returncode, forked.stdout) == (fresh.returncode, fresh.stdout), \
        f"fresh: {fresh}\nforked: {forked}"
    # tracebacks name the file the same way; both print the exception last
    assert forked.stderr.splitlines()[-1:] == fresh.stderr.splitlines()[-1:], \
        f"fresh: {fresh.stderr!r}\nforked: {forked.stderr!r}"
    assert ("Traceback" in forked.stderr) == (ending == "raise"), forked.stderr


def test_the_plugin_s_one_line_errors_reach_the_forked_command_s_stderr(tmp_path):
    """fairseq-train with a plugin option out of range: the plugin, imported by --user-dir in
    the forked command, prints its one line and exits 2 as in a fresh process."""
    data_bin = preprocess_corpus(write_corpus(tmp_path / "raw", sizes={"train": 20, "valid": 4,
                                                                       "test": 4}),
                                 tmp_path / "data-bin")
    args = [str(data_bin), "--user-dir", USER_DIR, "--task", "translation_reorder", "--arch",
            "transformer_dpe", "--criterion", "label_smoothed_cross_entropy_with_order",
            "--max-tokens", "100", "--cpu", "--order-lambda", "2"]
    fresh = subprocess.run([sys.executable, "-m", "fairseq_cli.train", *args],
                           capture_output=True, text=True)
    forked = run_module("fairseq_cli.train", args)
    assert forked.returncode == fresh.returncode == 2, forked.stderr[-2000:]
    assert "Traceback" not in forked.stderr, forked.stderr[-2000:]
    last = forked.stderr.splitlines()[-1]
    assert "--order-lambda must be" in last and last == fresh.stderr.splitlines()[-1], last
    assert without_times(forked.stdout) == without_times(fresh.stdout), \
        "fairseq logs to stdout, as its command configures it"


def without_times(log):
    return re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", "", log, flags=re.MULTILINE)
