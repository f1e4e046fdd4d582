"""python -m xlpe_fairseq.in_one_process: the recipes' way to run one command on every split."""
import pytest

from support.fairseq_commands import binarize_positions
from xlpe_fairseq.in_one_process import main, split_calls


def test_then_separates_the_argument_lists():
    assert split_calls(["--a", "1", "--then", "--a", "2", "--then"]) == [
        ["--a", "1"], ["--a", "2"], []]
    assert split_calls([]) == [[]], "no arguments: one call without arguments"


@pytest.mark.parametrize("module", ["xlpe_fairseq.no_such_module", "xlpe_fairseq.help_format"])
def test_a_module_without_main_is_named_in_one_line(module):
    with pytest.raises(SystemExit) as stop:
        main([module, "--help"])
    assert str(stop.value) == f"xlpe_fairseq.in_one_process: {module} is not a module with a main()"


def job(tmp_path, split):
    return tmp_path / f"{split}.reorder", tmp_path / f"{split}.xx", tmp_path / "bin", split


def test_every_call_runs_and_the_first_failure_ends_the_process(tmp_path):
    for split, reorder in (("train", "1 0\n"), ("valid", "0 1 2\n"), ("test", "2 1 0\n")):
        (tmp_path / f"{split}.xx").write_text("a b\n" if split == "train" else "a b c\n")
        (tmp_path / f"{split}.reorder").write_text(reorder)
    binarize_positions(job(tmp_path, "train"), job(tmp_path, "test"))
    assert sorted(path.name for path in (tmp_path / "bin").iterdir()) == [
        "test.reorder.xx-yy.bin", "test.reorder.xx-yy.idx",
        "train.reorder.xx-yy.bin", "train.reorder.xx-yy.idx"], "both calls must write their split"

    (tmp_path / "valid.reorder").write_text("0 1\n")  # two positions for three tokens
    (tmp_path / "test.reorder").write_text("0 1 2\n")
    before = (tmp_path / "bin" / "test.reorder.xx-yy.bin").read_bytes()
    failed = binarize_positions(job(tmp_path, "valid"), job(tmp_path, "test"), expect_failure=True)
    assert failed.returncode == 1 and "valid.reorder" in failed.stderr, failed.stderr[-2000:]
    assert "Traceback" not in failed.stderr, failed.stderr[-2000:]
    assert (tmp_path / "bin" / "test.reorder.xx-yy.bin").read_bytes() == before, \
        "the call after the failing one must not run"
