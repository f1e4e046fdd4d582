"""run_command: an input error is one message and exit 1; SIGTERM removes temporaries, exit 143;
a closed stdout ends a command quietly, exit 141; Ctrl-C while a command imports its modules
prints no traceback."""
import os
import signal
import subprocess
import sys

import pytest

from xlpe_fairseq.io.command import run_command
from xlpe_fairseq.io.errors import InputError


def test_run_command_prints_the_message_and_exits_1(capsys):
    def body():
        raise InputError("in.txt line 3: not UTF-8 (byte 0xff at column 1)")

    with pytest.raises(SystemExit) as exit_info:
        run_command(body, "xlpe-x")
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == "xlpe-x: error: in.txt line 3: not UTF-8 (byte 0xff at column 1)\n"


def test_sigterm_during_a_command_removes_its_temporary_files_and_exits_143(tmp_path):
    script = f"""
import time
from xlpe_fairseq.io import atomic_output, run_command, temporary_directory

def body():
    with atomic_output({str(tmp_path / 'out.txt')!r}) as f, \\
            temporary_directory({str(tmp_path)!r}, ".work."):
        f.write("half")
        f.flush()
        print("ready", flush=True)
        time.sleep(60)

run_command(body, "xlpe-test")
"""
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "ready\n", process.stderr.read()
    assert len(list(tmp_path.iterdir())) == 2
    process.terminate()
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr, stderr
    assert list(tmp_path.iterdir()) == [], "temporary files left behind"


def run_into_a_closed_pipe(argv):
    """Run ``argv`` with its stdout a pipe whose reader has already gone (``| true``, or
    ``| head -1`` once it has its line); returns (exit status, stderr)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(argv, stdout=write_end, stderr=subprocess.PIPE, text=True,
                                timeout=120)
    finally:
        os.close(write_end)
    return result.returncode, result.stderr


def test_a_closed_stdout_ends_a_command_quietly_as_sigpipe_does():
    status, stderr = run_into_a_closed_pipe([
        sys.executable, "-c", "from xlpe_fairseq.io import run_command\n"
        "run_command(lambda: print('x' * 100000), 'xlpe-x')"])
    assert status == 128 + signal.SIGPIPE and stderr == "", stderr


def test_a_broken_pipe_of_another_file_is_not_taken_for_a_closed_stdout():
    status, stderr = run_into_a_closed_pipe([
        sys.executable, "-c", "import sys\nfrom xlpe_fairseq.io import run_command\n"
        "def body():\n    raise BrokenPipeError(32, 'Broken pipe')\n"
        "sys.stdout = open('/dev/null', 'w')\nrun_command(body, 'xlpe-x')"])
    assert status == 1 and stderr == "xlpe-x: error: Broken pipe\n", stderr


@pytest.mark.parametrize("error, line", [
    (OSError(28, "No space left on device", "out/train.log"),
     "out/train.log: No space left on device"),
    (PermissionError(13, "Permission denied", "ck/schedule.env"),
     "ck/schedule.env: Permission denied"),
    (OSError(18, "Invalid cross-device link", "a/.x.tmp", None, "b/x"),
     "a/.x.tmp and b/x: Invalid cross-device link"),
    (OSError(5, "Input/output error"), "Input/output error"),
])
def test_an_error_of_the_system_is_one_line_naming_the_file(error, line, capsys):
    def body():
        raise error

    with pytest.raises(SystemExit) as exit_info:
        run_command(body, "xlpe-x")
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == f"xlpe-x: error: {line}\n"


@pytest.mark.parametrize("module, files, argv", [
    ("xlpe_fairseq.evaluation.bleu",
     {"gen.out": "H-0\t-0.1\ta house\n", "ref.en": "a house\n"},
     ["--generate-output", "gen.out", "--reference", "ref.en", "--target-lang", "en"]),
    ("xlpe_fairseq.preordering.metrics", {"hyp": "1 0 2\n", "ref": "0 1 2\n"},
     ["--hypothesis", "hyp", "--reference", "ref"]),
])
def test_commands_piped_into_head_end_quietly(tmp_path, module, files, argv):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    status, stderr = run_into_a_closed_pipe(
        [sys.executable, "-m", module, *(str(tmp_path / a) if a in files else a for a in argv)])
    assert status == 128 + signal.SIGPIPE and stderr == "", stderr


def test_ctrl_c_while_a_command_imports_its_modules_prints_no_traceback():
    # what a console script xlpe-* does first: import the command's module (the plugin, torch,
    # fairseq: seconds), where Ctrl-C lands before run_command handles it
    result = subprocess.run(
        [sys.executable, "-c", "import sys\nsys.argv[0] = '/usr/bin/xlpe-bleu'\n"
         "import importlib\ndef interrupted(name): raise KeyboardInterrupt\n"
         "importlib.import_module = interrupted\n"
         "from xlpe_fairseq_cli.commands import bleu\nbleu()"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == -signal.SIGINT and result.stderr == "", result.stderr
