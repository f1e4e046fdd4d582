"""Label-smoothed cross-entropy plus DPE's order loss.

Zheng et al. (2021): ``L_order`` (Eq. 1) is the mean squared error between the DPE output
``r_i`` and ``p_j``, the sinusoid at token i's target-ordered position j.

Which loss λ weighs: Eq. 2 prints ``λ·L_translation + (1−λ)·L_order``, but the text calls λ
"the weight of the reordering loss" (§3.2) and "the position loss weight" (§5, Table 4), and
the authors' public code computes ``(1−λ)·CE + λ·order``. Two sources of three agree, and the
published λ values (0.5 WMT'14, 0.3 IWSLT'14) were run that way, so here

    ``L = (1−λ)·L_CE + λ·L_order``.

Scale of ``L_order`` (``--order-loss-reduction``):

- ``sum`` (default): the per-token MSE (mean over the embedding dimensions) is summed over the
  supervised source tokens, as fairseq sums the cross-entropy over target tokens (both are
  divided by ``sample_size`` later), so λ weighs two losses of the same scale, as Eq. 1 and 2
  read together intend;
- ``batch-mean``: the mean per-token MSE of the batch (of each worker's batch, under data
  parallelism) is added to the summed CE, as the public code does (``nn.MSELoss()`` over the
  batch's aligned tokens). The order loss is then weaker by the number of supervised tokens,
  ~ntokens; the paper's numbers (e.g. 28.59 on WMT'14) were made this way.

What each supervised token adds (``--order-loss-type``):

- ``mse`` (default, Eq. 1): the squared error of ``r_i`` against ``p_j``. A network that
  cannot tell where a token goes minimizes it with the *mean* of the sinusoids it may take,
  which lies nearer the token's own position than any single target: measured on both
  studied pairs, the sinusoid nearest to ``r_i`` stays the own position for most moved tokens
  although the loss beats copying it (docs/studies/dpe-bible-he-en.md).
- ``position-ce``: Eq. 1's MSE plus a cross-entropy over the sentence's positions, which
  rewards putting the most likely target nearest, not the mean: ``−log softmax_j(C·cos(r_i,
  p_j))`` over the positions ``j`` of the sentence's words, ``C`` the embedding dimension
  (``C·(1 − cos)`` is the squared distance between two sinusoids, so neighbouring positions
  differ by a few nats at the demo's width). The cross-entropy does not see the scale of
  ``r_i`` (a dot product would reward growing it without bound), and alone it let ``r_i``
  grow: Adam's steps are orthogonal to ``r_i``, and on En→Tr its MSE reached 160 times the
  own-position answer's within 150 updates, swamping the word in the encoder's input. The MSE
  holds ``r_i`` at the sinusoids' scale. Not in the paper.

The order loss then goes through ``--order-loss-reduction`` either way. The logged
``order_loss`` is Eq. 1's MSE under both types, so that the diagnostics below compare like
with like; ``position-ce`` also logs its cross-entropy as ``order_ce``.

Source tokens with a negative reorder position (padding, and unaligned words written by
``xlpe-reorder --unaligned skip``) and EOS have no order target and are left out.

Whether the DPE network learns the order or copies each token's own position is logged with
the order loss, in training and validation (``order_diagnostics``): ``order_own_loss`` (the
"own position" baseline on the same tokens), and on moved tokens ``order_moved_loss``,
``order_moved_own_loss``, ``order_nearest_target``, ``order_nearest_own`` and
``order_nearer_target``.

For InXL (``transformer_xlpe`` with ``PE_IN``, Eq. 7) it logs what shows whether the learned
input position trains: ``xlpe_in_norm`` and ``xlpe_embed_norm``, the mean norms of ``PE_IN`` and
of the scaled word embedding it is added to, and ``xlpe_saturated``, the share of tanh units
whose input exceeds 2 in magnitude.
"""
from dataclasses import dataclass, field

import torch.nn.functional as F

from fairseq import utils
from fairseq.criterions import register_criterion
from fairseq.criterions.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropyCriterion,
    LabelSmoothedCrossEntropyCriterionConfig,
)
from fairseq.dataclass import ChoiceEnum
from fairseq.logging import metrics

from ..io import Number
from ..plugin_errors import OptionError
from .order_diagnostics import order_diagnostics, sentence_positions

ORDER_LOSS_REDUCTIONS = ("sum", "batch-mean")
ORDER_LOSS_TYPES = ("mse", "position-ce")


