"""The order-loss criterion: formula, scale, fallbacks and logging."""
import math
from types import SimpleNamespace

import pytest
import torch
from fairseq.criterions.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropyCriterion,
    label_smoothed_nll_loss,
)
from fairseq.data import Dictionary
from fairseq.logging import metrics
from fairseq.modules import SinusoidalPositionalEmbedding

from xlpe_fairseq.criterions.label_smoothed_cross_entropy_with_order import (
    LabelSmoothedCrossEntropyWithOrderCriterion,
)
from xlpe_fairseq.modules import SinusoidalPositionsAt

DIM = 8


class FixedOutputModel(torch.nn.Module):
    """Returns fixed logits and order predictions, like transformer_dpe's forward."""

    def __init__(self, logits, order_predictions, padding_idx):
        super().__init__()
        self.logits = logits
        self.order_predictions = order_predictions
        self.positions = SinusoidalPositionsAt(DIM, padding_idx)

    def forward(self, src_tokens, src_lengths, prev_output_tokens):
        extra = {"attn": [None]}
        if self.order_predictions is not None:
            extra["order_predictions"] = self.order_predictions
        return self.logits, extra

    def get_normalized_probs(self, net_output, log_probs, sample=None):
        return torch.log_softmax(net_output[0], dim=-1)

    def get_targets(self, sample, net_output):
        return sample["target"]

    def order_targets(self, reorder_positions):
        return self.positions(reorder_positions)


def fixed_batch(vocab, with_positions=True):
    torch.manual_seed(0)
    pad, eos = vocab.pad(), vocab.eos()
    # left-padded source: sentence 0 has 3 tokens + EOS, sentence 1 has 1 token + EOS
    src_tokens = torch.LongTensor([[5, 6, 7, eos], [pad, pad, 8, eos]])
    target = torch.LongTensor([[5, 6, eos], [7, eos, pad]])
    sample = {
        "net_input": {
            "src_tokens": src_tokens,
            "src_lengths": torch.LongTensor([4, 2]),
            "prev_output_tokens": target.clone(),
        },
        "target": target,
        "ntokens": 5,
    }
    if with_positions:
        sample["reorder_positions"] = torch.LongTensor([[2, 0, 1, 3], [-1, -1, 0, 1]])
    return sample


@pytest.fixture
def vocab():
    dictionary = Dictionary()
    for i in range(6):
        dictionary.add_symbol(f"w{i}")
    return dictionary


def make_criterion(vocab, order_lambda=0.3, eps=0.1, reduction="sum"):
    task = SimpleNamespace(source_dictionary=vocab, target_dictionary=vocab)
    return LabelSmoothedCrossEntropyWithOrderCriterion(task, False, eps, order_lambda, reduction)


def test_loss_is_lambda_weighted_sum_of_summed_ce_and_summed_mse(vocab):
    sample = fixed_batch(vocab)
    logits = torch.randn(2, 3, len(vocab))
    predictions = torch.randn(2, 4, DIM)
    model = FixedOutputModel(logits, predictions, vocab.pad())
    loss, sample_size, log = make_criterion(vocab)(model, sample)

    lprobs = torch.log_softmax(logits, -1).view(-1, len(vocab))
    ce, _ = label_smoothed_nll_loss(lprobs, sample["target"].view(-1), 0.1, ignore_index=vocab.pad())
    table = SinusoidalPositionalEmbedding.get_embedding(10, DIM, vocab.pad())
    supervised = [(0, 0, 2), (0, 1, 0), (0, 2, 1), (1, 2, 0)]  # (row, column, position), no EOS/pad
    order = sum(
        ((predictions[b, t] - table[p + vocab.pad() + 1]) ** 2).mean() for b, t, p in supervised
    )
    expected = 0.7 * ce + 0.3 * order
    assert torch.allclose(loss, expected, atol=1e-5), f"loss {loss} != 0.7*CE + 0.3*order = {expected}"
    assert sample_size == 5
    assert log["order_ntokens"] == 4, "EOS and padding are not supervised"
    assert torch.allclose(log["order_loss"], order, atol=1e-5)


def sinusoid(index, dim=DIM):
    """fairseq's sinusoid table row ``index``, written out: sin in the first half, cos after."""
    half = dim // 2
    frequencies = [math.exp(-k * math.log(10000) / (half - 1)) for k in range(half)]
    return torch.tensor([math.sin(index * f) for f in frequencies]
                        + [math.cos(index * f) for f in frequencies])


