"""The best BTG permutation under pairwise order scores: CKY over straight/inverted merges.

A BTG tree (Wu 1997) builds the target order by merging adjacent source spans either
straight or inverted; a permutation is BTG-consistent exactly when such a tree yields it, as
the training positions of XL PE are (Ding et al. 2020, after Neubig et al. 2012). Given pair
scores ``s_ij`` (log-odds that source token i, i < j, precedes token j in the target), the
log-likelihood of a permutation is, up to a constant, the sum of ``-s_ij`` over the pairs it
inverts. Inverting the merge of ``[l, m)`` and ``[m, r)`` inverts exactly the pairs across
the split, so the best tree is found by the O(n^3) CKY recursion

    best(l, r) = max_m  best(l, m) + best(m, r) + max(0, cross(l, m, r) - penalty)

with ``cross`` read off 2-D prefix sums (as in the top-down BTG preorderer of Nakagawa 2015,
here solved exactly bottom-up). ``penalty`` >= 0 is charged per inverted node and favours
fewer, larger moves (the chunks of the fuzzy reordering score).

Scores are rounded to multiples of ``1 / SCORE_SCALE`` and summed in float64, where such
sums are exact: the search then decides every comparison the same way whatever the batch,
device or summation order, and ties go to the straight merge and the leftmost split.
"""
import torch

SCORE_SCALE = 256.0


def quantize_scores(scores):
    """Pair scores on the grid the search works on (float64, exactly summable)."""
    return torch.round(scores.double() * SCORE_SCALE) / SCORE_SCALE


def btg_search(scores, lengths, penalty=0.0):
    """Best BTG-consistent positions for each sentence of a batch.

    ``scores`` (batch, time, time): ``scores[b, i, j]`` for ``i < j < lengths[b]`` is the
    log-odds that token i precedes token j in the target order (other entries are ignored).
    Returns one position list (a permutation of ``range(lengths[b])``) per sentence.
    """
    lengths = [int(n) for n in lengths]
    batch, time = scores.shape[0], scores.shape[1]
    device = scores.device
    if time < 2:
        return [list(range(n)) for n in lengths]
    # inversion gain of each pair: -s_ij above the diagonal, nothing elsewhere
    gain = torch.triu(-quantize_scores(scores), diagonal=1)
    prefix = torch.zeros(batch, time + 1, time + 1, dtype=torch.float64, device=device)
    prefix[:, 1:, 1:] = gain.cumsum(1).cumsum(2)
    best = torch.zeros(batch, time + 1, time + 1, dtype=torch.float64, device=device)
    split = torch.zeros(batch, time + 1, time + 1, dtype=torch.long, device=device)
    inverted = torch.zeros(batch, time + 1, time + 1, dtype=torch.bool, device=device)
    for width in range(2, time + 1):
        left = torch.arange(time - width + 1, device=device).unsqueeze(1)
        middle = left + torch.arange(1, width, device=device).unsqueeze(0)
        right = (left + width).expand_as(middle)
        left = left.expand_as(middle)
        cross = (prefix[:, middle, right] - prefix[:, left, right]
                 - prefix[:, middle, middle] + prefix[:, left, middle]) - penalty
        invert = cross > 0
        total = best[:, left, middle] + best[:, middle, right] + cross.clamp(min=0)
        value, choice = total.max(dim=2)  # first maximum: the leftmost split wins ties
        spans = left[:, 0]
        best[:, spans, spans + width] = value
        split[:, spans, spans + width] = spans.unsqueeze(0) + 1 + choice
        inverted[:, spans, spans + width] = invert.gather(2, choice.unsqueeze(2)).squeeze(2)
    split = split.cpu()
    inverted = inverted.cpu()
    return [_read_tree(split[b], inverted[b], n) for b, n in enumerate(lengths)]


def _read_tree(split, inverted, length):
    """Positions from the chosen splits and merge directions of one sentence."""
    if length < 2:
        return list(range(length))
    order = []
    stack = [(0, length)]
    # depth-first, right child pushed first so spans come off the stack in target order
    while stack:
        left, right = stack.pop()
        if right - left == 1:
            order.append(left)
            continue
        middle = int(split[left, right])
        first, second = (left, middle), (middle, right)
        if inverted[left, right]:
            first, second = second, first
        stack.append(second)
        stack.append(first)
    positions = [0] * length
    for rank, token in enumerate(order):
        positions[token] = rank
    return positions
