"""Reordering quality: Kendall's tau and the fuzzy reordering score, with a monotone baseline.

Both compare a hypothesis permutation with a reference one (reorder lines: the target-order
position of each source token).

- Kendall's tau: ``1 - 2 * discordant_pairs / (n (n - 1) / 2)``; 1 for the same order,
  -1 for the reversed one.
- Fuzzy reordering score (Talbot et al. 2011, "A Lightweight Evaluation Framework for Machine
  Translation Reordering"): ``1 - (chunks - 1) / (n - 1)``, where chunks is the least number
  of pieces the hypothesis order must be cut into so that each piece is a contiguous run of
  the reference order. Computed without sentence boundary markers.
- Exact match: the share of sentences whose hypothesis order is the reference order.

Sentences of fewer than two tokens have a single order; they are left out of corpus averages,
which are plain means over the remaining sentences.
"""
import argparse
import bisect

from ..help_format import HelpFormatter
from ..io import (
    InputError,
    check_same_line_count,
    require_lines,
    run_command,
)
from .corpus import read_reorder, read_tokens


def kendall_tau(hypothesis, reference):
    """Kendall's tau between two permutations of ``range(n)`` (1.0 when n < 2)."""
    n = len(reference)
    if len(hypothesis) != n:
        raise ValueError(f"hypothesis has {len(hypothesis)} positions, reference has {n}")
    if n < 2:
        return 1.0
    # hypothesis positions read in reference order: discordant pairs are its inversions
    in_reference_order = [0] * n
    for token, position in enumerate(reference):
        in_reference_order[position] = hypothesis[token]
    seen = []
    discordant = 0
    for value in in_reference_order:
        discordant += len(seen) - bisect.bisect_right(seen, value)
        bisect.insort(seen, value)
    return 1.0 - 4.0 * discordant / (n * (n - 1))


def fuzzy_reordering_score(hypothesis, reference):
    """Talbot et al. (2011)'s fuzzy reordering score of two permutations (1.0 when n < 2)."""
    n = len(reference)
    if len(hypothesis) != n:
        raise ValueError(f"hypothesis has {len(hypothesis)} positions, reference has {n}")
    if n < 2:
        return 1.0
    # reference positions read in hypothesis order; a chunk ends where they stop counting up
    in_hypothesis_order = [0] * n
    for token, position in enumerate(hypothesis):
        in_hypothesis_order[position] = reference[token]
    chunks = 1 + sum(nxt != prev + 1
                     for prev, nxt in zip(in_hypothesis_order, in_hypothesis_order[1:]))
    return 1.0 - (chunks - 1) / (n - 1)


def corpus_scores(hypotheses, references):
    """Mean Kendall's tau, FRS and exact match over sentences of two or more tokens, and their
    count."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    pairs = [(h, r) for h, r in zip(hypotheses, references) if len(r) >= 2]
    count = max(len(pairs), 1)
    return {
        "kendall_tau": sum(kendall_tau(h, r) for h, r in pairs) / count,
        "fuzzy_reordering_score": sum(fuzzy_reordering_score(h, r) for h, r in pairs) / count,
        "exact_match": sum(list(h) == list(r) for h, r in pairs) / count,
        "sentences": len(pairs),
    }


def monotone_scores(references):
    """``corpus_scores`` of keeping the source order."""
    return corpus_scores([list(range(len(r))) for r in references], references)


def format_scores(hypothesis, monotone):
    return (
        f"sentences scored (>= 2 tokens): {hypothesis['sentences']}\n"
        f"{'':12}{'Kendall tau':>12}{'FRS':>8}{'exact':>8}\n"
        f"{'hypothesis':12}{hypothesis['kendall_tau']:12.4f}"
        f"{hypothesis['fuzzy_reordering_score']:8.4f}{hypothesis['exact_match']:8.4f}\n"
        f"{'monotone':12}{monotone['kendall_tau']:12.4f}"
        f"{monotone['fuzzy_reordering_score']:8.4f}{monotone['exact_match']:8.4f}"
    )


def score_files(hypothesis, reference):
    """``xlpe-reorder-score``: the table of ``format_scores`` for the reorder file
    ``hypothesis`` against ``reference``, each line ended."""
    total = check_same_line_count([hypothesis, reference])
    require_lines(reference, total)
    lengths = [len(fields) for fields in read_tokens(reference)]
    references = read_reorder(reference, lengths, reference)
    hypothesis_lengths = [len(fields) for fields in read_tokens(hypothesis)]
    for lineno, (n_hyp, n_ref) in enumerate(zip(hypothesis_lengths, lengths), start=1):
        if n_hyp != n_ref:
            raise InputError(f"{hypothesis} line {lineno}: {n_hyp} positions, but "
                             f"{reference} line {lineno} has {n_ref}: both must be "
                             "reorder lines of the same sentences")
    hypotheses = read_reorder(hypothesis, lengths, reference)
    scores = corpus_scores(hypotheses, references)
    if scores["sentences"] == 0:
        raise InputError(f"{reference}: no sentence of two or more tokens to score")
    return format_scores(scores, monotone_scores(references)) + "\n"


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-reorder-score",
        description="Score predicted reorder positions against oracle ones: corpus-mean "
        "Kendall's tau and fuzzy reordering score (Talbot et al. 2011), next to the "
        "monotone (keep the source order) baseline.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--hypothesis", required=True,
                        help="predicted reorder file (e.g. from xlpe-preorder)")
    parser.add_argument("--reference", required=True,
                        help="oracle reorder file (e.g. from xlpe-reorder --method btg)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    run_command(lambda: print(score_files(args.hypothesis, args.reference), end=""),
                "xlpe-reorder-score")


if __name__ == "__main__":
    main()
