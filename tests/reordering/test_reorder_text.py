"""xlpe-reorder-text: the two-pass Transformer's target-ordered source text."""
import pytest

from xlpe_fairseq.plugin_errors import ReorderFileError
from xlpe_fairseq.reordering.reorder_text import main, reorder_file, reorder_tokens


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_token_i_moves_to_its_position():
    assert reorder_tokens(["a", "b", "c", "d"], [2, 0, 3, 1]) == ["b", "d", "a", "c"]


@pytest.mark.parametrize("workers,chunk_size", [(1, 100), (2, 1)])
def test_file_in_target_order_line_by_line(tmp_path, workers, chunk_size):
    source = write(tmp_path / "train.he", ["a b c", "d e", "f"])
    reorder = write(tmp_path / "train.reorder", ["2 0 1", "0 1", "0"])
    output = tmp_path / "train.hero"
    assert reorder_file(source, reorder, str(output), workers, chunk_size) == 3
    assert output.read_text() == "b c a\nd e\nf\n"


def test_not_a_permutation_names_file_and_line(tmp_path):
    source = write(tmp_path / "train.he", ["a b c", "d e"])
    reorder = write(tmp_path / "train.reorder", ["2 0 1", "1 1"])
    with pytest.raises(ReorderFileError, match=r"train.reorder line 2: position 1 occurs twice"):
        reorder_file(source, reorder, str(tmp_path / "out"), 1, 100)
    assert not (tmp_path / "out").exists(), "a failed run must leave no partial output"


def test_wrong_token_count_and_line_count_exit_with_message(tmp_path, capsys):
    source = write(tmp_path / "train.he", ["a b c", "d e"])
    reorder = write(tmp_path / "train.reorder", ["2 0", "1 0"])
    with pytest.raises(SystemExit) as exit_info:
        main(["--source", source, "--reorder", reorder, "--output", str(tmp_path / "out"),
              "--workers", "1"])
    assert exit_info.value.code == 1
    assert "train.reorder line 1: expected 3 positions (one per source token), found 2" in (
        capsys.readouterr().err)
    short = write(tmp_path / "short.reorder", ["2 0 1"])
    with pytest.raises(SystemExit):
        main(["--source", source, "--reorder", short, "--output", str(tmp_path / "out")])
    assert "parallel files differ in length" in capsys.readouterr().err


def test_refuses_to_overwrite_its_input(tmp_path, capsys):
    source = write(tmp_path / "train.he", ["a b"])
    reorder = write(tmp_path / "train.reorder", ["1 0"])
    with pytest.raises(SystemExit):
        main(["--source", source, "--reorder", reorder, "--output", source])
    assert "output would overwrite an input file" in capsys.readouterr().err
    assert (tmp_path / "train.he").read_text() == "a b\n"
