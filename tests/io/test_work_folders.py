"""The folders a run writes into: one no run may mean is refused in one line before anything
is written."""
import pytest

from xlpe_fairseq.io.errors import InputError
from xlpe_fairseq.io.work_folders import check_work_folder


@pytest.mark.parametrize("path, expected", [
    ("", "'': an empty name, expected a folder for OUT (an unset variable?)"),
    ("/", "/: is the root folder /, expected a folder of your own for OUT"),
    ("/usr", "/usr: is the system folder /usr, expected a folder of your own for OUT"),
    ("/etc/xlpe", "/etc/xlpe: is below the system folder /etc"),
    ("/sys/x/y", "/sys/x/y: is below the system folder /sys"),
    ("//proc/../etc", "is the system folder /etc"),
])
def test_folders_no_run_may_mean_are_refused_before_anything_is_written(path, expected):
    with pytest.raises(InputError) as error:
        check_work_folder(path, "OUT")
    assert expected in str(error.value)


def test_a_file_is_not_a_folder_and_a_folder_below_var_tmp_is_the_user_s(tmp_path):
    existing = tmp_path / "notes.txt"
    existing.write_text("x\n")
    with pytest.raises(InputError, match="notes.txt: is a file, expected a folder for OUT"):
        check_work_folder(str(existing), "OUT")
    assert check_work_folder(str(tmp_path / "new" / "out"), "OUT") == str(tmp_path / "new/out")
    assert check_work_folder("/var/tmp/xlpe-out", "OUT") == "/var/tmp/xlpe-out"
    assert not (tmp_path / "new").exists(), "checking writes nothing"
