"""How much of the oracle a source-only preorderer can hope to predict, from repeated sources.

A preorderer sees the source alone, but the oracle it is scored against (``xlpe-reorder
--method btg``) is read off one reference translation and its word alignment. Where a corpus
holds the same source sentence more than once, the oracle of one occurrence, taken as the
prediction for another, scores what a model that had memorized that very sentence would score:
whatever the other translation and its alignment do differently is out of any source-only
model's reach. Every ordered pair of occurrences of a repeated source counts once (at most
``PARTNERS`` predictions of each occurrence, for sources repeated very often); the report
gives Kendall's tau, FRS and exact match of the copied oracle and of the monotone order on the
same pairs, and the share of the monotone-to-oracle tau gap the copy closes,
``(tau - tau_monotone) / (1 - tau_monotone)``, the measure of the preorderer's target.

Repeated sources are no random sample: they are mostly short (titles, UI labels), and in a
corpus deduplicated on pairs a source recurs only with another translation. With ``target``
the pairs are split into those with the same target line (alignment noise only) and those
with different ones (translation variation as well).
"""
import argparse
import contextlib
import hashlib
from collections import Counter, defaultdict

from ..help_format import HelpFormatter
from ..io import check_same_line_count, positive_int, run_command, text_lines
from ..data.reorder_file import parse_reorder_line
from .metrics import corpus_scores, monotone_scores

PARTNERS = 8


def repeated_source_pairs(sources, partners=PARTNERS):
    """Ordered pairs ``(a, b)``, ``a != b``, of lines with the same source of two or more tokens.

    Each occurrence is predicted from at most ``partners`` others (the next ones of its group,
    cyclically): all ordered pairs in groups of up to ``partners + 1``, and a number linear in
    the lines for a sentence repeated thousands of times, as boilerplate is in web corpora.
    """
    occurrences = defaultdict(list)
    for index, tokens in enumerate(sources):
        if len(tokens) >= 2:
            occurrences[tuple(tokens)].append(index)
    return [(group[(k + step) % len(group)], b)
            for group in occurrences.values() if len(group) > 1
            for k, b in enumerate(group) for step in range(1, min(partners, len(group) - 1) + 1)]


MAX_REPEATED = 200000


def source_key(tokens):
    """A stable 64-bit key of a source line (the same in every process, unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(" ".join(tokens).encode("utf-8"),
                                          digest_size=8).digest(), "big")


def read_repeated(source_path, reorder_path, target_path=None, max_lines=MAX_REPEATED):
    """Token lists, positions (and target lines) of the lines whose source occurs again, and
    how many such lines the corpus holds.

    Two streaming passes, so that memory holds one key per distinct source line and the
    repeated lines' tokens, not the corpus; every reorder line is still checked against its
    source's length. Where more than ``max_lines`` lines repeat a source, whole groups of one
    source are kept in the order of their keys (a fixed pseudo-random order) up to that many
    lines, so that time and memory stay bounded on a corpus of many repeats.
    """
    paths = [source_path, reorder_path] + ([target_path] if target_path else [])
    check_same_line_count(paths)
    with text_lines(source_path) as lines:
        counts = Counter(source_key(tokens) for tokens in map(str.split, lines)
                         if len(tokens) >= 2)
    repeated = {key: count for key, count in counts.items() if count > 1}
    total = sum(repeated.values())
    kept, size = set(), 0
    for key in sorted(repeated):
        if size + repeated[key] > max_lines:
            break
        kept.add(key)
        size += repeated[key]
    del counts, repeated
    sources, positions, targets = [], [], []
    with contextlib.ExitStack() as stack:
        streams = [stack.enter_context(text_lines(path)) for path in paths]
        for lineno, lines in enumerate(zip(*streams), start=1):
            tokens = lines[0].split()
            order = parse_reorder_line(lines[1], len(tokens), reorder_path, lineno)
            if len(tokens) >= 2 and source_key(tokens) in kept:
                sources.append(tokens)
                positions.append(order)
                if target_path:
                    targets.append(" ".join(lines[2].split()))
    return sources, positions, (targets if target_path else None), total


def gap_closed(scores, monotone):
    """Share of the monotone-to-oracle Kendall's tau gap that ``scores`` close (None if no gap)."""
    gap = 1.0 - monotone["kendall_tau"]
    return (scores["kendall_tau"] - monotone["kendall_tau"]) / gap if gap > 0 else None


