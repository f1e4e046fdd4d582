"""``xlpe-tokenize``: reversible Moses tokenization (sacremoses), in parallel chunks.

As in the DPE setup (Zheng et al. 2021, Sec. 4.1) text is tokenized with the Moses rules and
optionally lowercased. Chinese (``--lang zh``) and Japanese (``--lang ja``) are segmented into
words instead (jieba, MeCab; see ``word_segmentation``), since the Moses rules only split
at spaces and punctuation. ``escape=False`` keeps ``&``, ``<``, quotes etc. as they are, since
fairseq needs no XML escaping. ``--no-tokenize`` is for a side that is already tokenized
(e.g. the Hebrew of the Bible corpus): it splits at whitespace only and applies
``--lowercase``. Either way the tokens record the line's spacing (``text.spacing``: a joiner
``￭`` where two tokens touch, whitespace other than one space as a token of its own), so that
detokenization gives the line back exactly, in every language. A regional code takes its language's rules (``zh-CN`` is segmented, ``pt-BR``
gets Portuguese's); a language without rules of its own in Moses (e.g. ``tr``, ``he``) is
tokenized by the general rules with English's non-breaking prefixes, which the command says.
"""
import argparse
import functools
import sys

from ..evaluation.detokenize import base_language
from ..help_format import HelpFormatter
from ..io import (
    InputError,
    add_parallel_arguments,
    atomic_output,
    check_outputs,
    count_lines,
    language_code,
    parallel_imap,
    read_chunks,
    require_files,
    run_command,
)
from ..text.spacing import segment_pieces, spaced_tokens
from .placeholders import protected_segments
from .word_segmentation import SEGMENTED_LANGUAGES, segment_words


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
    (``text.spacing``). Placeholders, URLs, paths, tags and (in zh and ja) ASCII words stay one
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


# what recipe.env's TOKENIZATION= says of a corpus tokenized by tokenize_line, and the tokenize
# step's setting: a corpus tokenized before the tokens recorded spacing has no such line
TOKENIZATION = "reversible"


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


def _tokenize_chunk(chunk, lang, lowercase, tokenize):
    _, lines = chunk
    return [tokenize_line(line, lang, lowercase, tokenize) + "\n" for line in lines]


def tokenize_file(input_path, output_path, lang, lowercase=False, tokenize=True, workers=1,
                  chunk_size=20000):
    require_files([input_path])
    check_outputs([output_path], [input_path])
    work = functools.partial(_tokenize_chunk, lang=lang, lowercase=lowercase, tokenize=tokenize)
    with atomic_output(output_path) as out:
        for lines in parallel_imap(work, read_chunks(input_path, chunk_size), workers,
                                   total=count_lines(input_path), desc=f"tokenize {input_path}"):
            out.writelines(lines)


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-tokenize", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--lang", required=True, type=language_code,
                        help="language code for the Moses rules, e.g. en; zh and ja are "
                        "word-segmented (jieba, MeCab) instead")
    parser.add_argument("--input", required=True, help="raw text, one sentence a line")
    parser.add_argument("--output", required=True, help="tokenized text to write")
    parser.add_argument("--lowercase", action="store_true", help="lowercase the output")
    parser.add_argument("--no-tokenize", dest="tokenize", action="store_false",
                        help="input is already tokenized: only normalize spaces (and lowercase)")
    add_parallel_arguments(parser, chunk_size=20000)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.tokenize and not has_rules(args.lang):
        print(f"xlpe-tokenize: warning: Moses has no rules for '{args.lang}': the general "
              "rules apply, with English's non-breaking prefixes (Mr., e.g.)", file=sys.stderr)
    run_command(
        lambda: tokenize_file(args.input, args.output, args.lang, args.lowercase, args.tokenize,
                              args.workers, args.chunk_size),
        "xlpe-tokenize",
    )


if __name__ == "__main__":
    main()
