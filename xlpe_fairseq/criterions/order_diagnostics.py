"""Does DPE's network learn the target order, or copy each token's own position?

The order loss alone cannot tell: a network that outputs ``p_i``, the sinusoid at token i's
own position, already scores well, because most tokens keep their position and the sinusoids
of nearby positions are close. So beside ``L_order`` (Zheng et al. 2021, Eq. 1) this measures,
on the same supervised tokens,

- the "own position" baseline: the MSE of ``p_i`` against the target ``p_j``;
- on the *moved* tokens (``j != i``) only: the order loss, the baseline, how often the
  sinusoid nearest to the output ``r_i`` (among the sentence's positions) is the target ``j``
  and how often it is the token's own ``i``, and how often ``r_i`` is nearer ``p_j`` than
  ``p_i`` (the two candidates alone, whatever other positions lie nearer).

A network that learns reordering beats the baseline on moved tokens and places them nearer
their target than their own position. The nearest-of-all share asks more: a network that
moves a token most of the way to a far target may still lie nearest a position in between.
"""
import torch
from fairseq import utils


def own_positions(src_tokens: torch.Tensor, padding_idx: int) -> torch.Tensor:
    """0-based position of each source token as fairseq's encoder numbers it (left or right
    padding alike), -1 at padding."""
    return utils.make_positions(src_tokens, padding_idx) - (padding_idx + 1)


def sentence_positions(model, src_tokens, padding_idx):
    """``(table, beyond)``: the sinusoids of positions 0..T-1 ``(T, C)`` and, per sentence,
    which of them lie past its last word ``(B, 1, T)``, EOS excluded. A sentence of EOS alone
    keeps position 0, so that no sentence is left without a candidate."""
    length = (src_tokens.ne(padding_idx).sum(dim=1, keepdim=True) - 1).clamp(min=1)
    span = torch.arange(src_tokens.size(1), device=src_tokens.device)
    table = model.order_targets(span.unsqueeze(0)).float().squeeze(0)
    return table, span.view(1, 1, -1) >= length.unsqueeze(-1)


def nearest_sentence_position(model, predictions, src_tokens, padding_idx):
    """``(B, T)``: per output of ``predictions`` ``(B, T, C)``, the position among its
    sentence's words (``sentence_positions``) whose sinusoid lies nearest to it."""
    table, beyond = sentence_positions(model, src_tokens, padding_idx)
    distance = (predictions.pow(2).sum(-1, keepdim=True) - 2 * predictions @ table.t()
                + table.pow(2).sum(-1))
    return distance.masked_fill(beyond, float("inf")).argmin(dim=-1)


@torch.no_grad()
def order_diagnostics(model, predictions, targets, errors, reorder_positions, supervised,
                      src_tokens, padding_idx):
    """Summed statistics of one batch (see the module docstring), for fairseq's logging.

    ``predictions`` ``(B, T, C)``: the DPE output; ``targets`` ``(B, T, C)`` and ``errors``
    ``(B, T)``: the target sinusoids and the squared errors against them (Eq. 1's per-token
    terms), as the criterion computed them; ``reorder_positions`` ``(B, T)``: target
    positions; ``supervised`` ``(B, T)``: the tokens the order loss covers (EOS excluded).
    """
    predictions = predictions.float()
    own = own_positions(src_tokens, padding_idx)
    own_targets = model.order_targets(own).float()
    own_error = (own_targets - targets).pow(2).mean(dim=-1)
    from_own = (predictions - own_targets).pow(2).mean(dim=-1)
    moved = supervised & reorder_positions.ne(own)

    nearest = nearest_sentence_position(model, predictions, src_tokens, padding_idx)
    return {
        "order_own_loss": own_error.masked_select(supervised).sum(),
        "order_moved_ntokens": int(moved.sum()),
        "order_moved_loss": errors.masked_select(moved).sum(),
        "order_moved_own_loss": own_error.masked_select(moved).sum(),
        "order_nearest_target": int((nearest.eq(reorder_positions) & moved).sum()),
        "order_nearest_own": int((nearest.eq(own) & moved).sum()),
        "order_nearer_target": int((errors.lt(from_own) & moved).sum()),
    }
