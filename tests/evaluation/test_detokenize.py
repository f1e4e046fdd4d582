"""Detokenization by target language: Chinese and Japanese as a reader writes them, no space
between CJK characters or next to CJK punctuation; other languages as Moses writes them; the
same function behind xlpe-bleu, xlpe-translate and fairseq-interactive's --tokenizer xlpe."""
from argparse import Namespace

import pytest

from xlpe_fairseq.evaluation import bleu, translate
from xlpe_fairseq.evaluation.detokenize import detokenize, detokenize_line


@pytest.mark.parametrize("language, tokenized, expected", [
    ("zh", "在 「 打开 」 对话框 ， 选择 文件 。", "在「打开」对话框，选择文件。"),
    ("zh", "选择 “ 工具 - 选项 ” ， 然后 点击 OK 。", "选择“工具 - 选项”，然后点击 OK。"),
    ("zh", "使用 LibreOffice Writer 打开 文件 。 按 Ctrl + C 。",
     "使用 LibreOffice Writer 打开文件。按 Ctrl + C。"),
    ("zh-CN", "是否 保存 （ 可选 ） ？", "是否保存（可选）？"),
    ("ja", "「 ファイル 」 を 開き ます 。 次 に 、 OK を クリック し ます 。",
     "「ファイル」を開きます。次に、OK をクリックします。"),
    ("ja", "ページ 数 ： 10 … 以上 ！", "ページ数：10…以上！"),
    ("en", "Choose Tools - Options , then click \" OK \" .",
     "Choose Tools - Options, then click \"OK\"."),
])
def test_detokenized_as_written(language, tokenized, expected):
    assert detokenize_line(tokenized, language) == expected
    assert detokenize([tokenized], language) == [expected]


def test_every_command_detokenizes_with_the_same_function():
    assert bleu.detokenize is detokenize
    assert translate.detokenize_line is detokenize_line


def test_fairseq_tokenizer_of_the_plugin_segments_and_joins_by_language():
    from fairseq.data import encoders

    import xlpe_fairseq.tokenizer  # noqa: F401  (registers --tokenizer xlpe)

    tokenizer = encoders.build_tokenizer(Namespace(tokenizer="xlpe", source_lang="en",
                                                   target_lang="zh", lowercase_source=True))
    assert tokenizer.encode("Open the file, then close it.") == \
        "open the file , then close it ."
    assert tokenizer.decode("在 「 打开 」 对话框 。") == "在「打开」对话框。"
