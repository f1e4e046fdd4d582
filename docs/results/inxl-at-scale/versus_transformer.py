"""Seed-averaged BLEU and chrF of test outputs against the published Transformer's, with the
study's bootstrap over test sentences (paired) and each system's seeds.

    python docs/results/inxl-at-scale/versus_transformer.py REFERENCE BASELINE_DIR NAME=DIR...

Each DIR holds ``seedS.txt``, detokenized test outputs as xlpe-study writes them
(``hypotheses/MODEL/``; its ``seedS.test-SET.txt``, from other test positions, are left out);
BASELINE_DIR is the Transformer's, e.g. the En→Tr study's
``docs/results/study-libreoffice-en-tr/supplement/hypotheses/transformer``. 1,000 samples,
seed 12345, as every study report.
"""
import sys
from pathlib import Path

import numpy as np

from xlpe_fairseq.evaluation.bleu import metrics
from xlpe_fairseq.evaluation.compare import corpus_score, sentence_statistics
from xlpe_fairseq.evaluation.study import seed_averaged, seed_bootstrap


def statistics(metric, folder, references):
    return [sentence_statistics(metric, path.read_text(encoding="utf-8").splitlines(), references)
            for path in sorted(Path(folder).glob("seed*.txt")) if path.stem[4:].isdigit()]


def main(reference, baseline, *rows):
    references = Path(reference).read_text(encoding="utf-8").splitlines()
    scorers = metrics("13a")
    print("| row | BLEU per seed | BLEU | ΔBLEU [95%], p | chrF | ΔchrF [95%], p |")
    print("|---|---|---|---|---|---|")
    for name, folder in [("transformer", baseline), *(row.split("=", 1) for row in rows)]:
        cells = []
        for metric_name in ("bleu", "chrf"):
            metric = scorers[metric_name]
            own = statistics(metric, folder, references)
            if metric_name == "bleu":
                cells.append(" / ".join(f"{corpus_score(metric, s.sum(0)):.2f}" for s in own))
            cells.append(f"{seed_averaged(metric, own):.2f}")
            if name == "transformer":
                cells.append("–")
                continue
            d = seed_bootstrap(metric, statistics(metric, baseline, references), own, 1000,
                               np.random.default_rng(12345))
            cells.append(f"{d['delta']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}], "
                         f"p {d['p']:.3f}")
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
