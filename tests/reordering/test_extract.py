"""xlpe-reorder: streaming extraction and its input checks."""
import pytest

from xlpe_fairseq.io import InputError
from xlpe_fairseq.reordering.extract import (
    METHODS,
    extract_file,
    main,
    parse_link_columns,
    parse_links,
)


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


@pytest.mark.parametrize("text", ["0-2 1-1 2-0 2-3", "12-0", "0-1\t1-0", " 0-0  1-1 ", ""])
def test_link_columns_are_the_parsed_links(text):
    sources, targets = parse_link_columns(text, 13, 4)
    assert list(zip(sources, targets)) == parse_links(text, 13, 4), (text, sources, targets)


@pytest.mark.parametrize("text,message", [("0-0 3-1", "'3-1' is out of range"),
                                          ("0-0 1-4", "'1-4' is out of range"),
                                          ("0-1-1", "'0-1-1' is not of the form")])
def test_link_columns_reject_what_parse_links_rejects(text, message):
    with pytest.raises(InputError, match=message):
        parse_link_columns(text, 3, 4)


def test_mismatched_line_counts_exit_with_message(corpus, capsys):
    tmp_path, src, tgt = corpus
    align = write(tmp_path / "train.align", ["0-0"])
    with pytest.raises(SystemExit) as exit_info:
        main(["--source", src, "--target", tgt, "--alignment", align,
              "--output", str(tmp_path / "out")])
    assert exit_info.value.code == 1
    assert "train.align: 1 lines" in capsys.readouterr().err


def test_missing_file(corpus):
    tmp_path, src, tgt = corpus
    with pytest.raises(InputError, match=r"train.align: no such file"):
        extract_file("dpe", src, tgt, str(tmp_path / "train.align"), str(tmp_path / "o"), 1, 9)


@pytest.fixture
def btg_corpus(tmp_path):
    # 2413 (non-BTG), two tokens on one target word, an unaligned middle token in an
    # inversion, a single unaligned token, a BPE word (two aligned pieces on a wide span)
    # inverted with the word before it
    src = write(tmp_path / "train.bpe.he", ["a b c d", "e f", "g h i", "j", "k l@@ m"])
    tgt = write(tmp_path / "train.bpe.en", ["w x y z", "u v", "r s t", "k", "n o p"])
    align = write(tmp_path / "train.align",
                  ["0-1 1-3 2-0 3-2", "0-0 1-0", "0-2 2-0", "", "0-2 1-0 2-1"])
    return tmp_path, src, tgt, align


@pytest.mark.parametrize("workers,chunk_size", [(1, 100), (2, 1)])
def test_btg_counts_sentences_per_rule(btg_corpus, workers, chunk_size):
    tmp_path, src, tgt, align = btg_corpus
    out = tmp_path / "out"
    cases = extract_file("btg", src, tgt, align, str(out), workers, chunk_size)
    assert out.read_text() == "1 2 0 3\n0 1\n2 0 1\n0\n2 0 1\n"
    assert cases == {"pairs": 5, "tokens": 13, "non_btg_repaired": 1,
                     "many_to_one_kept_in_order": 1, "unaligned_attached": 2,
                     "pieces_joined": 1, "one_to_many_averaged": 1}, dict(cases)


def test_btg_summary_names_each_rule_and_its_share_of_sentences(btg_corpus, capsys):
    tmp_path, src, tgt, align = btg_corpus
    main(["--method", "btg", "--source", src, "--target", tgt, "--alignment", align,
          "--output", str(tmp_path / "out"), "--workers", "1"])
    # the last stderr line: a progress bar may come before it
    assert capsys.readouterr().err.splitlines()[-1] == (
        "xlpe-reorder: 5 pairs, 13 source tokens: sentences touched by "
        "pieces_joined 20.0%, unaligned_attached 40.0%, one_to_many_averaged 20.0%, "
        "many_to_one_kept_in_order 20.0%, non_btg_repaired 20.0%")


def test_dpe_summary_keeps_token_shares(corpus, capsys):
    tmp_path, src, tgt = corpus
    align = write(tmp_path / "train.align", ["0-2 1-1 2-0", "0-0", ""])
    main(["--source", src, "--target", tgt, "--alignment", align,
          "--output", str(tmp_path / "out"), "--workers", "1"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "xlpe-reorder: 3 pairs, 6 source tokens: unaligned 33.3%, one-to-many 0.0%, "
        "many-to-one 0.0%")


@pytest.mark.parametrize("workers,chunk_size", [(1, 100), (2, 1)])
def test_dpe_skip_writes_minus_one_for_unaligned_tokens(corpus, workers, chunk_size):
    tmp_path, src, tgt = corpus
    align = write(tmp_path / "train.align", ["0-2 2-0", "1-0", ""])
    out = tmp_path / "train.reorder"
    cases = extract_file("dpe", src, tgt, align, str(out), workers, chunk_size, unaligned="skip")
    assert out.read_text() == "1 -1 0\n-1 0\n-1\n"
    assert (cases["tokens"], cases["unaligned"]) == (6, 3), dict(cases)


def test_dpe_skip_summary_says_unaligned_tokens_have_no_target(corpus, capsys):
    tmp_path, src, tgt = corpus
    align = write(tmp_path / "train.align", ["0-2 1-1 2-0", "0-0", ""])
    main(["--unaligned", "skip", "--source", src, "--target", tgt, "--alignment", align,
          "--output", str(tmp_path / "out"), "--workers", "1"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "xlpe-reorder: 3 pairs, 6 source tokens: unaligned 33.3% (no order target), "
        "one-to-many 0.0%, many-to-one 0.0%")
    assert (tmp_path / "out").read_text() == "2 1 0\n0 -1\n-1\n"


def test_unaligned_option_is_refused_for_btg(corpus, capsys):
    tmp_path, src, tgt = corpus
    align = write(tmp_path / "train.align", ["0-0", "0-0", ""])
    with pytest.raises(SystemExit) as exit_info:
        main(["--method", "btg", "--unaligned", "skip", "--source", src, "--target", tgt,
              "--alignment", align, "--output", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert "--unaligned applies to --method dpe only" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("link", ["1-²", "¹-0", "1-١"])
def test_a_link_index_that_is_not_an_ascii_number_is_malformed(corpus, link):
    # str.isdigit takes superscripts, which int() then refuses with a traceback
    tmp_path, src, tgt = corpus
    align = write(tmp_path / "train.align", ["0-0", f"0-0 {link}", "0-0"])
    with pytest.raises(InputError, match=rf"train.align line 2 .*'{link}' is not of the form"):
        extract_file("dpe", src, tgt, align, str(tmp_path / "out"), 1, 100)
