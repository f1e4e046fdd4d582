"""Placeholders, URLs, paths and identifiers stay one token through tokenization in every
language (Moses rules, MeCab, jieba) and come back as written after detokenization, so that
a translation of "Error: %s not found" keeps its %s."""
import pytest

from xlpe_fairseq.text.detokenization import detokenize_line
from xlpe_fairseq.text.placeholders import protected_segments
from xlpe_fairseq.text.tokenization import tokenize_line

pytest.importorskip("fugashi", reason="Japanese segmentation: pip install 'xlpe-fairseq[ja]'")
pytest.importorskip("jieba", reason="Chinese segmentation: pip install 'xlpe-fairseq[zh]'")

# (language, line as written, the tokens that must each be one token, as written)
LINES = [
    ("en", "Error: %s not found", ["%s"]),
    ("en", "Cannot open '%s': %s.", ["%s"]),
    ("en", "%d%% done, %(count)d files in {0} and {name}.", ["%d%%", "%(count)d", "{0}", "{name}"]),
    ("en", "Use %1$s or %2$d; see http://example.com/a?b=1&c=2.",
     ["%1$s", "%2$d", "http://example.com/a?b=1&c=2"]),
    ("en", "&File, ~Save, _Open and E&xit", ["&File", "~Save", "_Open", "E&xit"]),
    ("en", "Mr. %s failed (see /usr/share/locale, ~/.config and C:\\Windows\\x.ini).",
     ["%s", "/usr/share/locale", "~/.config", "C:\\Windows\\x.ini"]),
    ("en", "Write to user@example.org about $HOME, ${XDG}, $(ARG1) and %PRODUCTNAME.",
     ["user@example.org", "$HOME", "${XDG}", "$(ARG1)", "%PRODUCTNAME"]),
    ("en", "blake2b and x86_64 in data/train.en, %s's", ["blake2b", "x86_64", "data/train.en"]),
    ("de", "Fehler: Datei „%s“ nicht gefunden: {0}", ["%s", "{0}"]),
    ("de", "%1 von %2 Seiten, &Datei", ["%1", "%2", "&Datei"]),
    ("fr", "Erreur : impossible d'ouvrir « %s » : %d", ["%s", "%d"]),
    ("fr", "l'%s est dans {dossier}.", ["l'%s", "{dossier}"]),
    ("ja", "エラー: %s が見つかりません", ["%s"]),
    ("ja", "%sが見つかりません。", ["%s"]),
    ("ja", "キャッシュ・ファイル'%s'の作成", ["%s"]),
    ("ja", "--%s は引数が必要です", ["--%s"]),
    ("ja", "ファイル(&F) %(name)s を {0} に保存", ["&F", "%(name)s", "{0}"]),
    ("ja", "blake2b と gpg-agent と --verbose と ISO-8859-1 と v1.2.3",
     ["blake2b", "gpg-agent", "--verbose", "ISO-8859-1", "v1.2.3"]),
    ("ja", "http://example.com/ を参照。/usr/share/locale にあります", ["http://example.com/",
                                                                   "/usr/share/locale"]),
    ("zh", "错误：找不到 %s", ["%s"]),
    ("zh", "无法打开“%s”：%d", ["%s", "%d"]),
    ("zh", "文件(&F) {0} 使用 --keep-session-cookies 和 blake2b",
     ["&F", "{0}", "--keep-session-cookies", "blake2b"]),
    ("zh", "请访问 https://www.libreoffice.org/。", ["https://www.libreoffice.org/"]),
]


@pytest.mark.parametrize("lang, line, kept", LINES)
def test_placeholders_are_one_token_and_come_back_as_written(lang, line, kept):
    tokens = tokenize_line(line, lang).split()
    for placeholder in kept:
        assert placeholder in tokens, f"{placeholder!r} split: {tokens}"
    detokenized = detokenize_line(" ".join(tokens))
    for placeholder in kept:
        assert detokenized.count(placeholder) == line.count(placeholder), detokenized
    assert "% s" not in detokenized and "{ " not in detokenized, detokenized


@pytest.mark.parametrize("lang, line, expected", [
    ("en", "Error: %s not found", "Error: %s not found"),
    ("en", "Cannot open '%s': %s.", "Cannot open '%s': %s."),
    ("en", "%d%% done, {0} of {1}.", "%d%% done, {0} of {1}."),
    ("de", "Fehler: „%s“ nicht gefunden.", "Fehler: „%s“ nicht gefunden."),
    ("fr", "l'%s est {0}.", "l'%s est {0}."),
    ("ja", "ファイル(&F)", "ファイル(&F)"),
    ("ja", "エラー: %s が見つかりません", "エラー: %s が見つかりません"),
    ("zh", "无法打开“%s”：%s", "无法打开“%s”：%s"),
])
def test_whole_lines_round_trip(lang, line, expected):
    assert detokenize_line(tokenize_line(line, lang)) == expected


def test_glued_text_stays_in_the_placeholders_token():
    """Text glued to a placeholder without a space is part of its token; brackets, quotes and a
    full stop before a space are not (joiners record that they touch it)."""
    assert tokenize_line("foo%s, %s:%d and (%s) '%s'.", "en").replace("\uffed", "") == \
        "foo%s , %s:%d and ( %s ) ' %s ' ."


def test_an_absolute_path_starts_a_word():
    assert tokenize_line("nach dem-/derselben Jahr in /usr/share", "de") == \
        "nach dem- \uffed/\uffed derselben Jahr in /usr/share"


def test_prose_is_tokenized_as_before():
    """What is not a placeholder is the Moses rules' as before: a percentage, an ampersand
    between words, and/or, HTML entities kept whole."""
    assert tokenize_line("50% off, Tom & Jerry and/or R&D, e.g. &amp; 100%.", "en") \
        .replace("\uffed", "") == "50 % off , Tom & Jerry and / or R&D , e.g. &amp; 100 % ."


def test_ascii_words_of_a_cjk_line_are_kept_whole_only_there():
    assert protected_segments("use gpg-agent", segmented=False) == [("use gpg-agent", False)]
    assert protected_segments("gpg-agent を使う", segmented=True) == [
        ("gpg-agent", True), (" を使う", False)]


def test_lowercasing_leaves_placeholders_as_written():
    assert tokenize_line("Open %S in {Name}", "en", lowercase=True) == "open %S in {Name}"


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_bpe_pieces_of_a_placeholder_join_again(lang):
    """fastBPE may split %s into %@@ s; fairseq's --remove-bpe joins the pieces, and the
    detokenized line has %s again."""
    from fairseq.data.data_utils import post_process

    tokens = tokenize_line("Error: %s not found" if lang == "en" else "エラー: %s が見つかりません"
                           if lang == "ja" else "错误：找不到 %s", lang).split()
    pieces = " ".join("%@@ s" if token == "%s" else token for token in tokens)
    assert "%s" in detokenize_line(post_process(pieces, "subword_nmt"))
