"""``xlpe-preorder-crossfit``: preorderer positions for the training set, cross-fitted.

XL PE (Ding et al. 2020) trains on BTG positions from the word alignment and is tested on
a source-only preorderer's. To train on the kind of positions the model will see, the
training set needs preorderer positions too, but a preorderer predicting its own training
sentences is better on them than on new text. Cross-fitting avoids that: the sentences are
dealt into k folds (sentence i to fold i mod k) and each fold is predicted by a preorderer
trained on the other k - 1 (same settings as ``xlpe-preorder-train``). ``--mixed-output``
also writes a mix: each sentence keeps its oracle positions with probability
``--oracle-fraction`` (seeded), else takes the cross-fitted ones.
"""
import argparse
import random
import sys

from ..help_format import HelpFormatter
from ..io import Number, atomic_output, check_outputs, run_command
from .corpus import read_source_with_reorder
from .train import (
    add_training_arguments,
    parse_with_valid_pair,
    torch_threads,
    train_preorderer,
    training_settings,
)


def cross_fit(sentences, positions, folds, valid=None, log=None, **settings):
    """Out-of-fold predictions for every sentence (see the module docstring)."""
    if folds < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, got {folds}")
    log = log or (lambda line: None)
    predicted = [None] * len(sentences)
    for fold in range(folds):
        held_out = range(fold, len(sentences), folds)
        kept = [k for k in range(len(sentences)) if k % folds != fold]
        log(f"fold {fold + 1}/{folds}: training on {len(kept)} sentences")
        preorderer = train_preorderer([sentences[k] for k in kept], [positions[k] for k in kept],
                                      valid, log=log, **settings)
        for k, p in zip(held_out, preorderer.predict([sentences[k] for k in held_out])):
            predicted[k] = p
    return predicted


def mix(oracle, predicted, oracle_fraction, seed):
    """Per sentence, the oracle positions with probability ``oracle_fraction``, else predicted."""
    rng = random.Random(seed)
    return [o if rng.random() < oracle_fraction else p for o, p in zip(oracle, predicted)]


def write_reorder(path, rows):
    with atomic_output(path) as out:
        for positions in rows:
            out.write(" ".join(map(str, positions)) + "\n")


def cross_fit_files(source, reorder, output, mixed_output=None, valid_source=None,
                    valid_reorder=None, folds=2, oracle_fraction=0.5, threads=1, seed=1,
                    **settings):
    """``xlpe-preorder-crossfit``: ``source``'s cross-fitted positions (``cross_fit``) written
    to ``output``, and their mix with the oracle ``reorder`` to ``mixed_output`` if given, on
    ``threads`` of torch's; ``seed`` seeds the training and the mix, ``settings`` are
    ``train_preorderer``'s other keywords."""
    with torch_threads(threads):
        inputs = [source, reorder] + ([valid_source, valid_reorder] if valid_source else [])
        check_outputs([output, mixed_output], inputs)
        sentences, positions = read_source_with_reorder(source, reorder)
        valid = None
        if valid_source:
            valid = read_source_with_reorder(valid_source, valid_reorder)
        predicted = cross_fit(
            sentences, positions, folds, valid, seed=seed, **settings,
            log=lambda line: print(f"xlpe-preorder-crossfit: {line}", file=sys.stderr,
                                   flush=True))
        write_reorder(output, predicted)
        if mixed_output:
            write_reorder(mixed_output,
                          mix(positions, predicted, oracle_fraction, seed))


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-preorder-crossfit",
        description="Cross-fitted preorderer positions for a training set: k folds, each "
        "predicted by a preorderer trained on the others (for XL PE training positions "
        "that look like test-time ones).",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--output", required=True,
                        help="reorder file of the cross-fitted predictions")
    parser.add_argument("--folds", type=Number(int, minimum=2), default=2, help="number of folds (>= 2)")
    parser.add_argument("--mixed-output",
                        help="also write a mix of oracle and cross-fitted positions here")
    parser.add_argument("--oracle-fraction", type=Number(float, minimum=0, maximum=1), default=0.5,
                        help="share of sentences that keep oracle positions in --mixed-output")
    add_training_arguments(parser, save=False)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parse_with_valid_pair(parser, argv)
    if args.folds < 2:
        parser.error(f"--folds must be at least 2, got {args.folds}")
    if not 0.0 <= args.oracle_fraction <= 1.0:
        parser.error(f"--oracle-fraction must be in [0, 1], got {args.oracle_fraction}")

    run_command(lambda: cross_fit_files(
        args.source, args.reorder, args.output, args.mixed_output, args.valid_source,
        args.valid_reorder, args.folds, args.oracle_fraction, args.threads,
        **training_settings(args)), "xlpe-preorder-crossfit")


if __name__ == "__main__":
    main()
