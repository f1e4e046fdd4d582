"""The tests' commands forked from the warm server must report what a fresh process reports,
or their checks of exit statuses and one-line errors prove nothing: ``python -m`` (run_module)
and the console commands' stand-ins on PATH."""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.fairseq_commands import USER_DIR
from synthetic_corpus import preprocess_corpus, write_corpus
from warm_python import REAL_PYTHON, real_processes, run_module, stand_ins, start_server

COMMAND = """\
import atexit, logging, os, sys, warnings
atexit.register(lambda: print("atexit ran", flush=True))
print("logging", logging.getLogger().level, logging.getLogger().handlers)
print("warnings", sys.warnoptions, [f for f in warnings.filters if f[2] is DeprecationWarning])
print("argv", sys.argv[1:], "cwd", os.path.basename(os.getcwd()), "env", os.environ["WARM_TEST"])
print("path", sys.path[0] == os.getcwd(), os.environ["PYTHONPATH"] in sys.path)
print("umask", oct(os.umask(0)))
print("stdin", sys.stdin.read().strip())
ending = sys.argv[1]
if ending == "imports":
    import xlpe_fairseq
    print("after the plugin", logging.getLogger().level, logging.getLogger().handlers)
if ending == "raise":
    raise ValueError("a bug")
if ending == "interrupt":
    raise KeyboardInterrupt
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


@pytest.mark.parametrize("ending", ["return", "imports", "raise", "interrupt", "message",
                                    "status"])
def test_a_forked_command_exits_and_prints_as_a_fresh_python_does(command, ending):
    env = {**os.environ, "WARM_TEST": "set", "PYTHONPATH": str(command),
           "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    old_umask = os.umask(0o027)
    try:
        fresh = subprocess.run([REAL_PYTHON, "-m", "warm_test_command", ending],
                               input="in\n", capture_output=True, text=True, env=env,
                               cwd=command)
        forked = run_module("warm_test_command", [ending], stdin="in\n", env=env, cwd=command)
    finally:
        os.umask(old_umask)
    assert (forked.returncode, forked.stdout) == (fresh.returncode, fresh.stdout), \
        f"fresh: {fresh}\nforked: {forked}"
    # tracebacks name the file the same way; both print the exception last
    assert forked.stderr.splitlines()[-1:] == fresh.stderr.splitlines()[-1:], \
        f"fresh: {fresh.stderr!r}\nforked: {forked.stderr!r}"
    assert ("Traceback" in forked.stderr) == (ending in ("raise", "interrupt")), forked.stderr


def test_fairseq_s_command_with_the_plugin_ends_as_in_a_fresh_process(tmp_path):
    """fairseq-train with a plugin option out of range: the plugin, imported by --user-dir in
    the forked command as in a fresh process (fairseq says nothing of it), refuses the option;
    the same exit status and last line, and fairseq logs the same lines on stdout."""
    data_bin = preprocess_corpus(write_corpus(tmp_path / "raw", sizes={"train": 20, "valid": 4,
                                                                       "test": 4}),
                                 tmp_path / "data-bin")
    args = [str(data_bin), "--user-dir", USER_DIR, "--task", "translation_reorder", "--arch",
            "transformer_dpe", "--criterion", "label_smoothed_cross_entropy_with_order",
            "--max-tokens", "100", "--cpu", "--order-lambda", "2"]
    fresh = subprocess.run([REAL_PYTHON, "-m", "fairseq_cli.train", *args],
                           capture_output=True, text=True)
    forked = run_module("fairseq_cli.train", args)
    assert forked.returncode == fresh.returncode != 0, forked.stderr[-2000:]
    last = forked.stderr.splitlines()[-1]
    assert "--order-lambda" in last and last == fresh.stderr.splitlines()[-1], last
    assert without_times(forked.stdout) == without_times(fresh.stdout), \
        "fairseq logs to stdout, as its command configures it"


def without_times(log):
    return re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", "", log, flags=re.MULTILINE)


@pytest.fixture(scope="module")
def stand_in_folder(tmp_path_factory):
    start_server()
    return stand_ins(tmp_path_factory.mktemp("stand-ins"))


@pytest.mark.parametrize("args", [["--help"], ["--hypothesis", "missing", "--reference", "r"],
                                  ["--bogus"]])
def test_a_stand_in_runs_the_command_as_its_console_script_does(stand_in_folder, tmp_path,
                                                                 args):
    (tmp_path / "r").write_text("0 1\n")
    real = Path(REAL_PYTHON).parent / "xlpe-reorder-score"
    fresh = subprocess.run([real, *args], capture_output=True, text=True, cwd=tmp_path,
                           env=real_processes(os.environ))
    forked = subprocess.run([stand_in_folder / "xlpe-reorder-score", *args],
                            capture_output=True, text=True, cwd=tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        fresh.returncode, fresh.stdout, fresh.stderr)


def test_a_stand_in_passes_on_the_signals_it_gets(stand_in_folder, tmp_path):
    """SIGTERM to the stand-in reaches the command, which ends as the command ends on it."""
    source, out = tmp_path / "in.en", tmp_path / "out"
    source.write_text("The quick brown fox jumps over the lazy dog.\n" * 200000)
    out.mkdir()
    stand_in = subprocess.Popen(
        [stand_in_folder / "xlpe-tokenize", "--lang", "en", "--input", source, "--output",
         out / "tok.en", "--workers", "1"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while not os.listdir(out) and time.monotonic() < deadline and stand_in.poll() is None:
        time.sleep(0.1)  # the command has started once it opens its temporary output
    assert os.listdir(out), "the command never opened its output"
    stand_in.send_signal(signal.SIGTERM)
    _, stderr = stand_in.communicate(timeout=60)
    assert stand_in.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr, stderr
    assert os.listdir(out) == [], "the command's temporary output was left"
