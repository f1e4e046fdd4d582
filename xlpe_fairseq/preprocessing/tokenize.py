"""``xlpe-tokenize``: a file tokenized line by line, reversibly, in parallel chunks.

The rules are ``text.tokenization``'s: Moses, jieba for zh, MeCab for ja, placeholders kept
whole, and the line's spacing recorded in the tokens, so that detokenization gives it back
exactly.

``--no-tokenize`` is for a side that is already tokenized (e.g. the Hebrew of the Bible
corpus): it splits at whitespace only and applies ``--lowercase``. A language without rules
of its own in Moses (e.g. ``tr``, ``he``) is tokenized by the general rules with English's
non-breaking prefixes, which the command says.
"""
import argparse
import functools
import sys

from ..help_format import HelpFormatter
from ..io import (
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
from ..text.tokenization import has_rules, tokenize_line


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


def warn_without_rules(lang):
    """Say that Moses has no rules for ``lang``, where it has none: the general rules apply."""
    if not has_rules(lang):
        print(f"xlpe-tokenize: warning: Moses has no rules for '{lang}': the general rules "
              "apply, with English's non-breaking prefixes (Mr., e.g.)", file=sys.stderr)


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
                        help="input is already tokenized: split at whitespace only (and lowercase)")
    add_parallel_arguments(parser, chunk_size=20000)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.tokenize:
        warn_without_rules(args.lang)
    run_command(
        lambda: tokenize_file(args.input, args.output, args.lang, args.lowercase, args.tokenize,
                              args.workers, args.chunk_size),
        "xlpe-tokenize",
    )


if __name__ == "__main__":
    main()
