"""Placeholders and identifiers that tokenization must keep whole, in every language.

The Moses rules split every symbol from a word (``%s`` becomes ``% s``, ``{0}`` ``{ 0 }``,
``&File`` ``& File``), and MeCab and jieba split ASCII words at each change of character class
(``blake2b`` becomes ``blake 2 b``, ``gpg-agent`` ``gpg - agent``). A translation of
``Error: %s not found`` then reads ``% s: % s``. ``protected_segments`` cuts a line into the
spans that must stay one token, as written, and the text between them, which the language's
tokenizer handles as before:

- format placeholders: printf's (``%s``, ``%d``, ``%5.2f``, ``%1$s``, ``%%``), Python's
  ``%(name)s``, Qt's and LibreOffice's ``%1`` and ``%PRODUCTNAME``, ``{0}``, ``{name}``,
  ``{}``, HTML's entities (``&amp;``), shell and LibreOffice variables (``$HOME``, ``${var}``, ``$(ARG1)``);
- menu accelerators: ``&File``, ``E&xit``, ``~Save``, ``_Open`` (a marker inside or before an
  ASCII word; ``R&D`` stays one token too, ``Tom & Jerry`` is untouched, ``&amp;`` is left to
  the tokenizer);
- URLs, e-mail addresses and file paths (``/usr/share``, ``~/.config``, ``./configure``,
  ``C:\\Windows``, ``data/train.en``; not ``and/or``).

A placeholder glued to more text without a space (``foo%s``, ``%d%%``, ``%s:%d``) keeps that
text in its token, so that it comes back as written; brackets, quotes, sentence punctuation
before a space and CJK characters stay outside. For Chinese and Japanese, whose segmenters cut
ASCII words apart, ``segmented=True`` also keeps each ASCII word whole (``blake2b``, ``x86_64``,
``gpg-agent``, ``--verbose``, ``ISO-8859-1``, ``v1.2.3``), as the Moses rules leave it on the
other side of the pair; the Moses rules keep those whole already.
"""
import re

from .spacing import CJK_CHARACTERS, CJK_PUNCTUATION

_PRINTF = (r"%(?:[1-9][0-9]*\$)?[-+#0']*(?:[0-9]+|\*)?(?:\.(?:[0-9]+|\*))?"
           r"(?:hh|h|ll|l|L|q|j|z|t|I64|I32)?[diouxXeEfFgGaAcCsSpn]")
_PYTHON_FORMAT = r"%\([A-Za-z_][A-Za-z0-9_.]*\)[-+#0 ]*[0-9]*(?:\.[0-9]+)?[diouxXeEfFgGcrsa]"
_NUMBERED = r"%L?[1-9][0-9]*"  # Qt's %1, %L1; LibreOffice's %1
_NAMED = r"%[A-Z][A-Z0-9_]+%?"  # LibreOffice's %PRODUCTNAME, Windows's %APPDATA%
_BRACES = r"\{[A-Za-z0-9_]*(?:[.\[\]][A-Za-z0-9_\]]*)*(?:![rsa])?(?::[^{}\s]*)?\}"
_ENTITY = r"&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#x[0-9A-Fa-f]+);"  # HTML's &amp; &#160;
# strftime's conversions (%H:%M, %Y-%m-%d, %-d, %Ex), where printf's letters end
_STRFTIME = r"%[-_0^#]?[EO]?[A-Za-z+](?![A-Za-z0-9_])"
# markup without attributes: <b>, </b>, <br/>
_TAG = r"</?[A-Za-z][A-Za-z0-9]*/?>"
_VARIABLES = r"\$(?:\{[A-Za-z0-9_]+\}|\([A-Za-z0-9_]+\)|[A-Za-z_][A-Za-z0-9_]*)"
# an ASCII word with an accelerator's marker (or an underscore, which the Moses rules split at)
_ACCELERATOR = r"[A-Za-z0-9_]*(?:&(?![A-Za-z0-9]+;)[A-Za-z0-9_]+|~[A-Za-z0-9_]+|_[A-Za-z0-9_]*)"
_URL = r"(?:[A-Za-z][A-Za-z0-9+.\-]*://|www\.)[!-~]*?(?=[.,;:!?'\")\]}>]*(?:[^!-~]|$))"
_EMAIL = r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+"
# a path component does not end with a dot, so that a path ending a sentence leaves the full stop
_PART = r"[A-Za-z0-9_.+\-@%~]*[A-Za-z0-9_+\-@%~]"
# an absolute path starts a word: not dem-/derselben
_PATH = (rf"(?<![^\s(\[{{<\"'=:\u2018\u201c\u00ab{CJK_CHARACTERS}{CJK_PUNCTUATION}])"
         rf"(?:~|\.{{1,2}})?(?:/{_PART})+/?"  # absolute, home and ./ paths
         rf"|[A-Za-z]:\\(?:{_PART}\\?)*"  # Windows
         rf"|[A-Za-z0-9_.\-]+/(?:{_PART}/)+{_PART}"  # relative with two slashes or more
         rf"|[A-Za-z0-9_.\-]+/[A-Za-z0-9_\-]+\.[A-Za-z0-9]{{1,6}}(?![A-Za-z0-9_])")  # a/b.ext
