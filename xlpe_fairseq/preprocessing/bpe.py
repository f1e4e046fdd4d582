"""``xlpe-bpe``: learn byte-pair-encoding merges and apply them with fastBPE.

Learning follows Sennrich, Haddow and Birch (2016): start from characters, with the end
of a word marked on its last character (``e</w>``), and repeatedly merge the most frequent
adjacent pair. PyPI's fastBPE ships only the applier (its ``fast learnbpe`` binary is not
installed), so learning is implemented here, with incremental pair counts and a lazy heap,
and writes fastBPE's codes format (``left right count`` a line) so that fastBPE applies
them. Codes are joint when learned on several files (e.g. both sides), separate otherwise.
"""
import argparse
import collections
import functools
import heapq
import os
import sys

from ..help_format import HelpFormatter
from ..io import (
    WORKERS,
    InputError,
    add_parallel_arguments,
    atomic_output,
    check_outputs,
    count_lines,
    default_workers,
    parallel_imap,
    positive_int,
    read_chunks,
    read_lines,
    require_files,
    run_command,
    temporary_directory,
)

END_OF_WORD = "</w>"
# lines per work unit of ``xlpe-bpe apply``
APPLY_CHUNK_SIZE = 50000


def count_words(paths, workers, chunk_size=100000):
    """Word frequencies over whitespace-tokenized files."""
    require_files(paths)
    counts = collections.Counter()
    for path in paths:
        chunks = read_chunks(path, chunk_size)
        results = parallel_imap(_count_chunk, chunks, workers, total=count_lines(path),
                                desc=f"count {path}", size=lambda result: result[0])
        for _, chunk_counts in results:
            counts.update(chunk_counts)
    return counts


def _count_chunk(chunk):
    _, lines = chunk
    counts = collections.Counter()
    for line in lines:
        counts.update(line.split())
    return len(lines), counts


def learn_bpe(word_counts, num_merges, min_frequency=2):
    """Return up to ``num_merges`` merges ``(left, right, count)``, most frequent first.

    Stops early when no pair occurs ``min_frequency`` times. Ties are broken by the
    lexicographically smallest pair so that the result is deterministic.

    A merge changes a word's pairs only next to where it merges, so only those are
    recounted; the rest of the word, however long, costs nothing. The heap of pair counts is
    lazy: a count that rises is pushed, one that falls is pushed again only when its stale
    entry reaches the top. Each symbol is one string object, however many words hold it.
    """
    symbols = {}
    words = [[symbols.setdefault(c, c) for c in word[:-1]]
             + [symbols.setdefault(word[-1] + END_OF_WORD, word[-1] + END_OF_WORD)]
             for word in word_counts]
    del symbols
    freqs = list(word_counts.values())
    pair_counts = collections.Counter()
    words_with_pair = collections.defaultdict(set)
    for index, (word, freq) in enumerate(zip(words, freqs)):
        for pair in zip(word, word[1:]):
            pair_counts[pair] += freq
            words_with_pair[pair].add(index)
    heap = [(-count, pair) for pair, count in pair_counts.items()]
    heapq.heapify(heap)

    merges = []
    while len(merges) < num_merges and heap:
        negative_count, pair = heapq.heappop(heap)
        count = pair_counts.get(pair, 0)
        if count != -negative_count:
            # a count that fell since its push: back in the heap at its present count
            if count > 0:
                heapq.heappush(heap, (-count, pair))
            continue
        if count < min_frequency:
            break
        merges.append((pair[0], pair[1], count))
        risen = set()
        merged = pair[0] + pair[1]  # one string for every word that gets it
        for index in words_with_pair.pop(pair):
            _merge_in_word(words, index, freqs[index], pair, merged, pair_counts,
                           words_with_pair, risen)
        del pair_counts[pair]
        for p in risen:
            if pair_counts[p] > 0:  # a pair can rise in one word and fall in another
                heapq.heappush(heap, (-pair_counts[p], p))
    return merges


def _merge_in_word(words, index, freq, pair, merged, pair_counts, words_with_pair, risen):
    """Merge every ``pair`` of ``words[index]`` into ``merged``, left to right without
    overlap, and move the
    counts of the pairs next to each merge to those of the new word (``risen``: the pairs
    whose count went up)."""
    left, right = pair
    old = words[index]
    last = len(old) - 1
    new = []
    gone = set()  # positions i of the old pairs (old[i], old[i + 1]) that a merge changes
    made = []  # positions of the new pairs that hold a merged symbol
    k = 0
    while k <= last:
        if k < last and old[k] == left and old[k + 1] == right:
            gone.update(range(max(k - 1, 0), min(k + 2, last)))
            if new:
                made.append(len(new) - 1)
            made.append(len(new))
            new.append(merged)
            k += 2
        else:
            new.append(old[k])
            k += 1
    if made and made[-1] == len(new) - 1:
        made.pop()  # the word ends in the merged symbol: no pair after it
    for i in gone:
        pair_counts[old[i], old[i + 1]] -= freq
    new_pairs = set(zip(new, new[1:]))
    for i in gone:
        p = (old[i], old[i + 1])
        if p not in new_pairs and p != pair:
            words_with_pair[p].discard(index)
    for i in set(made):
        p = (new[i], new[i + 1])
        pair_counts[p] += freq
        words_with_pair[p].add(index)
        risen.add(p)
    words[index] = new


