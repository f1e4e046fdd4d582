"""Learning diagnostics of the order loss: the own-position baseline and nearest positions."""
import pytest
import torch
from fairseq.data import Dictionary
from fairseq.logging import metrics

from xlpe_fairseq.criterions.label_smoothed_cross_entropy_with_order import (
    LabelSmoothedCrossEntropyWithOrderCriterion,
)
from xlpe_fairseq.criterions.order_diagnostics import order_diagnostics, own_positions
from xlpe_fairseq.modules import SinusoidalPositionsAt

DIM = 16


class Positions:
    """The one method of transformer_dpe the diagnostics read."""

    def __init__(self, padding_idx):
        self.table = SinusoidalPositionsAt(DIM, padding_idx)

    def order_targets(self, positions):
        return self.table(positions)


def diagnose(model, outputs, reorder, supervised, src_tokens, pad):
    """The diagnostics of ``outputs`` with the order loss's terms computed as the criterion does."""
    errors, targets = LabelSmoothedCrossEntropyWithOrderCriterion.order_errors(model, outputs, reorder)
    return order_diagnostics(model, outputs, targets, errors, reorder, supervised, src_tokens, pad)


@pytest.fixture
def batch():
    vocab = Dictionary()
    pad, eos = vocab.pad(), vocab.eos()
    # left-padded: sentence 0 has 3 words, all moved (0->2, 1->0, 2->1); sentence 1 has one
    # word, which stays
    src_tokens = torch.LongTensor([[5, 6, 7, eos], [pad, pad, 8, eos]])
    reorder = torch.LongTensor([[2, 0, 1, 3], [-1, -1, 0, 1]])
    supervised = reorder.ge(0) & src_tokens.ne(eos)
    return Positions(pad), src_tokens, reorder, supervised, pad


def test_own_positions_number_words_from_zero_after_left_padding(batch):
    _, src_tokens, _, _, pad = batch
    assert own_positions(src_tokens, pad).tolist() == [[0, 1, 2, 3], [-1, -1, 0, 1]]


def test_a_network_that_copies_its_own_position_is_the_baseline(batch):
    model, src_tokens, reorder, supervised, pad = batch
    copies = model.order_targets(own_positions(src_tokens, pad))
    stats = diagnose(model, copies, reorder, supervised, src_tokens, pad)
    assert stats["order_moved_ntokens"] == 3, "three words move, the one-word sentence does not"
    assert stats["order_nearest_own"] == 3 and stats["order_nearest_target"] == 0, stats
    assert stats["order_nearer_target"] == 0, "at its own position, no word is nearer its target"
    assert stats["order_moved_loss"].item() == pytest.approx(stats["order_moved_own_loss"].item())
    table = model.order_targets(torch.arange(3).unsqueeze(0))[0]
    expected = sum((table[i] - table[j]).pow(2).mean() for i, j in [(0, 2), (1, 0), (2, 1)])
    assert stats["order_own_loss"].item() == pytest.approx(expected.item(), rel=1e-5), (
        "the baseline is the MSE of each word's own sinusoid against its target's; the word "
        "that stays adds 0")


def test_a_network_that_learned_the_order_is_nearest_its_targets(batch):
    model, src_tokens, reorder, supervised, pad = batch
    learned = model.order_targets(reorder) + 0.01
    stats = diagnose(model, learned, reorder, supervised, src_tokens, pad)
    assert stats["order_nearest_target"] == 3 and stats["order_nearest_own"] == 0, stats
    assert stats["order_nearer_target"] == 3, stats
    assert stats["order_moved_loss"].item() == pytest.approx(3 * 1e-4, rel=1e-3), "summed"
    assert stats["order_moved_loss"] < stats["order_moved_own_loss"]


def test_nearest_position_is_one_of_the_sentence_s_words(batch):
    """EOS's position is no candidate: word 0 (target 2) output at EOS's position 3 is nearest
    its target, the sentence's last word."""
    model, src_tokens, reorder, supervised, pad = batch
    outputs = own_positions(src_tokens, pad)
    outputs[0, 0] = 3
    stats = diagnose(model, model.order_targets(outputs), reorder, supervised, src_tokens, pad)
    assert stats["order_nearest_target"] == 1 and stats["order_nearest_own"] == 2, stats


def test_nearer_target_compares_the_two_candidates_alone(batch):
    """Word 0 moves from 0 to 2; output 0.6 p_1 + 0.4 p_2, it lies nearest position 1, neither
    its own nor its target, but nearer its target than its own position: the pairwise share
    counts it, the nearest-of-all does not. Word 1 (1 -> 0) output at position 2 lies nearer
    its own position than its target; word 2 (2 -> 1) sits at its target."""
    model, src_tokens, reorder, supervised, pad = batch
    table = model.order_targets(torch.arange(3).unsqueeze(0))[0]
    outputs = model.order_targets(own_positions(src_tokens, pad))
    outputs[0, 0] = 0.6 * table[1] + 0.4 * table[2]
    outputs[0, 1], outputs[0, 2] = table[2], table[1]
    stats = diagnose(model, outputs, reorder, supervised, src_tokens, pad)
    assert stats["order_nearest_target"] == 1, f"only word 2 sits at its target: {stats}"
    assert stats["order_nearest_own"] == 0, stats
    assert stats["order_nearer_target"] == 2, (
        f"words 0 and 2 lie nearer their target than their own position: {stats}")


def test_shares_are_reduced_over_moved_tokens():
    logs = [{"order_loss": 2.0, "order_ntokens": 4, "order_own_loss": 1.0,
             "order_moved_ntokens": 2, "order_moved_loss": 1.0, "order_moved_own_loss": 0.8,
             "order_nearest_target": 1, "order_nearest_own": 1, "order_nearer_target": 2},
            {"order_loss": 1.0, "order_ntokens": 4, "order_own_loss": 1.0,
             "order_moved_ntokens": 2, "order_moved_loss": 0.6, "order_moved_own_loss": 0.8,
             "order_nearest_target": 2, "order_nearest_own": 0, "order_nearer_target": 1}]
    logs = [{"loss": 1.0, "nll_loss": 1.0, "ntokens": 5, "sample_size": 5, **log} for log in logs]
    with metrics.aggregate() as aggregated:
        LabelSmoothedCrossEntropyWithOrderCriterion.reduce_metrics(logs)
    values = aggregated.get_smoothed_values()
    assert values["order_own_loss"] == pytest.approx(0.25), "per supervised token"
    assert values["order_moved_loss"] == pytest.approx(0.4), "per moved token"
    assert values["order_moved_own_loss"] == pytest.approx(0.4)
    assert values["order_nearest_target"] == pytest.approx(0.75), "share of moved tokens"
    assert values["order_nearest_own"] == pytest.approx(0.25)
    assert values["order_nearer_target"] == pytest.approx(0.75)