def exact_batch(vocab):
    """Uniform logits (label-smoothed CE = log V per target token, whatever ε) and order
    predictions exactly 1 away from their targets in every dimension (MSE 1 per supervised
    token; EOS and padding are 10 away, to show they do not count)."""
    sample = fixed_batch(vocab)
    logits = torch.zeros(2, 3, len(vocab))
    predictions = torch.full((2, 4, DIM), 10.0)
    # fairseq numbers position p as table row p + padding_idx + 1
    for b, t, p in [(0, 0, 2), (0, 1, 0), (0, 2, 1), (1, 2, 0)]:
        predictions[b, t] = sinusoid(p + vocab.pad() + 1) + 1.0
    return sample, FixedOutputModel(logits, predictions, vocab.pad())


@pytest.mark.parametrize("order_lambda", [0.0, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("reduction,order_term", [("sum", 4.0), ("batch-mean", 1.0)])
def test_lambda_weighs_the_order_loss_at_each_scale(vocab, order_lambda, reduction, order_term):
    """(1−λ)·CE + λ·order, with 5 target tokens and 4 supervised source tokens: the summed
    order loss is 4·1, the batch mean 1 (ntokens times weaker), CE is 5·log V."""
    sample, model = exact_batch(vocab)
    criterion = make_criterion(vocab, order_lambda=order_lambda, reduction=reduction)
    loss, _, log = criterion(model, sample)
    ce = 5 * math.log(len(vocab))
    expected = (1 - order_lambda) * ce + order_lambda * order_term
    assert loss.item() == pytest.approx(expected, rel=1e-5), (
        f"--order-lambda {order_lambda} --order-loss-reduction {reduction}: loss {loss.item()} "
        f"!= (1-λ)·{ce:.4f} + λ·{order_term}")
    assert log["order_loss"].item() == pytest.approx(4.0, rel=1e-5), "logged summed in both modes"
    assert log["order_ntokens"] == 4


def test_batch_mean_without_supervised_tokens_adds_nothing(vocab):
    sample, model = exact_batch(vocab)
    sample["reorder_positions"] = torch.LongTensor([[-1, -1, -1, 3], [-1, -1, -1, 1]])
    loss, _, log = make_criterion(vocab, order_lambda=0.5, reduction="batch-mean")(model, sample)
    assert loss.item() == pytest.approx(0.5 * 5 * math.log(len(vocab)), rel=1e-5)
    assert log["order_ntokens"] == 0


def test_tokens_without_order_target_are_not_supervised(vocab):
    """-1 (xlpe-reorder --unaligned skip) inside a sentence is left out like padding."""
    sample, model = exact_batch(vocab)
    sample["reorder_positions"] = torch.LongTensor([[1, -1, 0, 3], [-1, -1, 0, 1]])
    model.order_predictions[0, 0] = sinusoid(1 + vocab.pad() + 1) + 1.0
    model.order_predictions[0, 2] = sinusoid(0 + vocab.pad() + 1) + 1.0
    _, _, log = make_criterion(vocab)(model, sample)
    assert log["order_ntokens"] == 3
    assert log["order_loss"].item() == pytest.approx(3.0, rel=1e-5)


def test_reduction_is_validated(vocab):
    with pytest.raises(ValueError, match=r"--order-loss-reduction must be one of"):
        make_criterion(vocab, reduction="mean")


def test_order_loss_is_summed_not_averaged(vocab):
    """Doubling the batch doubles the order loss, as it does the summed cross-entropy."""
    sample = fixed_batch(vocab)
    logits = torch.randn(2, 3, len(vocab))
    predictions = torch.randn(2, 4, DIM)
    single = make_criterion(vocab)(FixedOutputModel(logits, predictions, vocab.pad()), sample)[2]
    net_input = sample["net_input"]
    doubled_sample = {
        "net_input": {key: value.repeat(2, *[1] * (value.dim() - 1)) for key, value in net_input.items()},
        "target": sample["target"].repeat(2, 1),
        "ntokens": 2 * sample["ntokens"],
        "reorder_positions": sample["reorder_positions"].repeat(2, 1),
    }
    doubled_model = FixedOutputModel(logits.repeat(2, 1, 1), predictions.repeat(2, 1, 1), vocab.pad())
    doubled = make_criterion(vocab)(doubled_model, doubled_sample)[2]
    assert torch.allclose(doubled["order_loss"], 2 * single["order_loss"]), (
        f"{doubled['order_loss']} != 2 * {single['order_loss']}")


@pytest.mark.parametrize("with_positions,with_predictions", [(False, True), (True, False)])
def test_falls_back_to_plain_label_smoothed_ce(vocab, with_positions, with_predictions):
    sample = fixed_batch(vocab, with_positions=with_positions)
    logits = torch.randn(2, 3, len(vocab))
    predictions = torch.randn(2, 4, DIM) if with_predictions else None
    model = FixedOutputModel(logits, predictions, vocab.pad())
    loss, _, log = make_criterion(vocab)(model, sample)
    task = SimpleNamespace(source_dictionary=vocab, target_dictionary=vocab)
    plain, _, _ = LabelSmoothedCrossEntropyCriterion(task, False, 0.1)(model, sample)
    assert torch.allclose(loss, plain), "without positions or predictions the loss is plain CE"
    assert "order_loss" not in log


def test_order_loss_is_logged_per_supervised_token(vocab):
    logs = [{"loss": 8.0, "nll_loss": 6.0, "ntokens": 5, "sample_size": 5, "order_loss": 2.0, "order_ntokens": 4},
            {"loss": 4.0, "nll_loss": 3.0, "ntokens": 5, "sample_size": 5, "order_loss": 1.0, "order_ntokens": 2}]
    with metrics.aggregate() as aggregated:
        LabelSmoothedCrossEntropyWithOrderCriterion.reduce_metrics(logs)
    assert aggregated.get_smoothed_values()["order_loss"] == pytest.approx(0.5)


def test_inxl_input_statistics_are_logged_per_token_and_unit(vocab):
    logs = [{"loss": 8.0, "nll_loss": 6.0, "ntokens": 5, "sample_size": 5, "xlpe_in_norm": 30.0,
             "xlpe_embed_norm": 60.0, "xlpe_saturated": 4.0, "xlpe_ntokens": 4,
             "xlpe_units": 64},
            {"loss": 4.0, "nll_loss": 3.0, "ntokens": 5, "sample_size": 5, "xlpe_in_norm": 10.0,
             "xlpe_embed_norm": 20.0, "xlpe_saturated": 12.0, "xlpe_ntokens": 4,
             "xlpe_units": 64}]
    with metrics.aggregate() as aggregated:
        LabelSmoothedCrossEntropyWithOrderCriterion.reduce_metrics(logs)
    values = aggregated.get_smoothed_values()
    assert values["xlpe_in_norm"] == pytest.approx(5.0) and values["xlpe_embed_norm"] == 10.0
    assert values["xlpe_saturated"] == pytest.approx(0.125), "saturated units over all units"


def test_lambda_out_of_range_is_rejected(vocab):
    with pytest.raises(ValueError, match=r"--order-lambda must be a finite number of at least 0 "
                       r"and at most 1, got 1.5"):
        make_criterion(vocab, order_lambda=1.5)


def position_ce_criterion(vocab, order_lambda=0.3):
    task = SimpleNamespace(source_dictionary=vocab, target_dictionary=vocab)
    return LabelSmoothedCrossEntropyWithOrderCriterion(
        task, False, 0.1, order_lambda, "sum", order_loss_type="position-ce")


def test_position_ce_is_a_cross_entropy_over_the_sentence_s_word_positions(vocab):
    """Word 0 of sentence 0 (target 2) scored against positions 0..2 only: EOS's position 3
    and the padding are no candidates."""
    sample = fixed_batch(vocab)
    table = SinusoidalPositionsAt(DIM, vocab.pad())(torch.arange(4).unsqueeze(0))[0]
    r = torch.randn(2, 4, DIM)
    model = FixedOutputModel(torch.randn(2, 3, len(vocab)), r, vocab.pad())
    terms = LabelSmoothedCrossEntropyWithOrderCriterion.position_cross_entropy(
        model, r, sample["reorder_positions"], sample["net_input"]["src_tokens"], vocab.pad())
    scores = DIM * torch.nn.functional.cosine_similarity(r[0, 0].unsqueeze(0), table[:3], dim=-1)
    expected = -torch.log_softmax(scores, dim=0)[2]
    assert terms[0, 0].item() == pytest.approx(expected.item(), rel=1e-5), (
        "−log softmax_j(C·cos(r_i, p_j)) at the target, over the positions of the words")
    assert terms[1, 2].item() == pytest.approx(0.0, abs=1e-6), (
        "a one-word sentence has one candidate position, which is certain")


def test_position_ce_adds_the_cross_entropy_and_the_logged_order_loss_stays_eq_1(vocab):
    sample = fixed_batch(vocab)
    r = torch.randn(2, 4, DIM)
    model = FixedOutputModel(torch.randn(2, 3, len(vocab)), r, vocab.pad())
    mse_loss, _, mse_log = make_criterion(vocab)(model, sample)
    ce_loss, _, ce_log = position_ce_criterion(vocab)(model, sample)
    supervised = sample["reorder_positions"].ge(0) & sample["net_input"]["src_tokens"].ne(vocab.eos())
    ce = LabelSmoothedCrossEntropyWithOrderCriterion.position_cross_entropy(
        model, r, sample["reorder_positions"], sample["net_input"]["src_tokens"], vocab.pad())
    ce = ce.masked_select(supervised).sum()
    order_mse = mse_log["order_loss"]
    assert ce_log["order_loss"].item() == pytest.approx(order_mse.item()), (
        "order_loss is logged as Eq. 1's MSE under both types, for the diagnostics")
    assert ce_log["order_ce"].item() == pytest.approx(ce.item())
    assert "order_ce" not in mse_log
    assert (ce_loss - mse_loss).item() == pytest.approx(0.3 * ce.item(), rel=1e-4), (
        "with position-ce, λ weighs the MSE plus the cross-entropy")


def test_the_cross_entropy_does_not_see_the_scale_of_the_output(vocab):
    """A dot product would reward growing r without bound; the cosine does not see its norm
    (the MSE added to it holds the scale)."""
    sample = fixed_batch(vocab)
    r = torch.randn(2, 4, DIM)
    args = (sample["reorder_positions"], sample["net_input"]["src_tokens"], vocab.pad())
    model = FixedOutputModel(None, r, vocab.pad())
    ce = LabelSmoothedCrossEntropyWithOrderCriterion.position_cross_entropy
    assert torch.allclose(ce(model, r, *args), ce(model, 5 * r, *args), atol=1e-5)


def test_position_ce_places_an_uncertain_token_at_its_likelier_target_where_mse_does_not():
    """Word 2 of a five-word sentence goes to position 1 in 60% of the data and to 3 in 40%.
    MSE settles at the mean of the two sinusoids, which is nearest the word's own position 2:
    the loss drops while the word looks unmoved (what the DPE studies measured). The
    cross-entropy settles nearest the likelier target."""
    vocab = Dictionary()
    pad, eos = vocab.pad(), vocab.eos()
    src_tokens = torch.LongTensor([[5, 6, 7, 8, 9, eos]] * 5)
    reorder = torch.LongTensor([[0, 2, 1, 3, 4, 5]] * 3 + [[0, 1, 3, 2, 4, 5]] * 2)
    model = FixedOutputModel(None, None, pad)
    # the demo's width: at 8 dimensions neighbouring sinusoids differ by under a nat
    model.positions = SinusoidalPositionsAt(128, pad)
    table = model.order_targets(torch.arange(5).unsqueeze(0))[0]
    criterion = LabelSmoothedCrossEntropyWithOrderCriterion
    nearest = {}
    for loss_type in ("mse", "position-ce"):
        r = table[2].clone().requires_grad_()
        optimizer = torch.optim.Adam([r], lr=0.05)
        for _ in range(300):
            outputs = table[[0, 1, 2, 3, 4, 0]].repeat(5, 1, 1)
            outputs[:, 2] = r
            terms, _ = criterion.order_errors(model, outputs, reorder)
            if loss_type == "position-ce":
                terms = terms + criterion.position_cross_entropy(
                    model, outputs, reorder, src_tokens, pad)
            optimizer.zero_grad()
            terms[:, 2].sum().backward()
            optimizer.step()
        nearest[loss_type] = int((table - r.detach()).norm(dim=-1).argmin())
        scale = (r.norm() / table[2].norm()).item()
        assert 0.5 < scale < 2, f"{loss_type}: |r| became {scale:.2f} times a sinusoid's norm"
    assert nearest == {"mse": 2, "position-ce": 1}, (
        f"nearest positions after training: {nearest}; expected MSE at the own position 2 "
        "(the mean of targets 1 and 3), the cross-entropy at the likelier target 1")


def test_order_loss_type_is_validated(vocab):
    task = SimpleNamespace(source_dictionary=vocab, target_dictionary=vocab)
    with pytest.raises(Exception, match="order-loss-type"):
        LabelSmoothedCrossEntropyWithOrderCriterion(task, False, 0.1, 0.3, "sum",
                                                    order_loss_type="hinge")
