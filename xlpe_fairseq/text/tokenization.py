"""Tokenization of one line by language, the rules every command shares.

As in the DPE setup (Zheng et al. 2021, Sec. 4.1) text is tokenized with the Moses rules and
optionally lowercased. Chinese and Japanese are segmented into words instead (jieba, MeCab;
``word_segmentation``), since the Moses rules only split at spaces and punctuation.
``escape=False`` keeps ``&``, ``<``, quotes etc. as they are, since fairseq needs no XML
escaping. A regional code takes its language's rules (``zh-CN`` is segmented, ``pt-BR`` gets
Portuguese's); a language without rules of its own in Moses (e.g. ``tr``, ``he``) is tokenized
by the general rules with English's non-breaking prefixes.
"""
import functools

from .detokenization import base_language
from .placeholders import protected_segments
from .word_segmentation import SEGMENTED_LANGUAGES, segment_line


@functools.cache
def _moses_tokenizer(lang):
    from sacremoses import MosesTokenizer  # loaded once per worker process

    return MosesTokenizer(lang=lang)


def tokenize_line(line, lang, lowercase=False, tokenize=True):
    """One tokenized line, tokens separated by single spaces. Placeholders, URLs, paths and
    (in zh and ja) ASCII words stay one token each, as written (``placeholders``); only the
    text between them is tokenized and lowercased. ``tokenize=False`` is for text that is
    already tokenized: spaces are normalized (and the line lowercased) only."""
    if not tokenize:
        line = " ".join(line.split())
        return line.lower() if lowercase else line
    rules = base_language(lang)
    segmented = rules in SEGMENTED_LANGUAGES
    tokens = []
    for text, protected in protected_segments(line, segmented):
        if protected:
            tokens.append(text)
            continue
        if segmented:
            text = segment_line(text, rules)
        else:
            text = _moses_tokenizer(rules).tokenize(text, escape=False, return_str=True)
        tokens.append(text.lower() if lowercase else text)
    return " ".join(" ".join(tokens).split())


def has_rules(lang):
    """Whether ``lang`` has rules of its own: a segmenter, or Moses's non-breaking prefixes
    (without them Moses takes English's)."""
    from sacremoses.corpus import NonbreakingPrefixes

    rules = base_language(lang)
    return rules in SEGMENTED_LANGUAGES or rules in NonbreakingPrefixes().available_langs
