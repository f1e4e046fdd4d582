"""Shared helpers: atomic outputs, line checks, chunked reading, ordered parallel map."""
import argparse
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

from xlpe_fairseq.preprocessing.io_utils import (
    InputError,
    ToolError,
    atomic_output,
    child_processes,
    check_not_inputs,
    check_outputs,
    check_same_line_count,
    count_lines,
    open_text,
    parallel_imap,
    positive_int,
    read_lines,
    read_parallel_chunks,
    require_files,
    run_command,
    temporary_directory,
    text_lines,
)


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_atomic_output_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_output(str(target)) as f:
            f.write("half")
            raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == [], "a failed write must leave no file behind"


def test_atomic_output_writes_with_normal_permissions(tmp_path):
    target = tmp_path / "out.txt"
    with atomic_output(str(target)) as f:
        f.write("done\n")
    assert target.read_text() == "done\n"
    mode = stat.S_IMODE(os.stat(target).st_mode)
    assert mode & stat.S_IRGRP or os.umask(0o022) & stat.S_IRGRP, f"file mode {oct(mode)}"


def test_count_lines_counts_unterminated_last_line(tmp_path):
    assert count_lines(write(tmp_path / "a", "x\ny")) == 2
    assert count_lines(write(tmp_path / "b", "x\ny\n")) == 2
    assert count_lines(write(tmp_path / "c", "")) == 0


def test_mismatched_line_counts_name_both_files(tmp_path):
    a = write(tmp_path / "a.he", "1\n2\n3\n")
    b = write(tmp_path / "b.en", "1\n2\n")
    with pytest.raises(InputError, match=r"a.he: 3 lines, .*b.en: 2 lines"):
        check_same_line_count([a, b])


def test_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match=r"nope.txt: no such file"):
        require_files([str(tmp_path / "nope.txt")])


def test_refuses_to_overwrite_an_input(tmp_path):
    a = write(tmp_path / "a", "x\n")
    with pytest.raises(InputError, match="would overwrite an input"):
        check_not_inputs([a], [a])


def test_parallel_chunks_carry_one_based_line_numbers(tmp_path):
    a = write(tmp_path / "a", "".join(f"a{k}\n" for k in range(5)))
    b = write(tmp_path / "b", "".join(f"b{k}\n" for k in range(5)))
    chunks = list(read_parallel_chunks([a, b], 2))
    assert [lineno for lineno, _ in chunks] == [1, 3, 5]
    assert chunks[1][1] == [("a2", "b2"), ("a3", "b3")]


@pytest.mark.parametrize("content, line, byte, column", [
    (b"\xff\xfeh\x00i\x00\n", 1, 0xFF, 1),  # a UTF-16 file with its byte-order mark
    (b"ok\nca\xe9t\xe9\n", 2, 0xE9, 3),  # Latin-1
    (b"ok\n\xc3\xa9t\xe9\n", 2, 0xE9, 4),  # the column counts bytes: \xc3\xa9 is one character
    (b"ok\nok\nab\xc3\n", 3, 0xC3, 3),  # a character cut off at the end of the line
])
def test_undecodable_byte_is_located_by_line_and_column(tmp_path, content, line, byte, column):
    path = tmp_path / "in.txt"
    path.write_bytes(content)
    expected = f"{path} line {line}: not UTF-8 (byte 0x{byte:02x} at column {column})"
    with pytest.raises(InputError) as error:
        read_lines(str(path))
    assert str(error.value) == expected
    with pytest.raises(InputError) as error, open_text(str(path)) as f:
        f.read()
    assert str(error.value) == expected


def test_undecodable_byte_in_a_later_chunk_has_its_file_line_number(tmp_path):
    good = write(tmp_path / "a", "".join(f"a{k}\n" for k in range(9)))
    bad = tmp_path / "b"
    bad.write_bytes(b"".join(b"b\xff\n" if k == 6 else b"b\n" for k in range(9)))
    with pytest.raises(InputError) as error:
        list(read_parallel_chunks([good, str(bad)], 2))
    assert str(error.value) == f"{bad} line 7: not UTF-8 (byte 0xff at column 2)"


def test_errors_of_the_chunk_consumer_are_not_renamed(tmp_path):
    path = write(tmp_path / "a", "x\n")
    with pytest.raises(UnicodeDecodeError):
        for _ in read_parallel_chunks([path], 2):
            b"\xff".decode("utf-8")


