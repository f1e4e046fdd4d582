"""Kendall's tau and the fuzzy reordering score (Talbot et al. 2011) on hand-made permutations."""
import pytest

from xlpe_fairseq.preordering.metrics import (
    corpus_scores,
    fuzzy_reordering_score,
    kendall_tau,
    monotone_scores,
)


def test_identity_scores_one():
    assert kendall_tau([0, 1, 2, 3], [0, 1, 2, 3]) == 1.0
    assert fuzzy_reordering_score([0, 1, 2, 3], [0, 1, 2, 3]) == 1.0


def test_reversal_scores_minus_one_and_zero():
    assert kendall_tau([3, 2, 1, 0], [0, 1, 2, 3]) == -1.0
    assert fuzzy_reordering_score([3, 2, 1, 0], [0, 1, 2, 3]) == 0.0


def test_one_adjacent_swap():
    # 1 discordant pair of 6; the hypothesis order 0 2 1 3 is 4 chunks of the reference
    assert kendall_tau([0, 2, 1, 3], [0, 1, 2, 3]) == pytest.approx(1 - 2 / 6)
    assert fuzzy_reordering_score([0, 2, 1, 3], [0, 1, 2, 3]) == pytest.approx(1 - 3 / 3)


def test_block_swap_is_two_chunks():
    # reference order: tokens 2 3 0 1; the hypothesis keeps the source order
    reference = [2, 3, 0, 1]
    hypothesis = [0, 1, 2, 3]
    assert fuzzy_reordering_score(hypothesis, reference) == pytest.approx(1 - 1 / 3)
    assert kendall_tau(hypothesis, reference) == pytest.approx(1 - 2 * 4 / 6)


def test_scores_are_symmetric_in_the_labels_of_the_tokens():
    # the same relation between hypothesis and reference, tokens listed differently
    assert kendall_tau([1, 0, 2], [2, 0, 1]) == kendall_tau([0, 1, 2], [0, 2, 1])


def test_short_sentences_score_one_and_are_left_out_of_averages():
    assert kendall_tau([0], [0]) == 1.0
    assert fuzzy_reordering_score([], []) == 1.0
    scores = corpus_scores([[0], [1, 0], [0, 1]], [[0], [0, 1], [0, 1]])
    assert scores == {"kendall_tau": 0.0, "fuzzy_reordering_score": 0.5, "exact_match": 0.5,
                      "sentences": 2}


def test_monotone_baseline():
    assert monotone_scores([[1, 0], [0, 1]])["kendall_tau"] == 0.0


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="3 positions"):
        kendall_tau([0, 1, 2], [0, 1])
