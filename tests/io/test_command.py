"""run_command: an input error is one message and exit 1; SIGTERM removes temporaries, exit 143."""
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
