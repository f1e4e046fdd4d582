"""The raw line's spacing written into its tokens, so that detokenization gives it back exactly.

Tokenization (Moses rules, jieba, MeCab, placeholders kept whole) decides where a line splits;
this module records how the pieces were spaced in the raw line, as OpenNMT's Tokenizer does
with its joiner (Klein et al. 2017), and ``join_tokens`` rebuilds the line from that record
alone, whatever the language:

- tokens separated by one space in the raw line are separated by one space;
- tokens written together carry the joiner ``￭`` (U+FFED) on the side of the join: on the
  token that is punctuation or a symbol where one is (``Hello ￭,``, ``(￭ text ￭)``,
  ``C ￭+ ￭+``, ``a ￭/￭ b``), else at the start of the second (``打开 ￭PDF``);
- between two CJK characters no space is the rule, as Chinese and Japanese are written, and
  their segmented words carry no joiner (``在 「 打开 」``); a space there is written out;
- any other whitespace (a run of spaces, a tab, a no-break space, spaces that start or end the
  line) is a token of its own, each character written as the private-use character
  U+F0000 + its code point, joined to both neighbours. A joiner the raw line holds is written
  the same way, so it is never taken for one.

Characters of plane 15's private-use area (U+F0000 and up), which no language writes, are the
record's own: a raw line holding one comes back with the character it stands for.

Where a tokenizer changed the text it split (Moses drops control characters), the pieces of
that stretch are its whitespace-separated words instead, so the record stays exact. A split
next to a combining mark (Moses cuts Thai vowel signs and Devanagari matras off their
letters) is undone: the mark belongs to its letter.
"""
import re
import unicodedata

JOINER = "\uffed"
# Han, kana and full-width/half-width forms: characters written without spaces between them
CJK_CHARACTERS = ("\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                  "\uff65-\uff9f\U00020000-\U0002fa1f")
# CJK symbols and punctuation (、。「」『』【】〜…), the full-width forms (，！？：；（）０-９),
# the ellipsis and middle dot
CJK_PUNCTUATION = "\u3000-\u303f\uff01-\uff60\u2026\u00b7"
_CODE_OFFSET = 0xF0000
_CODE_END = 0xFFFFD
# CJK punctuation written without spaces: the CJK symbols block and the full-width forms
# (not the ideographic space U+3000, which is whitespace)
_CJK_PUNCTUATION = "\u3001-\u303f\uff01-\uff60"


_UNSPACED = re.compile(f"[{CJK_CHARACTERS}{_CJK_PUNCTUATION}]")


def _code(character):
    return chr(_CODE_OFFSET + ord(character))


def _decoded(character):
    code = ord(character)
    return chr(code - _CODE_OFFSET) if _CODE_OFFSET <= code <= _CODE_END else character


def _is_mark(character):
    return unicodedata.category(character).startswith("M")


def _is_word_edge(character):
    return unicodedata.category(character)[0] in "LNM"


def _unspaced(left, right):
    """Whether two tokens touch without a space by default: CJK on both sides."""
    return bool(_UNSPACED.match(left[-1]) and _UNSPACED.match(right[0]))


def aligned_pieces(text, tokens):
    """``tokens`` (a tokenizer's split of ``text``) as ``(gap, token)`` pairs in order, each
    token a slice of ``text`` and its gap the whitespace before it; None where the tokens are
    not ``text``'s characters in order."""
    pieces, position = [], 0
    for token in tokens:
        if not token or any(character.isspace() for character in token):
            return None
        start = position
        while start < len(text) and text[start].isspace():
            start += 1
        if not text.startswith(token, start):
            return None
        pieces.append((text[position:start], token))
        position = start + len(token)
    if text[position:].strip():
        return None
    return pieces


def segment_pieces(text, tokens):
    """``(gap, token)`` pairs of one stretch of a line that a tokenizer split into ``tokens``,
    its whitespace-separated words where the tokens are not its characters, and splits next
    to a combining mark undone."""
    pieces = aligned_pieces(text, tokens) or aligned_pieces(text, text.split())
    merged = []
    for gap, token in pieces:
        if merged and not gap and (_is_mark(token[0]) or _is_mark(merged[-1][1][-1])):
            merged[-1] = (merged[-1][0], merged[-1][1] + token)
        else:
            merged.append((gap, token))
    return merged


def _takes_joiner(token, protected, edge):
    """Whether ``token``'s ``edge`` (0 or -1) may carry a joiner: punctuation and symbols do,
    and markup tags; words and placeholders (``%s``, ``{0}``) are kept as they are."""
    if protected:
        return token.startswith("<") and token.endswith(">")
    return not _is_word_edge(token[edge])


def _joined(previous, token):
    """Two ``(token, protected)`` written together, the joiner on the side of the join that is
    punctuation, a symbol or a tag, else at the start of the second."""
    (left, left_protected), (right, right_protected) = previous, token
    if not _takes_joiner(right, right_protected, 0) and (
            _takes_joiner(left, left_protected, -1) or right_protected and not left_protected):
        return (left + JOINER, left_protected), token
    return previous, (JOINER + right, right_protected)


def _whitespace_token(gap):
    return "".join(map(_code, gap)), True


def spaced_tokens(pieces, trailing=""):
    """The tokens of a line from its ``(gap, token, protected)`` pieces (``trailing``: the
    whitespace after the last), with the joiners and whitespace tokens that record its
    spacing; returns ``(token, protected)`` pairs, whitespace tokens counted as protected."""
    out = []
    for gap, token, protected in pieces:
        token = (token.replace(JOINER, _code(JOINER)), protected)
        if not out or gap not in ("", " "):
            if gap:
                out.append(_whitespace_token(gap))
        elif gap == " " and _unspaced(out[-1][0], token[0]):
            out.append(_whitespace_token(gap))
        elif gap == "" and not _unspaced(out[-1][0], token[0]):
            out[-1], token = _joined(out[-1], token)
        out.append(token)
    if trailing:
        out.append(_whitespace_token(trailing))
    return out


def _is_whitespace_token(body):
    return bool(body) and all(_decoded(character).isspace() and character != _decoded(character)
                              for character in body)


def join_tokens(line):
    """The raw line a spaced tokenization (``spaced_tokens``) records: tokens joined where a
    joiner or a whitespace token says so and between CJK characters, else by one space;
    whitespace tokens and escaped joiners decoded."""
    parts, previous, previous_glues = [], None, False
    for token in line.split():
        glues_left = token.startswith(JOINER)
        glues_right = token.endswith(JOINER)
        body = token.strip(JOINER)
        whitespace = _is_whitespace_token(body)
        text = "".join(map(_decoded, body))
        if not text:
            previous_glues = previous_glues or glues_left or glues_right
            continue
        if previous is not None and not (previous_glues or glues_left or whitespace
                                         or _unspaced(previous, text)):
            parts.append(" ")
        parts.append(text)
        previous, previous_glues = text, glues_right or whitespace
    return "".join(parts)