def copy_agreement(positions, pairs):
    """Scores of each pair's first oracle as a prediction of its second, next to monotone."""
    copied = corpus_scores([positions[a] for a, _ in pairs], [positions[b] for _, b in pairs])
    monotone = monotone_scores([positions[b] for _, b in pairs])
    return {"pairs": len(pairs), "copy": copied, "monotone": monotone,
            "gap_closed": gap_closed(copied, monotone)}


def ceiling_report(sources, positions, targets=None, short_length=6):
    """Rows ``(label, copy_agreement)``: all pairs, by source length, and by target if given."""
    pairs = repeated_source_pairs(sources)
    rows = [("all", pairs),
            (f"2-{short_length} tokens", [p for p in pairs if len(sources[p[0]]) <= short_length]),
            (f">{short_length} tokens", [p for p in pairs if len(sources[p[0]]) > short_length])]
    if targets is not None:
        rows += [("same target", [(a, b) for a, b in pairs if targets[a] == targets[b]]),
                 ("other target", [(a, b) for a, b in pairs if targets[a] != targets[b]])]
    return [(label, copy_agreement(positions, subset)) for label, subset in rows if subset]


# a negative share is a reading users met without an explanation
GAP_CLOSED_READING = (
    "gap closed: of the way from the source order's tau to 1, how much one occurrence's "
    "positions take another occurrence of the same source; near 100% a source-only "
    "preorderer can learn the order, at 0% or below (the copy further from the alignment's "
    "order than the source order) the alignment orders the same source differently, and "
    "no source-only model can follow it there")


def format_report(rows):
    lines = [f"{'repeated sources':16}{'pairs':>7}{'tau copy':>10}{'tau mono':>10}"
             f"{'gap closed':>12}{'FRS copy':>10}{'FRS mono':>10}{'exact copy':>12}"]
    for label, row in rows:
        closed = "-" if row["gap_closed"] is None else f"{row['gap_closed']:.0%}"
        lines.append(f"{label:16}{row['pairs']:7d}{row['copy']['kendall_tau']:10.4f}"
                     f"{row['monotone']['kendall_tau']:10.4f}{closed:>12}"
                     f"{row['copy']['fuzzy_reordering_score']:10.4f}"
                     f"{row['monotone']['fuzzy_reordering_score']:10.4f}"
                     f"{row['copy']['exact_match']:12.4f}")
    lines.append(GAP_CLOSED_READING)
    return "\n".join(lines)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-reorder-ceiling",
        description="Estimate how much of the oracle a source-only preorderer can predict: on "
        "sources that occur more than once, score the oracle positions of one occurrence "
        "against those of another (Kendall's tau, FRS, exact match, share of the "
        "monotone-to-oracle tau gap closed).",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--source", required=True,
                        help="source BPE text the oracle was extracted for (e.g. bpe/train.en)")
    parser.add_argument("--reorder", required=True,
                        help="its oracle reorder file (e.g. bpe/train.btg.reorder)")
    parser.add_argument("--target", default=None,
                        help="the target side, to split pairs with the same target line from "
                        "pairs with different ones")
    parser.add_argument("--short-length", type=positive_int, default=6,
                        help="sources of at most this many tokens form the short row")
    parser.add_argument("--max-repeated", type=positive_int, default=MAX_REPEATED,
                        help="score at most this many lines with a repeated source (whole "
                        "groups of one source, in a fixed pseudo-random order): bounds time "
                        "and memory on a corpus of many repeats")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.short_length < 2:
        parser.error("--short-length must be at least 2")

    def body():
        sources, positions, targets, total = read_repeated(args.source, args.reorder,
                                                           args.target, args.max_repeated)
        rows = ceiling_report(sources, positions, targets, args.short_length)
        if not rows:
            print(f"{args.source}: no source of two or more tokens occurs twice")
            return
        if len(sources) < total:
            print(f"on {len(sources)} of the {total} lines whose source repeats "
                  f"(--max-repeated {args.max_repeated})")
        print(format_report(rows))

    run_command(body, "xlpe-reorder-ceiling")


if __name__ == "__main__":
    main()
