"""Detokenization, the one every command uses: a tokenized line as it was written.

The tokens record the raw line's spacing (``spacing``: a joiner where two tokens touched,
whitespace other than one space as a token of its own, no space between CJK characters), so
the line comes back exactly, in every language: placeholders, quotes of every language
(``«%s»``, ``»Datei«``, ``“%s”``, ``« texte »``), ``C++``, paths, tags, runs of spaces and tabs,
Chinese and Japanese without spaces. A translation comes back as its tokens say, whatever its
language, so detokenization needs no language code.
"""
from .spacing import join_tokens


def base_language(code):
    """The language of a code such as ``zh``, ``zh-CN`` or ``ja_JP``: ``zh``, ``ja``."""
    return code.lower().replace("_", "-").split("-")[0]


def detokenize_line(line):
    """The line a tokenized line (``tokenization.tokenize_line``) was made from; BPE's ``@@ ``
    must be removed first (fairseq's ``--remove-bpe``)."""
    return join_tokens(line)


def detokenize(lines):
    return [detokenize_line(line) for line in lines]