def test_run_command_prints_the_message_and_exits_1(capsys):
    def body():
        raise InputError("in.txt line 3: not UTF-8 (byte 0xff at column 1)")

    with pytest.raises(SystemExit) as exit_info:
        run_command(body, "xlpe-x")
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == "xlpe-x: error: in.txt line 3: not UTF-8 (byte 0xff at column 1)\n"


def _square_all(chunk):
    return [x * x for x in chunk]


@pytest.mark.parametrize("workers", [1, 2])
def test_parallel_imap_preserves_order(workers):
    chunks = [list(range(k, k + 3)) for k in range(0, 30, 3)]
    results = list(parallel_imap(_square_all, iter(chunks), workers, total=30))
    assert [x for chunk in results for x in chunk] == [x * x for x in range(30)]


def _slow_square_all(chunk):
    time.sleep(0.2)
    return _square_all(chunk)


def test_parallel_imap_stopped_early_leaves_no_thread_or_worker():
    """A command that stops reading (an error, a signal) must not leave the pool's manager
    thread behind: Python 3.11's exit hook then writes to its closed wake-up pipe and prints
    an OSError traceback."""
    threads_before = set(threading.enumerate())
    results = parallel_imap(_slow_square_all, iter([[k] for k in range(20)]), 2)
    assert next(results) == [0]
    results.close()
    left = [thread.name for thread in set(threading.enumerate()) - threads_before
            if not thread.daemon]
    assert left == [], f"threads still running after the pool stopped: {left}"
    assert child_processes() == [], "workers still running after the pool stopped"


def test_a_lone_carriage_return_is_refused_where_counting_and_reading_would_disagree(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"a b\rc d\ne f\n")
    assert count_lines(str(path)) == 2
    with pytest.raises(InputError) as error:
        read_lines(str(path))
    assert str(error.value).startswith(
        f"{path} line 1: carriage return (\\r) inside the line (byte column 4)")
    with pytest.raises(InputError, match="line 1: carriage return"):
        list(read_parallel_chunks([str(path)], 10))


def test_crlf_and_a_leading_byte_order_mark_read_as_plain_lines(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes("\ufeffa\r\n\ufeffb\r\nc".encode())
    assert count_lines(str(path)) == 3
    assert read_lines(str(path)) == ["a", "\ufeffb", "c"], "only a leading mark is dropped"
    with text_lines(str(path)) as lines:
        assert list(lines) == ["a", "\ufeffb", "c"]


@pytest.mark.parametrize("text", ["0", "-3", "1.5", "x"])
def test_positive_int_refuses_what_is_not_a_positive_integer(text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected a positive integer"):
        positive_int(text)


def test_check_outputs_refuses_one_file_given_twice(tmp_path):
    with pytest.raises(InputError, match="given as two outputs"):
        check_outputs([str(tmp_path / "a"), str(tmp_path / "." / "a")])


def test_a_failed_output_leaves_no_folder_it_created(tmp_path):
    with pytest.raises(RuntimeError):
        with atomic_output(str(tmp_path / "new" / "deeper" / "out.txt")) as f:
            f.write("half")
            raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_temporary_files_of_killed_processes_are_removed_by_the_next_write(tmp_path):
    dead_pid = 2 ** 22 + 1  # above Linux's largest process id
    stale = tmp_path / f".out.txt.{dead_pid}.abc123"
    stale.write_text("half")
    stale_dir = tmp_path / f".xlpe-align.{dead_pid}.xyz"
    stale_dir.mkdir()
    alive = tmp_path / f".out.txt.{os.getpid()}.def456"
    alive.write_text("another write of this process, still running")
    with atomic_output(str(tmp_path / "out.txt")) as f:
        f.write("done\n")
    with temporary_directory(str(tmp_path), ".xlpe-align."):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == [alive.name, "out.txt"]


def _die(chunk):
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_that_dies_is_an_error_not_a_hang():
    signal.alarm(120)  # a hang fails the test instead of the whole run
    try:
        with pytest.raises(ToolError, match="a worker process died"):
            list(parallel_imap(_die, iter([[1], [2], [3]]), 2))
    finally:
        signal.alarm(0)


def test_sigterm_during_a_command_removes_its_temporary_files_and_exits_143(tmp_path):
    script = f"""
import time
from xlpe_fairseq.preprocessing.io_utils import atomic_output, run_command, temporary_directory

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
