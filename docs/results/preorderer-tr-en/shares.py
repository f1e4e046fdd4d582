"""BLEU and share of the oracle's gain of the test outputs in this folder (or in HYPOTHESES).

    python docs/results/preorderer-tr-en/shares.py work/lo-en-tr/raw/test.en
    python docs/results/preorderer-tr-en/shares.py work/lo-ko-en/raw/test.en \
        docs/results/preorderer-ko-en/hypotheses

``hypotheses/ROW/seedS.txt`` are detokenized test outputs of the same InXL checkpoints decoded
with other test positions; every row is compared with ``oracle`` and ``monotone`` by
xlpe-study's ``oracle_gain_share`` (bootstrap over test sentences and seeds, 1,000 samples,
seed 12345), so the numbers are those a study report would print.
"""
import sys
from pathlib import Path

import numpy as np

from xlpe_fairseq.evaluation.bleu import metrics
from xlpe_fairseq.evaluation.compare import corpus_score, sentence_statistics
from xlpe_fairseq.evaluation.study import oracle_gain_share

HYPOTHESES = Path(__file__).resolve().parent / "hypotheses"


def main(reference, hypotheses=HYPOTHESES):
    hypotheses = Path(hypotheses)
    references = Path(reference).read_text(encoding="utf-8").splitlines()
    bleu = metrics("13a")["bleu"]
    rows = sorted(p.name for p in hypotheses.iterdir())
    seeds = sorted(p.stem for p in (hypotheses / "oracle").iterdir())
    stats = {row: [sentence_statistics(bleu, (hypotheses / row / f"{seed}.txt").read_text(
        encoding="utf-8").splitlines(), references) for seed in seeds] for row in rows}
    print(f"| test positions | BLEU ({', '.join(seeds)}) | mean | share of the oracle's gain [95%] |")
    print("|---|---|---|---|")
    for row in rows:
        share = oracle_gain_share(bleu, stats[row], stats["oracle"], stats["monotone"], 1000,
                                  np.random.default_rng(12345))
        per_seed = [corpus_score(bleu, s.sum(0)) for s in stats[row]]
        print(f"| {row} | {' / '.join(f'{b:.2f}' for b in per_seed)} | {share['own']:.2f} | "
              f"{100 * share['share']:.0f}% [{100 * share['low']:.0f}%, {100 * share['high']:.0f}%] |")


if __name__ == "__main__":
    main(*sys.argv[1:])
