"""xlpe-reorder: streaming extraction and its input checks."""
import pytest

from xlpe_fairseq.reordering.extract import METHODS, extract_file, main
from xlpe_fairseq.preprocessing.io_utils import InputError


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


@pytest.fixture
def corpus(tmp_path):
    src = write(tmp_path / "train.bpe.he", ["a b c", "d e", "f"])
    tgt = write(tmp_path / "train.bpe.en", ["x y z", "u v", "w"])
    return tmp_path, src, tgt


def test_dpe_is_registered():
    assert "dpe" in METHODS


@pytest.mark.parametrize("workers,chunk_size", [(1, 100), (2, 1)])
def test_writes_one_permutation_per_line(corpus, workers, chunk_size):
    tmp_path, src, tgt = corpus
    align = write(tmp_path / "train.align", ["0-2 1-1 2-0", "0-0", ""])
    out = tmp_path / "train.reorder"
    cases = extract_file("dpe", src, tgt, align, str(out), workers, chunk_size)
    assert out.read_text() == "2 1 0\n0 1\n0\n"
    assert (cases["pairs"], cases["tokens"], cases["unaligned"]) == (3, 6, 2), dict(cases)


def test_out_of_range_link_names_file_line_link_and_lengths(corpus):
    tmp_path, src, tgt = corpus
    align = write(tmp_path / "train.align", ["0-0", "0-0 1-2", "0-0"])
    with pytest.raises(InputError, match=r"train.align line 2 .*link '1-2' is out of range "
                                         r"for source length 2 and target length 2"):
        extract_file("dpe", src, tgt, align, str(tmp_path / "out"), 1, 100)
    assert not (tmp_path / "out").exists()


def test_malformed_link(corpus):
    tmp_path, src, tgt = corpus
    align = write(tmp_path / "train.align", ["0-0", "0:1", "0-0"])
    with pytest.raises(InputError, match=r"train.align line 2 .*'0:1' is not of the form i-j"):
        extract_file("dpe", src, tgt, align, str(tmp_path / "out"), 1, 100)


def test_mismatched_line_counts_exit_with_message(corpus, capsys):
    tmp_path, src, tgt = corpus
    align = write(tmp_path / "train.align", ["0-0"])
    with pytest.raises(SystemExit) as exit_info:
        main(["--source", src, "--target", tgt, "--alignment", align,
              "--output", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert "train.align: 1 lines" in capsys.readouterr().err


def test_missing_file(corpus):
    tmp_path, src, tgt = corpus
    with pytest.raises(InputError, match=r"train.align: no such file"):
        extract_file("dpe", src, tgt, str(tmp_path / "train.align"), str(tmp_path / "o"), 1, 9)
