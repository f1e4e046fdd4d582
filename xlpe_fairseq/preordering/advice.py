"""Which model to train on a corpus, from its preorderer's test score, in one line.

    python -m xlpe_fairseq.preordering.advice OUT/preorderer.test.score

reads the table ``xlpe-reorder-score`` writes (the preorderer's test positions against the
alignment's order, beside keeping the source order), and names the model to train with its
``xlpe-train`` command. XL PE reads those positions at test time, so what it can gain
follows the share of the Kendall's tau gap they close: (tau_pred - tau_mono) / (1 - tau_mono),
0 for the source order, 1 for the alignment's. The rule, calibrated on every study
(docs/preorderer.md#which-model-the-advice-names):

- a share of 35% or more: train ``xlpe-inxl``. Every pair at 42-61% gained about 1 to 4 BLEU over
  the Transformer, significantly (En->Tr, Tr->En, Ko->En, a held-out SOV->SVO pair);
- 10% to 35%: train ``xlpe-inxl``, for a small gain at most: En->De at 20-27% was level in
  BLEU (+1.07, p .14 at the default) and ahead in chrF (+1.94, p .002);
- under 10%, or no closer than the source order, or an alignment's order that is the source
  order: train ``re-both``, which needs no preorderer (He->En: positions in effect the source
  order, XL PE level with the Transformer, re-both +1.39 BLEU).

The fuzzy reordering score (FRS) is printed, not used: a preorderer that moves many tokens
breaks chunks and can score an FRS below the source order's while its tau closes 42% of the gap
and XL PE gains +2.97 BLEU (the held-out SOV->SVO pair).
"""
import argparse
import os
import shlex
import sys

from ..help_format import HelpFormatter
from ..io import InputError, open_text, require_files, run_command

MEASURES = ("kendall_tau", "fuzzy_reordering_score")
# shares of the tau gap closed that separate the three answers (see the module's docstring)
EXPECTED_GAIN_SHARE = 0.35
SMALL_GAIN_SHARE = 0.10
DOCS = "docs/preorderer.md#which-model-the-advice-names"


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


def gap_share(scores):
    """The share of the tau gap between the source order and the alignment's that the
    preorderer's test positions close; None when there is no gap."""
    predicted, monotone = (scores[row]["kendall_tau"] for row in ("hypothesis", "monotone"))
    return None if monotone >= 1.0 else (predicted - monotone) / (1.0 - monotone)


def recommended_model(scores):
    """``xlpe-inxl`` or ``re-both``, by the rule of the module's docstring."""
    share = gap_share(scores)
    return "xlpe-inxl" if share is not None and share >= SMALL_GAIN_SHARE else "re-both"


def advice(scores, corpus="OUT"):
    """One line: the model to train, its xlpe-train command on ``corpus`` (the recipe's OUT), and
    why, from the preorderer's score against the source order."""
    predicted, monotone = scores["hypothesis"], scores["monotone"]
    model = recommended_model(scores)
    # quoted as a shell word: the line is pasted into a shell, and OUT may hold $(...)
    command = f"xlpe-train {model} {shlex.quote(corpus + '/data-bin')} CHECKPOINT_DIR"
    numbers = (f"Kendall's tau {predicted['kendall_tau']:.4f} against {monotone['kendall_tau']:.4f}"
               f" for the source order; FRS {predicted['fuzzy_reordering_score']:.4f} against "
               f"{monotone['fuzzy_reordering_score']:.4f}")
    share = gap_share(scores)
    if share is None:
        why = (f"the alignment's order is the source order on test ({numbers}): XL PE has no "
               "other order to add")
    elif share >= EXPECTED_GAIN_SHARE:
        why = (f"the preorderer's test positions close {share:.0%} of the way from the source "
               f"order to the alignment's ({numbers}), and at {EXPECTED_GAIN_SHARE:.0%} or more "
               "XL PE gained about 1 to 4 BLEU over the Transformer on every pair measured")
    elif share >= SMALL_GAIN_SHARE:
        why = (f"expect a small gain at most: the preorderer's test positions close {share:.0%} "
               f"of the way from the source order to the alignment's ({numbers}), and at "
               f"{SMALL_GAIN_SHARE:.0%}-{EXPECTED_GAIN_SHARE:.0%} XL PE was level with the "
               "Transformer in BLEU and ahead in chrF; re-both needs no preorderer")
    else:
        closer = (f"close only {share:.0%} of the way from the source order to the alignment's"
                  if share > 0 else "are no closer to the alignment's order than the source "
                  "order")
        why = (f"XL PE is unlikely to help on this pair: the preorderer's test positions "
               f"{closer} ({numbers}); a stronger preorderer (PREORDER_SEEDS, "
               "PREORDER_EPOCHS) may change that")
    return f"advice: train {model}: {command}; {why} ({DOCS})"


def recipe_folder(score_path):
    """The recipe's OUT when ``score_path`` lies beside its data-bin, else the word OUT."""
    folder = os.path.dirname(score_path) or "."
    return folder if os.path.isdir(os.path.join(folder, "data-bin")) else "OUT"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m xlpe_fairseq.preordering.advice",
                                     description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("score_file", help="xlpe-reorder-score's table, e.g. "
                        "OUT/preorderer.test.score")
    args = parser.parse_args(argv)
    run_command(lambda: print(advice(read_score_file(args.score_file),
                                     recipe_folder(args.score_file))), parser.prog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
