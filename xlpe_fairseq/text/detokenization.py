"""Detokenization of translations by target language, the one every command uses.

The Moses detokenizer joins tokens as the target language is written. For Chinese and
Japanese it joins adjacent CJK characters but leaves a space on each side of full-width
punctuation (``在「打开」对话框 ， 选择``) and after sentence-final ``。``: these targets then
go through ``join_cjk``, which removes every space next to CJK punctuation and between two CJK
characters that the word segmenter split, inside curly quotes, and before an ASCII bracket
that follows a CJK character (``ファイル(&F)``, as the message catalogs write it). Other spaces
between CJK and Latin words stay as Moses leaves them (``%s が見つかりません``: the catalogs put
a space around a placeholder four times in five). Placeholders, URLs and paths come back as
written: tokenization kept each one token (``placeholders``).

Guillemets are quotes Moses does not know: it leaves a space on each side, so ``Файл «%s»
не найден.`` came back ``Файл « %s » не найден.``, and sacreBLEU's 13a, which splits ASCII
punctuation only, scored the reference's ``«%s»`` as one word the hypothesis never had. Most
languages that use them write them against what they quote, which way round by the language:
``«text»`` (Russian, Ukrainian, Belarusian, Bulgarian, Spanish, Italian, Portuguese, Greek,
Norwegian...), ``»text«`` (German, Danish, Czech, Slovak, Slovene, Croatian), ``«text»`` again
in Swiss German (``de-CH``). ``join_guillemets`` removes the space inside them for the
languages of ``GUILLEMETS``, looked up by the whole code, then by its language. The rule is
the language's, not learned from the target side: the detokenizer sees one line and a
language code (fairseq's ``--tokenizer xlpe`` has nothing else), typography fixes it per
language, and knowing which mark opens keeps nested quotes (``«Файл «%s» не найден»``)
right, which pairing marks in order would not. A mark without its partner (a truncated
hypothesis, or Swiss quotes under plain ``de``) keeps Moses's spaces. Languages not listed keep
Moses's spaces: French writes ``« texte »`` (as Moses leaves it), Swedish and Finnish
``»text»`` (one mark for both ends), and the single ``‹ ›`` also separate menu paths
(``Файл › Открыть``).
"""
import functools
import re

# Han, kana and full-width/half-width forms: characters written without spaces between them
CJK_CHARACTERS = ("\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                  "\uff65-\uff9f\U00020000-\U0002fa1f")
# CJK symbols and punctuation (、。「」『』【】〜…), the full-width forms (，！？：；（）０-９),
# the ellipsis and middle dot
CJK_PUNCTUATION = "\u3000-\u303f\uff01-\uff60\u2026\u00b7"
# curly quotes open and close Chinese quotations: they join a CJK neighbour, and what they
# quote (“%s”, “PDF”)
_QUOTES = "\u2018\u2019\u201c\u201d"
_OPENING_QUOTES = "\u2018\u201c"
_CLOSING_QUOTES = "\u2019\u201d"
_CJK = f"{CJK_CHARACTERS}{CJK_PUNCTUATION}"
_SPACES_TO_JOIN = re.compile(
    f"(?<=[{CJK_PUNCTUATION}]) +|"
    f" +(?=[{CJK_PUNCTUATION}])|"
    f"(?<=[{CJK_CHARACTERS}]) +(?=[{CJK_CHARACTERS}])|"
    f"(?<=[{_QUOTES}]) +(?=[{_CJK}])|"
    f"(?<=[{_CJK}]) +(?=[{_QUOTES}])|"
    f"(?<=[{_OPENING_QUOTES}]) +|"
    f" +(?=[{_CLOSING_QUOTES}])|"
    # a label's accelerator or note in ASCII brackets: ファイル(&F), 保存(S)
    f"(?<=[{CJK_CHARACTERS}]) +(?=\\()")

# languages written without spaces between words, whose segmented words are joined again
JOINED_LANGUAGES = ("zh", "ja")

# (opening, closing) guillemet of the languages that write them without a space inside
_INWARD, _OUTWARD = ("«", "»"), ("»", "«")
GUILLEMETS = {
    **dict.fromkeys(("ru", "uk", "be", "bg", "kk", "ky", "tg", "uz", "tt", "ba", "mn", "es",
                     "ca", "gl", "eu", "it", "pt", "el", "no", "nb", "nn", "lv", "et", "ro",
                     "sq", "hy", "az", "de-ch", "de-li"), _INWARD),
    **dict.fromkeys(("de", "da", "cs", "sk", "sl", "hr"), _OUTWARD),
}


def base_language(code):
    """The language of a code such as ``zh``, ``zh-CN`` or ``ja_JP``: ``zh``, ``ja``."""
    return code.lower().replace("_", "-").split("-")[0]


def join_cjk(line):
    """``line`` without spaces next to CJK punctuation or between CJK characters."""
    return _SPACES_TO_JOIN.sub("", line)


def guillemets(language):
    """The (opening, closing) guillemet of ``language`` (``GUILLEMETS``), or None where it
    writes them otherwise or not at all."""
    code = language.lower().replace("_", "-")
    return GUILLEMETS.get(code) or GUILLEMETS.get(base_language(code))


def join_guillemets(line, marks):
    """``line`` without the spaces inside each pair of the (opening, closing) guillemets
    ``marks`` (``guillemets``), pairs matched as nested; a mark without its partner keeps
    its spaces."""
    opening, closing = marks
    unclosed, inside = [], set()
    for position, character in enumerate(line):
        if character == opening:
            unclosed.append(position)
        elif character == closing and unclosed:
            start = unclosed.pop()
            # Moses leaves one space on each side of a mark it does not know
            inside.update(space for space in (start + 1, position - 1) if line[space] == " ")
    return "".join(c for position, c in enumerate(line) if position not in inside)


@functools.cache
def _moses_detokenizer(language):
    # imported here: sacremoses compiles its rules on import (0.3 s), and every fairseq command
    # with --user-dir imports this module through the plugin's tokenizer
    from sacremoses import MosesDetokenizer

    return MosesDetokenizer(lang=language)


def detokenize_line(line, language):
    """One tokenized line as ``language`` is written. Tokens are not unescaped: the tokenizer
    writes no XML escapes, so an ``&amp;`` in a translation is one the text had."""
    text = _moses_detokenizer(language).detokenize(line.split(), unescape=False)
    if base_language(language) in JOINED_LANGUAGES:
        return join_cjk(text)
    marks = guillemets(language)
    return join_guillemets(text, marks) if marks else text


def detokenize(lines, language):
    return [detokenize_line(line, language) for line in lines]