@dataclass
class LabelSmoothedCrossEntropyWithOrderCriterionConfig(LabelSmoothedCrossEntropyCriterionConfig):
    order_lambda: float = field(
        default=0.5,
        metadata={
            "help": "λ, the weight of the order loss: (1−λ)·L_CE + λ·L_order, as the DPE "
            "paper's text and the authors' code run it (its Eq. 2 prints the reverse); the "
            "paper uses 0.5 on WMT'14 En-De and 0.3 on IWSLT'14"
        },
    )
    order_loss_reduction: ChoiceEnum(ORDER_LOSS_REDUCTIONS) = field(
        default="sum",
        metadata={
            "help": "sum: the per-token MSE summed over supervised source tokens, like the "
            "summed CE (Eq. 1); batch-mean: the batch's mean per-token MSE added to the "
            "summed CE, ~ntokens times weaker, as the public DPE code and the paper's numbers"
        },
    )
    order_loss_type: ChoiceEnum(ORDER_LOSS_TYPES) = field(
        default="mse",
        metadata={
            "help": "mse: the squared error of r_i against the target sinusoid (Eq. 1), which "
            "a network unsure of the target minimizes with the mean position; position-ce: "
            "that MSE plus a cross-entropy over the sentence's positions scored by "
            "C·cos(r_i, p_j), which rewards putting the likeliest target nearest (not in the "
            "paper)"
        },
    )


def xlpe_input_logging(net_output):
    """InXL's input statistics (``transformer_xlpe`` with ``PE_IN``) as summable log entries;
    none for other models."""
    extra = net_output[1] if len(net_output) > 1 and isinstance(net_output[1], dict) else {}
    statistics = extra.get("xlpe_input_statistics")
    if statistics is None:
        return {}
    keys = ("xlpe_in_norm", "xlpe_embed_norm", "xlpe_saturated", "xlpe_ntokens", "xlpe_units")
    return dict(zip(keys, statistics.data))


