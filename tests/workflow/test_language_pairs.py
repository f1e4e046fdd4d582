"""Language pairs written SRC-TGT where a code holds '-' itself: zh-CN-en is zh-CN to en, in
the dataset scripts' PAIR and in a data-bin's file names."""
import pytest

from xlpe_fairseq.workflow.language_pairs import data_bin_pair, split_pair
from xlpe_fairseq.workflow.script_options import Refused


@pytest.mark.parametrize("pair, languages", [
    ("en-de", ("en", "de")), ("zh-CN-en", ("zh-CN", "en")), ("en-zh-CN", ("en", "zh-CN")),
    ("pt-BR-en", ("pt-BR", "en")), ("en-sr-Latn", ("en", "sr-Latn")),
    ("zh-Hant-TW-en", ("zh-Hant-TW", "en")), ("zh_CN-en", ("zh_CN", "en")),
])
def test_a_pair_splits_where_the_second_code_begins(pair, languages):
    assert split_pair(pair) == languages


def test_a_pair_that_reads_two_ways_is_one_line_saying_how_to_write_it():
    with pytest.raises(Refused) as refused:
        split_pair("zh-cn-en")
    message = str(refused.value)
    assert refused.value.exit_status == 2 and "\n" not in message, message
    assert "zh to cn-en" in message and "zh-cn to en" in message and "zh-CN-en" in message


@pytest.mark.parametrize("pair", ["en", "en-", "-en", "en de"])
def test_what_is_not_a_pair_is_refused(pair):
    with pytest.raises(Refused) as refused:
        split_pair(pair)
    assert "must be SRC-TGT" in str(refused.value)


@pytest.mark.parametrize("src, tgt, sides", [
    ("zh-CN", "en", 2), ("en", "zh-CN", 2), ("pt-BR", "en", 1), ("zh-cn", "en", 2),
    ("en", "sr-Latn", 1), ("fr", "en", 1)])
def test_the_pair_of_a_data_bin_comes_from_its_file_names(tmp_path, src, tgt, sides):
    """Both index files name the languages; where only the source's is there (a stub of
    OUT), that one and the codes' case tell."""
    for split in ("train", "valid"):
        for lang in (src, tgt)[:sides]:
            (tmp_path / f"{split}.{src}-{tgt}.{lang}.idx").write_text("")
    (tmp_path / f"dict.{src}.txt").write_text("")
    assert data_bin_pair(str(tmp_path)) == (src, tgt)


def test_a_folder_without_index_files_has_no_pair(tmp_path):
    (tmp_path / "dict.en.txt").write_text("")
    assert data_bin_pair(str(tmp_path)) is None
