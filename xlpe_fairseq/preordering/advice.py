"""What a corpus's preorderer score means for XL PE, in one line.

    python -m xlpe_fairseq.preordering.advice OUT/preorderer.test.score

reads the table ``xlpe-reorder-score`` writes (the preorderer's test positions against the
alignment's order, beside keeping the source order) and says whether the preorderer beats the
source order on both Kendall's tau and the fuzzy reordering score. XL PE reads those
positions at test time: the studies found it gaining only where they beat the source order
(En→Tr, Tr→En, Ko→En) and level with the Transformer where they did not (He→En, En→De).
"""
import argparse
import sys

from ..help_format import HelpFormatter
from ..io import InputError, open_text, require_files, run_command

MEASURES = ("kendall_tau", "fuzzy_reordering_score")


def read_score_file(path):
    """{"hypothesis": {...}, "monotone": {...}} with Kendall's tau and FRS of each row of an
    ``xlpe-reorder-score`` table."""
    require_files([path])
    rows = {}
    with open_text(path) as lines:
        for number, line in enumerate(lines, start=1):
            fields = line.split()
            if fields and fields[0] in ("hypothesis", "monotone"):
                try:
                    rows[fields[0]] = dict(zip(MEASURES, map(float, fields[1:3])))
                except ValueError:
                    raise InputError(f"{path} line {number}: expected a row '{fields[0]} TAU "
                                     "FRS EXACT' of numbers") from None
    for row in ("hypothesis", "monotone"):
        if len(rows.get(row, ())) != len(MEASURES):
            raise InputError(f"{path}: no '{row}' row with Kendall's tau and FRS (expected "
                             "xlpe-reorder-score's table)")
    return rows


def advice(scores):
    """One line: do the preorderer's positions beat the source order, and what follows."""
    predicted, monotone = scores["hypothesis"], scores["monotone"]
    numbers = (f"Kendall's tau {predicted['kendall_tau']:.4f} against {monotone['kendall_tau']:.4f}"
               f" for the source order, FRS {predicted['fuzzy_reordering_score']:.4f} against "
               f"{monotone['fuzzy_reordering_score']:.4f}")
    if monotone["kendall_tau"] >= 1.0:
        return (f"advice: the alignment's order is the source order on test ({numbers}): XL PE "
                "has no other order to add; train transformer, re-both or dpe")
    if all(predicted[m] > monotone[m] for m in MEASURES):
        closed = ((predicted["kendall_tau"] - monotone["kendall_tau"])
                  / (1.0 - monotone["kendall_tau"]))
        return (f"advice: the preorderer's test positions beat the source order ({numbers}; "
                f"{closed:.0%} of the way to the alignment's order in tau): XL PE can help on "
                "this pair")
    return (f"advice: XL PE is unlikely to help on this pair: the preorderer's test positions "
            f"are no better than the source order ({numbers}); try re-both or dpe, or a "
            "stronger preorderer (PREORDER_SEEDS, PREORDER_EPOCHS; docs/preorderer.md)")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m xlpe_fairseq.preordering.advice",
                                     description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("score_file", help="xlpe-reorder-score's table, e.g. "
                        "OUT/preorderer.test.score")
    args = parser.parse_args(argv)
    run_command(lambda: print(advice(read_score_file(args.score_file))), parser.prog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
