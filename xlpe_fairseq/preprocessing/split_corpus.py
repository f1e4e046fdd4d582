"""Hold out valid and/or test pairs of a parallel corpus, drawn at random with a fixed seed.

Used by ``xlpe-prepare`` when a corpus comes as one pair of files: each held-out
split takes ``min(1000, 5%)`` of the pairs (at least 1), the rest stays for training, every
split in the corpus's order. The same files and seed always give the same splits.

    python -m xlpe_fairseq.preprocessing.split_corpus --source train.fr --target train.en \\
        --out DIR --splits valid test
"""
import argparse
import os
import random
import sys

from ..io import (
    SEED,
    InputError,
    atomic_output,
    check_same_line_count,
    positive_int,
    read_lines,
    run_command,
    text_lines,
)
from .check_raw import fits_aligner

MAX_HELD_OUT = 1000
HELD_OUT_SHARE = 0.05


def held_out_size(pairs):
    return max(1, min(MAX_HELD_OUT, int(pairs * HELD_OUT_SHARE)))


def split_indices(pairs, splits, seed, size=None, usable=None):
    """``{split: sorted line indices}`` for ``train`` and each held-out split, the held-out
    ones drawn among the ``usable`` pairs (a list of booleans; default: all). The draw takes
    them in one random order, skipping the others, so that where none is skipped the splits
    are the ones drawn from all pairs."""
    size = size or held_out_size(pairs)
    if pairs - size * len(splits) < 1:
        raise InputError(f"{pairs} pairs: too few to hold out {size} for each of "
                         f"{', '.join(splits)} and keep any for training")
    order = list(range(pairs))
    random.Random(seed).shuffle(order)
    held = [i for i in order if usable is None or usable[i]][:size * len(splits)]
    if len(held) < size * len(splits):
        raise InputError(f"only {len(held)} of the {pairs} pairs can be held out (a word on "
                         "each side, none longer than the word aligner takes): too few for "
                         f"{size} in each of {', '.join(splits)}")
    chosen = {split: sorted(held[i * size:(i + 1) * size]) for i, split in enumerate(splits)}
    taken = set(held)
    chosen["train"] = [i for i in range(pairs) if i not in taken]
    return chosen


def split_corpus(source, target, out, splits, seed=1, size=None):
    """Write ``out/{train,SPLIT...}.{ext}`` with the extensions of ``source`` and ``target``."""
    pairs = check_same_line_count([source, target])
    with text_lines(source) as source_lines, text_lines(target) as target_lines:
        usable = [fits_aligner(s) and fits_aligner(t) for s, t in zip(source_lines, target_lines)]
    chosen = split_indices(pairs, splits, seed, size, usable)
    for path in (source, target):  # one side in memory at a time
        lines = read_lines(path)
        extension = os.path.splitext(path)[1]
        for split, indices in chosen.items():
            with atomic_output(os.path.join(out, split + extension)) as f:
                f.writelines(lines[i] + "\n" for i in indices)
    return {split: len(indices) for split, indices in chosen.items()}


def split_and_report(source, target, out, splits, seed=1, size=None):
    """``split_corpus``, then the pairs of each split said."""
    counts = split_corpus(source, target, out, splits, seed, size)
    print("== " + ", ".join(f"{split}: {n} pairs" for split, n in counts.items()),
          file=sys.stderr)


def build_parser():
    parser = argparse.ArgumentParser(prog="split_corpus", description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="source side, e.g. raw/train.fr")
    parser.add_argument("--target", required=True, help="target side, e.g. raw/train.en")
    parser.add_argument("--out", required=True,
                        help="folder for train.LANG and SPLIT.LANG (LANG: the inputs' extensions)")
    parser.add_argument("--splits", nargs="+", choices=["valid", "test"], default=["valid", "test"],
                        help="held-out splits to make (default: valid test)")
    parser.add_argument("--size", type=positive_int,
                        help=f"pairs in each held-out split (default: {HELD_OUT_SHARE:.0%} of the "
                        f"pairs, at most {MAX_HELD_OUT})")
    parser.add_argument("--seed", type=SEED, default=1, help="seed of the draw (default: 1)")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if os.path.splitext(args.source)[1] == os.path.splitext(args.target)[1]:
        parser.error("--source and --target need different language extensions")

    run_command(lambda: split_and_report(args.source, args.target, args.out, args.splits,
                                         args.seed, args.size), parser.prog)


if __name__ == "__main__":
    main()