def write_codes(path, merges):
    with atomic_output(path) as f:
        for left, right, count in merges:
            f.write(f"{left} {right} {count}\n")


def write_checked_codes(codes_path, folder):
    """Check ``codes_path`` (``read_codes``) and write its merges to ``folder``/codes as
    fastBPE expects them (no byte-order mark, no CR); fastBPE reads that file, never the
    user's. Returns the copy's path."""
    merges = read_codes(codes_path)
    checked_codes = os.path.join(folder, "codes")
    with open(checked_codes, "w", encoding="utf-8") as f:
        f.writelines(f"{left} {right} {count}\n" for left, right, count in merges)
    return checked_codes


@functools.cache
def bpe_applier(checked_codes):
    """fastBPE's applier of codes written by ``write_checked_codes``, loaded without the
    "Loading codes ... / Read N codes" lines its C++ prints on stderr."""
    import fastBPE  # a compiled module not needed for learning

    sys.stderr.flush()
    saved_stderr = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            return fastBPE.fastBPE(checked_codes)
    finally:
        os.dup2(saved_stderr, 2)
        os.close(saved_stderr)


def _apply_chunk(chunk, codes_path):
    _, lines = chunk
    return [line + "\n" for line in bpe_applier(codes_path).apply(lines)]


def read_codes(path):
    """The merges ``(left, right, count)`` of a codes file, each line checked.

    fastBPE reads codes without checking them: a line of fewer than three fields crashes it
    (a segmentation fault), so every line must be ``left right count``, single spaces, the
    count a non-negative integer, no pair twice, and the file must hold at least one merge.
    """
    merges, seen = [], set()
    for lineno, line in enumerate(read_lines(path), start=1):
        fields = line.split(" ")
        if len(fields) != 3 or not all(fields) or not (fields[2].isascii()
                                                       and fields[2].isdigit()):
            raise InputError(f"{path} line {lineno}: expected a merge 'left right count' "
                             f"(single spaces, count an integer), found {line!r}")
        if (fields[0], fields[1]) in seen:
            raise InputError(f"{path} line {lineno}: the merge {fields[0]!r} {fields[1]!r} "
                             "occurs twice")
        seen.add((fields[0], fields[1]))
        merges.append((fields[0], fields[1], int(fields[2])))
    if not merges:
        raise InputError(f"{path}: no merges (expected 'left right count' lines from "
                         "xlpe-bpe learn)")
    return merges


def apply_bpe_file(codes_path, input_path, output_path, workers=1,
                   chunk_size=APPLY_CHUNK_SIZE):
    """Apply BPE codes to a tokenized file (``@@ `` marks a split), chunk by chunk."""
    require_files([codes_path, input_path])
    check_outputs([output_path], [codes_path, input_path])
    with atomic_output(output_path) as out, \
            temporary_directory(os.path.dirname(os.path.abspath(output_path)),
                                ".xlpe-bpe.") as tmp:
        checked_codes = write_checked_codes(codes_path, tmp)
        work = functools.partial(_apply_chunk, codes_path=checked_codes)
        for lines in parallel_imap(work, read_chunks(input_path, chunk_size), workers,
                                   total=count_lines(input_path), desc=f"bpe {input_path}"):
            out.writelines(lines)


def learn_codes(inputs, codes, merges, min_frequency=2, workers=1):
    """``xlpe-bpe learn``: ``merges`` joint codes learned on the ``inputs`` (tokenized files)
    written to ``codes``; InputError where they hold no words or no pair frequent enough."""
    check_outputs([codes], inputs)
    counts = count_words(inputs, workers)
    if not counts:
        raise InputError(f"{', '.join(inputs)}: no words to learn BPE codes from")
    learned = learn_bpe(counts, merges, min_frequency)
    if not learned:
        raise InputError(f"{', '.join(inputs)}: no pair of symbols occurs "
                         f"--min-frequency {min_frequency} times: no codes")
    write_codes(codes, learned)


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-bpe", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    learn = commands.add_parser("learn", help="learn BPE codes (joint if several inputs)",
                                formatter_class=HelpFormatter)
    learn.add_argument("--input", nargs="+", required=True,
                       help="tokenized training text; several files give joint codes")
    learn.add_argument("--codes", required=True, help="codes file to write (fastBPE format)")
    learn.add_argument("--merges", type=positive_int, required=True,
                       help="number of merge operations")
    learn.add_argument("--min-frequency", type=positive_int, default=2,
                       help="stop when the best pair is rarer than this (default: 2)")
    learn.add_argument("--workers", type=WORKERS, default=default_workers(),
                       help="processes for word counting (default: all cores)")

    apply = commands.add_parser("apply", help="apply BPE codes to one file",
                                formatter_class=HelpFormatter)
    apply.add_argument("--codes", required=True, help="codes file (fastBPE format)")
    apply.add_argument("--input", required=True, help="tokenized text")
    apply.add_argument("--output", required=True, help="BPE text to write")
    add_parallel_arguments(apply, chunk_size=APPLY_CHUNK_SIZE)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    def body():
        if args.command == "learn":
            learn_codes(args.input, args.codes, args.merges, args.min_frequency, args.workers)
        else:
            apply_bpe_file(args.codes, args.input, args.output, args.workers, args.chunk_size)

    run_command(body, "xlpe-bpe")


if __name__ == "__main__":
    main()
