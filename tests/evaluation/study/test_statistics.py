"""The study's statistics on hand-made systems: the seed-and-sentence bootstrap and the
share of the oracle's gain."""
import numpy as np
import pytest
import sacrebleu

from xlpe_fairseq.evaluation.compare import corpus_score, sentence_statistics
from xlpe_fairseq.evaluation.study.report import oracle_gain_shares_text
from xlpe_fairseq.evaluation.study.statistics import (
    oracle_gain_share,
    oracle_gain_shares,
    seed_bootstrap,
    verdict,
)


def statistics(hypotheses, references):
    metric = sacrebleu.metrics.BLEU()
    return metric, sentence_statistics(metric, hypotheses, references)


REFERENCES = [f"the cat number {k} sat on the mat near door {k % 7}" for k in range(60)]


WORSE = [f"a dog {k} stood" for k in range(60)]


def test_identical_systems_are_not_different():
    metric, stats = statistics(WORSE, REFERENCES)
    comparison = seed_bootstrap(metric, [stats, stats], [stats, stats], 200,
                                np.random.default_rng(0))
    assert comparison["delta"] == 0 and comparison["p"] == 1.0
    assert verdict(comparison) == "no significant difference"


def test_a_consistently_better_system_is_better():
    metric, good = statistics(REFERENCES, REFERENCES)
    _, bad = statistics(WORSE, REFERENCES)
    comparison = seed_bootstrap(metric, [bad, bad], [good, good], 200, np.random.default_rng(0))
    assert comparison["p"] < 0.05 and comparison["low"] > 0, comparison
    assert verdict(comparison) == "better"


def test_seed_spread_larger_than_the_gap_is_not_significant():
    # one seed perfect, one hopeless: the mean beats the baseline, but a redraw of seeds
    # can give either, so the interval must cover zero
    metric, good = statistics(REFERENCES, REFERENCES)
    _, bad = statistics(WORSE, REFERENCES)
    _, middle = statistics([r.replace("cat", "dog") for r in REFERENCES], REFERENCES)
    comparison = seed_bootstrap(metric, [middle, middle], [good, bad], 400,
                                np.random.default_rng(0))
    assert comparison["low"] < 0 < comparison["high"], comparison
    assert verdict(comparison) == "no significant difference"


def test_oracle_gain_share_is_where_own_positions_land_between_monotone_and_oracle():
    metric, oracle = statistics(REFERENCES, REFERENCES)
    _, monotone = statistics(WORSE, REFERENCES)
    _, middle = statistics([r.replace("cat", "dog") for r in REFERENCES], REFERENCES)
    rng = np.random.default_rng(0)
    for own, expected in ((oracle, 1.0), (monotone, 0.0)):
        share = oracle_gain_share(metric, [own, own], [oracle, oracle], [monotone, monotone],
                                  200, rng)
        assert share["share"] == pytest.approx(expected), share
    share = oracle_gain_share(metric, [middle] * 2, [oracle] * 2, [monotone] * 2, 200, rng)
    assert 0 < share["low"] <= share["share"] <= share["high"] < 1, share
    assert share["own"] == pytest.approx(corpus_score(metric, middle.sum(0))), share
    none = oracle_gain_share(metric, [middle] * 2, [monotone] * 2, [oracle] * 2, 200, rng)
    assert none["share"] is None, "an oracle below monotone has no gain to share"


def test_report_shows_the_share_for_rows_tested_with_oracle_and_monotone():
    metric, oracle = statistics(REFERENCES, REFERENCES)
    _, monotone = statistics(WORSE, REFERENCES)
    stats = {"xlpe-inxl": [oracle], "xlpe-inxl [test: oracle]": [oracle],
             "xlpe-inxl [test: monotone]": [monotone], "xlpe-inxl [test: dpe-network]": [monotone],
             "transformer": [monotone], "transformer-other [test: dpe-network]": [oracle]}
    shares = oracle_gain_shares(list(stats), stats, metric, 50, 0)
    assert list(shares) == ["xlpe-inxl", "xlpe-inxl [test: dpe-network]"], \
        "an XL PE row with both sets has a share for its own and every other set's positions"
    assert shares["xlpe-inxl [test: dpe-network]"]["share"] == pytest.approx(0.0), \
        "positions that score as monotone deliver none of the oracle's gain"
    text = "\n".join(oracle_gain_shares_text(shares))
    assert "| xlpe-inxl | 100.00 | 100.00 |" in text and "| 100% [100%, 100%] |" in text, text
