"""The dpe-only-sum row against the rows of the main En→Tr DPE report, as the study tests them.

    python docs/results/study-dpe-en-tr/dpe-only-sum/compare_rows.py REFERENCE

The row was trained later, in its own work folder, with the study's settings; training is
deterministic under them (the report's transformer seeds repeat the earlier study's to the
last digit), so its test outputs are compared with the published ones of the other rows.
Each comparison is xlpe-study's bootstrap over test sentences and seeds, with its samples
(1,000) and seed (12345): the numbers are those the full study would print with that row.
REFERENCE is the recipe's raw/test.tr. Prints a Markdown table.
"""
import sys
from pathlib import Path

import numpy as np

from xlpe_fairseq.evaluation.bleu import bleu_tokenizer, metrics
from xlpe_fairseq.evaluation.compare import sentence_statistics
from xlpe_fairseq.evaluation.study import seed_averaged, seed_bootstrap

HERE = Path(__file__).resolve().parent
ROW = "dpe-only-sum"
PUBLISHED = ["transformer", "dpe", "dpe-no-order-loss", "dpe-authors", "transformer-deep"]
SEEDS = (1, 2, 3)


def hypotheses(folder, model):
    return [(folder / model / f"seed{seed}.txt").read_text(encoding="utf-8").splitlines()
            for seed in SEEDS]


def main(reference):
    references = Path(reference).read_text(encoding="utf-8").splitlines()
    outputs = {model: hypotheses(HERE.parent / "hypotheses", model) for model in PUBLISHED}
    outputs[ROW] = hypotheses(HERE / "hypotheses", ROW)
    print(f"| {ROW} against | " + " | ".join(
        f"its {name}; {ROW}'s Δ [95%], p" for name in ("BLEU", "chrF")) + " |")
    print("|---|---|---|")
    by_metric = {}
    for key, metric in metrics(bleu_tokenizer("tr")).items():
        statistics = {model: [sentence_statistics(metric, text, references) for text in runs]
                      for model, runs in outputs.items()}
        by_metric[key] = (metric, statistics)
    for baseline in PUBLISHED:
        cells = []
        for metric, statistics in by_metric.values():
            mean = seed_averaged(metric, statistics[baseline])
            test = seed_bootstrap(metric, statistics[baseline], statistics[ROW], 1000,
                                  np.random.default_rng(12345))
            cells.append(f"{mean:.2f}, {test['delta']:+.2f} [{test['low']:+.2f}, "
                         f"{test['high']:+.2f}], {test['p']:.3f}")
        print(f"| {baseline} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1].strip())
    main(sys.argv[1])
