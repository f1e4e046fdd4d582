"""The study's numbers: seed means and spreads, the seed-and-sentence bootstrap, oracle gains.

Against the baseline, a bootstrap that resamples the test sentences (paired) and each system's
seeds; for XL PE rows, the share of the oracle's gain over monotone positions that their own
test positions deliver.
"""
import numpy as np

from ..bleu import bleu_tokenizer
from ..bleu import metrics as bleu_metrics
from ..compare import corpus_score, sentence_draws, sentence_statistics, two_sided_p
from .plan import test_row, trained_row
from .runs import row_options


def per_seed_scores(metric, stats, counts):
    """``(samples, seeds)``: each seed's corpus score on each sentence draw of ``counts``."""
    return np.array([[corpus_score(metric, row) for row in counts @ seed] for seed in stats]).T


def across_seeds(values):
    """Each seed's value, their mean and sample standard deviation (None for one seed: a
    spread of 0 would claim that the seed does not matter)."""
    return {"per_seed": values, "mean": float(np.mean(values)),
            "sd": float(np.std(values, ddof=1)) if len(values) > 1 else None}


def seed_averaged(metric, stats):
    """The mean over seeds of each seed's corpus score on the whole test set."""
    return float(np.mean([corpus_score(metric, seed.sum(0)) for seed in stats]))


def seed_bootstrap(metric, baseline_stats, system_stats, samples, rng):
    """Difference of seed-averaged scores, its 95% interval and two-sided p-value.

    ``*_stats`` are lists (one per seed) of per-sentence statistics. Each bootstrap sample
    draws the test sentences once for both systems (paired) and each system's seeds with
    replacement, so both the test set and the training seed vary.
    """
    counts = sentence_draws(baseline_stats[0].shape[0], samples, rng)
    system, baseline = (per_seed_scores(metric, stats, counts)
                        for stats in (system_stats, baseline_stats))
    pick_system = rng.integers(0, len(system_stats), size=(samples, len(system_stats)))
    pick_baseline = rng.integers(0, len(baseline_stats), size=(samples, len(baseline_stats)))
    rows = np.arange(samples)[:, None]
    differences = system[rows, pick_system].mean(1) - baseline[rows, pick_baseline].mean(1)
    observed = seed_averaged(metric, system_stats) - seed_averaged(metric, baseline_stats)
    low, high = np.percentile(differences, [2.5, 97.5])
    return {"delta": float(observed), "low": float(low), "high": float(high),
            "p": two_sided_p(observed, differences)}


def oracle_gain_share(metric, own_stats, oracle_stats, monotone_stats, samples, rng):
    """How much of the oracle's gain over monotone test positions a model's own test
    positions deliver: ``(own - monotone) / (oracle - monotone)`` of seed-averaged scores.

    The three rows decode the same checkpoints, so each bootstrap sample draws the test
    sentences and the seeds once for all three. ``share`` is None where the oracle does not
    beat monotone (no gain to share); the interval leaves out samples without a gain.
    """
    counts = sentence_draws(own_stats[0].shape[0], samples, rng)
    picks = rng.integers(0, len(own_stats), size=(samples, len(own_stats)))
    rows = np.arange(samples)[:, None]

    def resampled(stats):
        return per_seed_scores(metric, stats, counts)[rows, picks].mean(1)

    own, oracle, monotone = (seed_averaged(metric, stats)
                             for stats in (own_stats, oracle_stats, monotone_stats))
    result = {"own": own, "oracle": oracle, "monotone": monotone, "share": None,
              "low": None, "high": None}
    if oracle > monotone:
        base = resampled(monotone_stats)
        gains = resampled(oracle_stats) - base
        shares = (resampled(own_stats) - base)[gains > 0] / gains[gains > 0]
        low, high = np.percentile(shares, [2.5, 97.5])
        result.update(share=(own - monotone) / (oracle - monotone), low=float(low),
                      high=float(high))
    return result


def oracle_gain_shares(models, statistics, metric, samples, seed):
    """``{row: oracle_gain_share}`` of every XL PE row decoded with sets named ``oracle``
    and ``monotone`` (``examples/position_sets.sh``): for its own test positions, and for
    those of every other set it was decoded with (``MODEL [test: SET]``, e.g. the DPE
    network's order)."""
    shares = {}
    for row in models:
        model = trained_row(row)
        oracle, monotone = test_row(model, "oracle"), test_row(model, "monotone")
        if row not in (oracle, monotone) and oracle in statistics and monotone in statistics:
            shares[row] = oracle_gain_share(metric, statistics[row], statistics[oracle],
                                            statistics[monotone], samples,
                                            np.random.default_rng(seed))
    return shares


def verdict(comparison, alpha=0.05):
    if comparison["p"] >= alpha:
        return "no significant difference"
    return "better" if comparison["delta"] > 0 else "worse"


def summarize(study, models, seeds, references, hypotheses, results, samples=1000, seed=12345):
    """The report's numbers: per model its seeds' scores, mean, sd and the baseline test."""
    baseline = study.args.baseline or models[0]
    metrics = bleu_metrics(bleu_tokenizer(study.args.target_lang, study.args.tokenize))
    statistics = {
        key: {model: [sentence_statistics(metric, hypotheses[model, s], references) for s in seeds]
              for model in models}
        for key, metric in metrics.items()
    }
    rows = []
    for model in models:
        runs = [results[model, s] for s in seeds]
        row = {"model": model, "baseline": model == baseline, "seeds": list(seeds),
               "parameters": runs[0]["parameters"], "options": row_options(model, seeds, runs)}
        for key, metric in metrics.items():
            row[key] = across_seeds([run[key] for run in runs])
            if model != baseline:
                rng = np.random.default_rng(seed)
                row[key]["vs_baseline"] = seed_bootstrap(
                    metric, statistics[key][baseline], statistics[key][model], samples, rng)
        if all("aer" in run for run in runs):
            row["aer"] = across_seeds([run["aer"] for run in runs])
        rows.append(row)
    return {"baseline": baseline, "bootstrap_samples": samples, "bootstrap_seed": seed,
            "settings": study.settings(), "models": rows,
            "oracle_gain_shares": oracle_gain_shares(models, statistics["bleu"],
                                                     metrics["bleu"], samples, seed),
            "bleu_signature": results[models[0], seeds[0]]["bleu_signature"],
            "chrf_signature": results[models[0], seeds[0]]["chrf_signature"]}
