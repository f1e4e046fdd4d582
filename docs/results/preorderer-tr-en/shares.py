"""BLEU and share of the oracle's gain of the test outputs in this folder (or in HYPOTHESES),
and each row's paired difference from BASELINE (default ``best1``, the recipe's preorderer).

    python docs/results/preorderer-tr-en/shares.py work/lo-en-tr/raw/test.en
    python docs/results/preorderer-tr-en/shares.py work/lo-ko-en/raw/test.en \
        docs/results/preorderer-ko-en/hypotheses [epochs9]

``hypotheses/ROW/seedS.txt`` are detokenized test outputs of the same InXL checkpoints decoded
with other test positions; every row is compared with ``oracle`` and ``monotone`` by
xlpe-study's ``oracle_gain_share`` (bootstrap over test sentences and seeds, 1,000 samples,
seed 12345), so the numbers are those a study report would print. The rows decode the same
checkpoints, so the difference from ``best1`` draws the sentences and the seeds once for both
rows (``paired_difference``).
"""
import sys
from pathlib import Path

import numpy as np

from xlpe_fairseq.evaluation.bleu import metrics
from xlpe_fairseq.evaluation.compare import corpus_score, sentence_draws, sentence_statistics, \
    two_sided_p
from xlpe_fairseq.evaluation.study import oracle_gain_share, per_seed_scores, seed_averaged

HYPOTHESES = Path(__file__).resolve().parent / "hypotheses"


def paired_difference(metric, baseline_stats, row_stats, samples, rng):
    """Seed-averaged score of the row minus the baseline's, 95% interval and two-sided p, from a
    bootstrap that draws the test sentences and the seeds once for both (same checkpoints)."""
    counts = sentence_draws(baseline_stats[0].shape[0], samples, rng)
    picks = rng.integers(0, len(baseline_stats), size=(samples, len(baseline_stats)))
    rows = np.arange(samples)[:, None]
    baseline, row = (per_seed_scores(metric, stats, counts)[rows, picks].mean(1)
                     for stats in (baseline_stats, row_stats))
    observed = seed_averaged(metric, row_stats) - seed_averaged(metric, baseline_stats)
    low, high = np.percentile(row - baseline, [2.5, 97.5])
    return f"{observed:+.2f} [{low:+.2f}, {high:+.2f}], p {two_sided_p(observed, row - baseline):.3f}"


def main(reference, hypotheses=HYPOTHESES, baseline="best1"):
    hypotheses = Path(hypotheses)
    references = Path(reference).read_text(encoding="utf-8").splitlines()
    scorers = metrics("13a")
    rows = sorted(p.name for p in hypotheses.iterdir())
    seeds = sorted(p.stem for p in (hypotheses / "oracle").iterdir())
    stats = {name: {row: [sentence_statistics(metric, (hypotheses / row / f"{seed}.txt").read_text(
        encoding="utf-8").splitlines(), references) for seed in seeds] for row in rows}
        for name, metric in scorers.items()}
    bleu, bleu_stats = scorers["bleu"], stats["bleu"]
    print(f"| test positions | BLEU ({', '.join(seeds)}) | mean | share of the oracle's gain [95%] "
          f"| ΔBLEU vs {baseline} | ΔchrF vs {baseline} |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        share = oracle_gain_share(bleu, bleu_stats[row], bleu_stats["oracle"],
                                  bleu_stats["monotone"], 1000, np.random.default_rng(12345))
        per_seed = [corpus_score(bleu, s.sum(0)) for s in bleu_stats[row]]
        deltas = ["–", "–"] if row == baseline else [
            paired_difference(scorers[name], stats[name][baseline], stats[name][row], 1000,
                              np.random.default_rng(12345)) for name in ("bleu", "chrf")]
        print(f"| {row} | {' / '.join(f'{b:.2f}' for b in per_seed)} | {share['own']:.2f} | "
              f"{100 * share['share']:.0f}% [{100 * share['low']:.0f}%, {100 * share['high']:.0f}%] "
              f"| {' | '.join(deltas)} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
