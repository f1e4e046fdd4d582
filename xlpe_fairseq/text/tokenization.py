"""Tokenization of one line by language, the rules every command shares, reversible.

As in the DPE setup (Zheng et al. 2021, Sec. 4.1) text is tokenized with the Moses rules and
optionally lowercased. Chinese and Japanese are segmented into words instead (jieba, MeCab;
``word_segmentation``), since the Moses rules only split at spaces and punctuation.
``escape=False`` keeps ``&``, ``<``, quotes etc. as they are, since fairseq needs no XML
escaping. A regional code takes its language's rules (``zh-CN`` is segmented, ``pt-BR`` gets
Portuguese's); a language without rules of its own in Moses (e.g. ``tr``, ``he``) is tokenized
by the general rules with English's non-breaking prefixes. The rules decide where a line
splits; the tokens then record how the pieces were spaced (``spacing``: a joiner ``￭`` where
two touched, whitespace other than one space as a token of its own), so that
``detokenization`` gives the line back exactly, in every language.
"""
import functools

from ..io import InputError
from .detokenization import base_language
from .placeholders import protected_segments
from .spacing import segment_pieces, spaced_tokens
from .word_segmentation import SEGMENTED_LANGUAGES, segment_words

# what recipe.env's TOKENIZATION= says of a corpus tokenized by tokenize_line, and the tokenize
# step's setting: a corpus tokenized before the tokens recorded spacing has no such line
TOKENIZATION = "reversible"


@functools.cache
def _moses_tokenizer(lang):
    from sacremoses import MosesTokenizer  # loaded once per worker process

    return MosesTokenizer(lang=lang)


def _words(text, rules):
    """The words the language's rules split ``text`` into."""
    if rules in SEGMENTED_LANGUAGES:
        return segment_words(text, rules)
    return _moses_tokenizer(rules).tokenize(text, escape=False)


def tokenize_line(line, lang, lowercase=False, tokenize=True):
    """One tokenized line, tokens separated by single spaces, that ``detokenize_line`` turns
    back into ``line`` exactly (lowercased with ``lowercase``): the tokens record its spacing
    (``spacing``). Placeholders, URLs, paths, tags and (in zh and ja) ASCII words stay one
    token each, as written (``placeholders``); only the text between them is split by the
    language's rules and lowercased. ``tokenize=False`` is for text that is already
    tokenized: it is split at whitespace only."""
    rules = base_language(lang)
    segmented = rules in SEGMENTED_LANGUAGES
    pieces, gap = [], ""
    for text, protected in (protected_segments(line, segmented) if tokenize else [(line, False)]):
        if protected:
            pieces.append((gap, text, True))
            gap = ""
            continue
        words = _words(text, rules) if tokenize else text.split()
        for before, word in segment_pieces(text, words):
            pieces.append((gap + before, word, False))
            gap = ""
        # the whitespace after the last word goes before the next piece
        gap += text[len(text.rstrip()):] if text.strip() else text
    return " ".join(token.lower() if lowercase and not protected else token
                    for token, protected in spaced_tokens(pieces, gap))


def check_tokenization(recipe_env, value):
    """Fail in one line unless ``value`` (recipe.env's ``TOKENIZATION``) is ``TOKENIZATION``:
    a corpus tokenized otherwise has no spacing in its tokens to detokenize with."""
    if value != TOKENIZATION:
        raise InputError(f"{recipe_env}: the corpus was tokenized by an earlier xlpe-fairseq "
                         f"(TOKENIZATION={value or ''}, not {TOKENIZATION}), whose tokens do not "
                         "give the text back: rerun xlpe-prepare (or its recipe) on it")


def has_rules(lang):
    """Whether ``lang`` has rules of its own: a segmenter, or Moses's non-breaking prefixes
    (without them Moses takes English's)."""
    from sacremoses.corpus import NonbreakingPrefixes

    rules = base_language(lang)
    return rules in SEGMENTED_LANGUAGES or rules in NonbreakingPrefixes().available_langs
