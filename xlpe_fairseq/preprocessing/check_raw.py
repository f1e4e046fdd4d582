"""The raw valid and test text of a corpus, checked before a recipe's first step.

Every valid and test pair is aligned (its oracle order scores the preorderer), and the word
aligner refuses an empty sentence and one longer than it handles. It would find one only
after tokenization and BPE, in a file of its own that joins the splits
(``OUT/bpe/all.en line 67``): checked here, the message names the user's file and line.
Train needs no such check: its empty and long pairs are filtered out (``--max-len``); a side
without a single word is refused (``check_train``), as the filter would leave no pair.
BPE may split a line that fits into more pieces than the aligner takes: ``--bpe`` checks the
BPE text line by line and names the raw line it came from (valid and test keep their lines).

    python -m xlpe_fairseq.preprocessing.check_raw RAW/valid.fr RAW/valid.en ...
    python -m xlpe_fairseq.preprocessing.check_raw --bpe OUT/bpe/valid.fr RAW/valid.fr ...
"""
import re
import sys

from ..io import InputError, check_length, require_files, run_command, text_lines
from .word_alignment import MAX_TOKENS

MAX_ALIGNED = MAX_TOKENS["eflomal"]

# what tokenization leaves of a line: no whitespace, and none of the control characters the
# Moses rules delete
_NOT_A_WORD = re.compile(r"[\s\x00-\x1f]*")
_A_WORD_BYTE = re.compile(rb"[^\s\x00-\x1f]")


def has_word(text):
    """Whether ``text`` keeps a token after tokenization."""
    return not _NOT_A_WORD.fullmatch(text)


def word_count(line):
    """The words of ``line`` that tokenization keeps; tokenization and BPE split them further,
    never join them."""
    return sum(map(has_word, line.split()))


def fits_aligner(line):
    """Whether the word aligner takes ``line`` once tokenized: a word, and no more words than
    it handles."""
    return has_word(line) and (len(line.split()) <= MAX_ALIGNED
                               or word_count(line) <= MAX_ALIGNED)


def check_raw(paths):
    """InputError naming the first line of ``paths`` (raw valid/test text, under the line
    rule) that has no word or more words than the aligner takes."""
    require_files(paths)
    for path in paths:
        with text_lines(path) as lines:
            for lineno, line in enumerate(lines, start=1):
                if not has_word(line):
                    raise InputError(
                        f"{path} line {lineno}: empty line (a valid or test pair needs a word "
                        "on each side, for the word aligner); remove the pair from both sides")
                check_length(path, lineno, word_count(line), MAX_ALIGNED, "eflomal")


def check_train(paths):
    """InputError for a side of the training text (raw, under the line rule) without a single
    word: only empty or blank lines, which the length filter would all drop."""
    require_files(paths)
    for path in paths:
        with open(path, "rb") as stream:
            if not any(_A_WORD_BYTE.search(block)
                       for block in iter(lambda: stream.read(1 << 20), b"")):
                raise InputError(f"{path}: no line with a word (only empty or blank lines); "
                                 "training needs sentences")


def check_bpe(pairs):
    """InputError naming the raw line of the first BPE line, of ``(bpe, raw)`` path pairs,
    with more pieces than the aligner takes."""
    for bpe, raw in pairs:
        with text_lines(bpe) as lines:
            for lineno, line in enumerate(lines, start=1):
                pieces = len(line.split())
                if pieces > MAX_ALIGNED:
                    raise InputError(
                        f"{raw} line {lineno}: {pieces} tokens after tokenization and BPE, more "
                        f"than the {MAX_ALIGNED} that eflomal handles; split or leave out the "
                        "pair")


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--bpe"]:
        pairs = list(zip(args[1::2], args[2::2]))
        run_command(lambda: check_bpe(pairs), "prepare_corpus")
    else:
        run_command(lambda: check_raw(args), "prepare_corpus")


if __name__ == "__main__":
    main()