# where a placeholder may not start or end: inside an ASCII word (``100%sure``) or path
_START = r"(?<![A-Za-z0-9_/\\])"
PLACEHOLDER = re.compile(
    f"{_START}(?:{_URL}|{_EMAIL}|{_PATH})"
    f"|(?:{_PYTHON_FORMAT}|{_PRINTF}|%%|{_NUMBERED}|{_NAMED}|{_BRACES}|{_ENTITY}|{_VARIABLES}"
    f"|{_STRFTIME})|(?P<tag>{_TAG})"
    f"|{_START}{_ACCELERATOR}(?![A-Za-z0-9_])")
# an ASCII word of a CJK line, with its inner connectors and an option's leading dashes
ASCII_WORD = re.compile(r"(?<![A-Za-z0-9_])(?:-{1,2}(?=[A-Za-z]))?[A-Za-z0-9_]+"
                        r"(?:[-.+'#@:][A-Za-z0-9_]+)*(?:\+\+|#)?(?![A-Za-z0-9_])")
# what a placeholder's token does not take in from the text glued to it
_APART = f"\\s{CJK_CHARACTERS}{CJK_PUNCTUATION}" + "()\\[\\]<>\"'`\u2018-\u201f\u00ab\u00bb"
# (an apostrophe that ends a short word elides, as in French's l'%s and Italian's dell'%s: it
# is glued; after a longer word or a CJK character it opens a quotation: file'%s')
_GLUED_BEFORE = re.compile(f"(?:(?:^|(?<=\\s))[A-Za-z]{{1,5}}')?[^{_APART}]*$")
# (punctuation only where a word or placeholder follows: %s:%d, not %s... or %s.)
_GLUED_AFTER = re.compile(f"(?:[^{_APART}.,;:!?]|[.,;:!?](?=[A-Za-z0-9_%{{$&~]))+")


def protected_spans(line, segmented=False):
    """``(start, end)`` of the spans of ``line`` to keep as one token each, in order."""
    spans = []
    for match in PLACEHOLDER.finditer(line):
        start, end = match.span()
        if spans and start < spans[-1][1]:
            continue
        if match.group("tag"):  # a tag is its own token: the words it marks up are not
            spans.append((start, end))
            continue
        start = _GLUED_BEFORE.search(line, spans[-1][1] if spans else 0, start).start()
        glued = _GLUED_AFTER.match(line, end)
        if glued:
            end = glued.end()
        if spans and start <= spans[-1][1]:
            start = spans.pop()[0]
        spans.append((start, end))
    if segmented:
        spans = _with_ascii_words(line, spans)
    return spans


def _with_ascii_words(line, spans):
    words = [match.span() for match in ASCII_WORD.finditer(line)]
    merged = sorted(spans + [word for word in words
                             if not any(start < word[1] and word[0] < end for start, end in spans)])
    return merged


def protected_segments(line, segmented=False):
    """``line`` as ``(text, protected)`` pieces in order: each protected piece is one token as
    written, the others are left to the tokenizer."""
    pieces, position = [], 0
    for start, end in protected_spans(line, segmented):
        if start > position:
            pieces.append((line[position:start], False))
        pieces.append((line[start:end], True))
        position = end
    if position < len(line):
        pieces.append((line[position:], False))
    return pieces
