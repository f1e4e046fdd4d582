"""The raw valid and test text checked before a recipe's first step: an empty or too long
sentence is named by the user's file and line, not by the aligner's joined file."""
import pytest

from xlpe_fairseq.io import InputError
from xlpe_fairseq.preprocessing.check_raw import check_bpe, check_raw, fits_aligner, has_word


@pytest.mark.parametrize("line, word", [
    ("a", True), ("", False), (" \t ", False), ("\u00a0\u3000", False), ("\x01\x02", False),
    ("\x01a", True), ("\u200b", True)])
def test_a_word_is_what_tokenization_keeps(line, word):
    assert has_word(line) == word


def test_the_aligner_takes_a_word_up_to_its_limit():
    assert fits_aligner("a " * 1023) and not fits_aligner("a " * 1024)
    assert fits_aligner("a \x01 " * 1000), "control characters are no words"
    assert not fits_aligner("  ")


@pytest.mark.parametrize("text, message", [
    ("a\nb\n\nc\n", "valid.en line 3: empty line (a valid or test pair needs a word on each "
     "side, for the word aligner); remove the pair from both sides"),
    ("a\n\u00a0 \n", "valid.en line 2: empty line"),
    ("a\n" + "w " * 1100 + "\n", "valid.en line 2: 1100 tokens, more than the 1023 that eflomal "
     "handles"),
    ("a\rb\n", "valid.en line 1: carriage return"),
])
def test_a_line_the_aligner_refuses_is_named_in_the_raw_file(tmp_path, text, message):
    (tmp_path / "valid.fr").write_text("a\nb\nc\nd\n")
    (tmp_path / "valid.en").write_bytes(text.encode())
    with pytest.raises(InputError) as caught:
        check_raw([str(tmp_path / "valid.fr"), str(tmp_path / "valid.en")])
    assert str(caught.value).startswith(f"{tmp_path}/{message}")


def test_good_text_passes(tmp_path):
    (tmp_path / "test.en").write_text("\ufeffa b\r\nc\n")
    check_raw([str(tmp_path / "test.en")])


def test_a_line_bpe_splits_past_the_aligner_is_named_in_the_raw_file(tmp_path):
    """600 words fit; their 1,200 BPE pieces do not: the raw file's line is named."""
    raw, bpe = tmp_path / "valid.en", tmp_path / "bpe.valid.en"
    raw.write_text("a b\n" + "word " * 600 + "\n")
    bpe.write_text("a b\n" + "wo@@ rd " * 600 + "\n")
    check_raw([str(raw)])
    with pytest.raises(InputError) as caught:
        check_bpe([(str(bpe), str(raw))])
    assert str(caught.value) == (f"{raw} line 2: 1200 tokens after tokenization and BPE, more "
                                 "than the 1023 that eflomal handles; split or leave out the pair")
    check_bpe([(str(raw), str(raw))])
