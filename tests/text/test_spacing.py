"""Reversible tokenization: the tokens record the raw line's spacing, and detokenization gives
the line back exactly, in every language, whatever it holds (placeholders, formats, tags,
quotes of every language, ellipses, slashes, C++, emoji, mixed scripts, runs of spaces and
tabs, combining marks)."""
import pytest

from xlpe_fairseq.text.detokenization import detokenize_line
from xlpe_fairseq.text.tokenization import tokenize_line
from xlpe_fairseq.text.spacing import JOINER, join_tokens

# each of these came back otherwise before the tokens recorded spacing
HARD_LINES = [
    ("fi", "”%s” ei ole hakemisto"),
    ("fi", "“%s” ei löydy"),
    ("en", "%A %H:%M"),
    ("en", "%Y-%m-%d %H:%M:%S"),
    ("en", "C++ and C# compilers"),
    ("en", "read/write access"),
    ("en", "Wait…"),
    ("en", "Save As…"),
    ("en", "<b>Bold</b> and <i>italic</i>"),
    ("en", "  -a, --all                  do not ignore entries starting with ."),
    ("en", "\t--help\tdisplay this help and exit"),
    ("en", "trailing space: "),
    ("th", "ที่นี่ไม่มีไฟล์"),
    ("hi", "फ़ाइल नहीं मिली"),
    ("zh-CN", "在「打开」对话框，选择 PDF 文件。"),
    ("zh-CN", "无法打开“%s”：%s"),
    ("ja", "ファイル(&F) が見つかりません"),
    ("ja", "「%s」を開けません。"),
    ("ko", "파일 '%s'을(를) 열 수 없습니다."),
    ("fr", "Fichier\u00a0: «\u00a0%s\u00a0» introuvable\u202f!"),
    ("de", "Klicken Sie auf »OK«, dann auf „Speichern“."),
    ("ru", "Файл «%s» не найден."),
    ("tr", "'%s' dosyası açılamadı: %s"),
    ("en", "Don't panic 😀🎉 — it's fine"),
    ("en", "mixed Latin, Кириллица and 中文 in one line"),
    ("en", "a line holding the joiner \uffed itself"),
]


@pytest.mark.parametrize("lang, line", HARD_LINES, ids=[f"{lang}-{k}" for k, (lang, _)
                                                         in enumerate(HARD_LINES)])
def test_a_line_comes_back_exactly(lang, line):
    tokenized = tokenize_line(line, lang)
    assert "  " not in tokenized and "\t" not in tokenized, "one space between tokens"
    assert detokenize_line(tokenized) == line, tokenized


@pytest.mark.parametrize("lang, line, tokens", [
    ("en", "C++ and a/b", f"C {JOINER}+ {JOINER}+ and a {JOINER}/{JOINER} b"),
    ("en", "”%s”", f"”{JOINER} %s {JOINER}”"),
    ("en", "Hello, world.", f"Hello {JOINER}, world {JOINER}."),
    ("en", "%A %H:%M", "%A %H:%M"),
    ("en", "<b>Bold</b>", f"<b>{JOINER} Bold {JOINER}</b>"),
    ("zh-CN", "在「打开」对话框", "在 「 打开 」 对话框"),
    ("zh-CN", "打开PDF文件", f"打开{JOINER} PDF {JOINER}文件"),
    ("th", "ที่นี่", "ที่นี่"),
])
def test_the_joiner_marks_where_tokens_touch(lang, line, tokens):
    """On the punctuation's side where there is one, so words and placeholders stay as they
    are; none between CJK characters, which touch by default; combining marks stay on their
    letters."""
    assert tokenize_line(line, lang) == tokens


def test_whitespace_other_than_one_space_is_a_token_glued_to_both_sides():
    tokens = tokenize_line("a  b\tc", "en").split()
    assert len(tokens) == 5 and tokens[0] == "a" and tokens[2] == "b"
    assert join_tokens(" ".join(tokens)) == "a  b\tc"
    # a space between CJK characters is written out, as they touch by default
    assert join_tokens(tokenize_line("中 文", "zh")) == "中 文"


def test_lowercase_keeps_placeholders_and_the_spacing():
    assert detokenize_line(tokenize_line("Open %S, then Save.", "en", lowercase=True)) == \
        "open %S, then save."


def test_already_tokenized_text_is_split_at_whitespace_only():
    line = "  בְּ  רֵאשִׁית,x "
    tokenized = tokenize_line(line, "he", tokenize=False)
    assert "רֵאשִׁית,x" in tokenized.split()
    assert detokenize_line(tokenized) == line


def test_a_tokenizer_that_changes_characters_falls_back_to_whitespace_words():
    """Moses drops control characters: that stretch is split at whitespace instead, exactly."""
    line = "bell\x07 here, and there"
    assert detokenize_line(tokenize_line(line, "en")) == line


@pytest.mark.parametrize("hypothesis, expected", [
    (f"Hello {JOINER}, world {JOINER}.", "Hello, world."),
    (f"a {JOINER} b", "ab"),  # a joiner the model wrote alone joins its neighbours
    ("在 「 打开 」", "在「打开」"),
    ("", ""),
])
def test_a_hypothesis_is_joined_as_its_tokens_say(hypothesis, expected):
    assert join_tokens(hypothesis) == expected
