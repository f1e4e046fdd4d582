"""Outputs: never over an input, atomic, with normal permissions, no temporaries left."""
import os
import stat

import pytest

from xlpe_fairseq.io.errors import InputError
from xlpe_fairseq.io.outputs import atomic_output, check_not_inputs, check_output_directory, \
    check_outputs, temporary_directory


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


def test_refuses_to_overwrite_an_input(tmp_path):
    a = write(tmp_path / "a", "x\n")
    with pytest.raises(InputError, match="would overwrite an input"):
        check_not_inputs([a], [a])


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


@pytest.mark.parametrize("name", ["newd/", "newd/sub/"])
def test_a_name_ending_in_a_slash_is_not_written_as_a_file(tmp_path, name):
    with pytest.raises(InputError, match="ends in a slash"):
        check_outputs([f"{tmp_path}/{name}"])
    with pytest.raises(InputError, match="ends in a slash"):
        with atomic_output(f"{tmp_path}/{name}") as f:
            f.write("x\n")
    assert list(tmp_path.iterdir()) == []


def test_an_empty_output_name_is_refused_as_such():
    with pytest.raises(InputError, match="^'': an empty name, expected an output file name"):
        check_outputs([""])


def test_an_empty_output_folder_name_is_refused_as_such():
    """'' is no folder: it was taken for the working directory."""
    with pytest.raises(InputError, match="^'': an empty name, expected an output folder$"):
        check_output_directory("")


def test_a_name_too_long_for_the_temporary_file_is_refused_before_any_work(tmp_path):
    """The output is first written as .NAME.PID.XXXXXXXX: a name that fits the file system
    but not with that suffix failed only when written, after the work."""
    longest = os.pathconf(tmp_path, "PC_NAME_MAX")
    name = str(tmp_path / ("x" * (longest - 5)))
    with pytest.raises(InputError, match=f"a file name of {longest - 5} bytes, longer than"):
        check_outputs([name])
    with pytest.raises(InputError, match="cannot create a folder of a name longer than"):
        check_outputs([str(tmp_path / ("y" * (longest + 1)) / "out.pt")])
    with pytest.raises(InputError, match="cannot create a folder of a name longer than"):
        check_output_directory(str(tmp_path / ("z" * (longest + 1))))
    assert list(tmp_path.iterdir()) == []
    check_outputs([str(tmp_path / ("x" * (longest - 40)))])