@register_criterion(
    "label_smoothed_cross_entropy_with_order",
    dataclass=LabelSmoothedCrossEntropyWithOrderCriterionConfig,
)
class LabelSmoothedCrossEntropyWithOrderCriterion(LabelSmoothedCrossEntropyCriterion):
    """Adds the order loss when the model predicts positions and the batch has them.

    The model puts its predictions ``(B, T, C)`` into ``net_output[1]["order_predictions"]``
    and provides ``order_targets(reorder_positions)``. Otherwise (validation without reorder
    files, other models) this is plain label-smoothed cross-entropy.
    """

    def __init__(self, task, sentence_avg, label_smoothing, order_lambda,
                 order_loss_reduction="sum", ignore_prefix_size=0, report_accuracy=False,
                 order_loss_type="mse"):
        super().__init__(task, sentence_avg, label_smoothing, ignore_prefix_size, report_accuracy)
        Number(float, minimum=0, maximum=1).check("--order-lambda", order_lambda)
        if str(order_loss_reduction) not in ORDER_LOSS_REDUCTIONS:
            raise OptionError(f"--order-loss-reduction must be one of {ORDER_LOSS_REDUCTIONS}, "
                              f"got {order_loss_reduction!r}")
        if str(order_loss_type) not in ORDER_LOSS_TYPES:
            raise OptionError(f"--order-loss-type must be one of {ORDER_LOSS_TYPES}, "
                              f"got {order_loss_type!r}")
        self.order_lambda = order_lambda
        self.order_loss_type = str(order_loss_type)
        self.order_loss_reduction = str(order_loss_reduction)
        self.source_eos = task.source_dictionary.eos()
        self.source_pad = task.source_dictionary.pad()

    def forward(self, model, sample, reduce=True):
        net_output = model(**sample["net_input"])
        loss, nll_loss = self.compute_loss(model, net_output, sample, reduce=reduce)
        sample_size = sample["target"].size(0) if self.sentence_avg else sample["ntokens"]
        logging_output = {
            "ntokens": sample["ntokens"],
            "nsentences": sample["target"].size(0),
            "sample_size": sample_size,
            "nll_loss": nll_loss.data,
        }
        inputs = self.order_inputs(model, net_output, sample)
        if inputs is not None:
            predictions, reorder_positions, supervised = inputs
            errors, targets = self.order_errors(model, predictions, reorder_positions)
            order_loss = errors.masked_select(supervised).sum()
            trained = order_loss
            if self.order_loss_type == "position-ce":
                order_ce = self.position_cross_entropy(
                    model, predictions, reorder_positions, sample["net_input"]["src_tokens"],
                    self.source_pad).masked_select(supervised).sum()
                trained = order_loss + order_ce
                logging_output["order_ce"] = order_ce.data
            order_ntokens = int(supervised.sum())
            if self.order_loss_reduction == "batch-mean":
                weighted_order_loss = trained / max(order_ntokens, 1)
            else:
                weighted_order_loss = trained
            loss = (1.0 - self.order_lambda) * loss + self.order_lambda * weighted_order_loss
            # logged summed in both modes, so reduce_metrics reports it per supervised token
            logging_output["order_loss"] = order_loss.data
            logging_output["order_ntokens"] = order_ntokens
            logging_output.update(order_diagnostics(
                model, predictions, targets, errors.detach(), reorder_positions, supervised,
                sample["net_input"]["src_tokens"], self.source_pad))
        logging_output.update(xlpe_input_logging(net_output))
        logging_output["loss"] = loss.data
        if self.report_accuracy:
            n_correct, total = self.compute_accuracy(model, net_output, sample)
            logging_output["n_correct"] = utils.item(n_correct.data)
            logging_output["total"] = utils.item(total.data)
        return loss, sample_size, logging_output

    def order_inputs(self, model, net_output, sample):
        """``(predictions, reorder_positions, supervised)``, or None when the model predicts
        no positions or the batch has none. Supervised: source tokens with a reorder position,
        EOS excluded."""
        extra = net_output[1] if len(net_output) > 1 and isinstance(net_output[1], dict) else {}
        predictions = extra.get("order_predictions")
        reorder_positions = sample.get("reorder_positions")
        if predictions is None or reorder_positions is None:
            return None
        supervised = reorder_positions.ge(0) & sample["net_input"]["src_tokens"].ne(self.source_eos)
        return predictions, reorder_positions, supervised

    @staticmethod
    def order_errors(model, predictions, reorder_positions):
        """``(errors, targets)``: each token's squared error against its target sinusoid,
        averaged over the dimensions ``(B, T)`` (the terms of Eq. 1), and the targets
        ``(B, T, C)``."""
        targets = model.order_targets(reorder_positions).float()
        return (predictions.float() - targets).pow(2).mean(dim=-1), targets

    @staticmethod
    def position_cross_entropy(model, predictions, reorder_positions, src_tokens, padding_idx):
        """Each token's ``−log softmax_j(C·cos(r_i, p_j))`` at its target ``j``, over the
        positions of its sentence's words ``(B, T)``; any value where it has no target."""
        table, beyond = sentence_positions(model, src_tokens, padding_idx)
        cosine = F.normalize(predictions.float(), dim=-1) @ F.normalize(table, dim=-1).t()
        scores = (table.size(-1) * cosine).masked_fill(beyond, float("-inf"))
        log_probs = F.log_softmax(scores, dim=-1)
        return -log_probs.gather(-1, reorder_positions.clamp(min=0).unsqueeze(-1)).squeeze(-1)

    @classmethod
    def reduce_metrics(cls, logging_outputs) -> None:
        super().reduce_metrics(logging_outputs)
        def total(key):
            return sum(log.get(key, 0) for log in logging_outputs)

        order_ntokens = total("order_ntokens")
        if order_ntokens > 0:
            metrics.log_scalar("order_loss", total("order_loss") / order_ntokens, order_ntokens,
                               round=4)
            metrics.log_scalar("order_own_loss", total("order_own_loss") / order_ntokens,
                               order_ntokens, round=4)
            if any("order_ce" in log for log in logging_outputs):
                metrics.log_scalar("order_ce", total("order_ce") / order_ntokens, order_ntokens,
                                   round=4)
        xlpe_tokens = total("xlpe_ntokens")
        if xlpe_tokens > 0:
            metrics.log_scalar("xlpe_in_norm", total("xlpe_in_norm") / xlpe_tokens,
                               xlpe_tokens, round=3)
            metrics.log_scalar("xlpe_embed_norm", total("xlpe_embed_norm") / xlpe_tokens,
                               xlpe_tokens, round=3)
            metrics.log_scalar("xlpe_saturated", total("xlpe_saturated") / total("xlpe_units"),
                               xlpe_tokens, round=4)
        moved = total("order_moved_ntokens")
        if moved > 0:
            for key in ("order_moved_loss", "order_moved_own_loss", "order_nearest_target",
                        "order_nearest_own", "order_nearer_target"):
                metrics.log_scalar(key, total(key) / moved, moved, round=4)
