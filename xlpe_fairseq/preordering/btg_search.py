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


def word_units(tokens):
    """Word index of each BPE token: a piece ending in ``@@`` belongs to the next token's word."""
    units = []
    word = 0
    for token in tokens:
        units.append(word)
        if not token.endswith("@@"):
            word += 1
    return units


def btg_search(scores, lengths, penalty=0.0, units=None):
    """Best BTG-consistent positions for each sentence of a batch.

    ``scores`` (batch, time, time): ``scores[b, i, j]`` for ``i < j < lengths[b]`` is the
    log-odds that token i precedes token j in the target order (other entries are ignored).
    ``units`` (optional, one list per sentence, e.g. ``word_units``): non-decreasing unit
    index of each token; the tokens of a unit then move as a block in source order (the
    search runs over units with the summed scores of their token pairs), as the BPE pieces
    of a word do in the BTG oracle. Returns one position list (a permutation of
    ``range(lengths[b])``) per sentence.
    """
    gain, counts, units = inversion_gains(scores, lengths, units)
    return [expand_units(unit_positions, u)
            for unit_positions, u in zip(best_unit_positions(gain, counts, penalty), units)]


def inversion_gains(scores, lengths, units=None):
    """The search's input: ``(gain, counts, units)`` with ``gain[b, i, j]`` (i < j, float64
    on the score grid) what inverting units i and j of sentence b adds to its log-likelihood,
    ``counts[b]`` its number of units and ``units[b]`` the unit of each of its tokens (each
    token its own unit when ``units`` is None)."""
    lengths = [int(n) for n in lengths]
    # inversion gain of each pair: -s_ij above the diagonal, nothing elsewhere
    gain = torch.triu(-quantize_scores(scores), diagonal=1)
    if units is None:
        return gain, lengths, [list(range(n)) for n in lengths]
    units = [list(u[:n]) for u, n in zip(units, lengths)]
    unit_counts = [u[-1] + 1 if u else 0 for u in units]
    membership = torch.zeros(gain.shape[0], gain.shape[1], max(unit_counts + [1]),
                             dtype=gain.dtype, device=gain.device)
    for b, u in enumerate(units):
        membership[b, torch.arange(len(u)), torch.tensor(u, dtype=torch.long)] = 1.0
    unit_gain = torch.triu(membership.transpose(1, 2) @ gain @ membership, diagonal=1)
    return unit_gain, unit_counts, units


def expand_units(unit_positions, units):
    """Token positions from unit positions: each unit's tokens in a row, in source order."""
    tokens_of = [[] for _ in unit_positions]
    for token, unit in enumerate(units):
        tokens_of[unit].append(token)
    positions = [0] * len(units)
    rank = 0
    for unit in sorted(range(len(unit_positions)), key=unit_positions.__getitem__):
        for token in tokens_of[unit]:
            positions[token] = rank
            rank += 1
    return positions


def best_unit_positions(gain, lengths, penalty):
    """Positions of the best BTG tree of each sentence under pair inversion gains (upper
    triangle of ``gain`` (batch, time, time), float64)."""
    batch, time = gain.shape[0], gain.shape[1]
    device = gain.device
    if time < 2:
        return [list(range(n)) for n in lengths]
    size = time + 1
    prefix = torch.zeros(batch, size, size, dtype=torch.float64, device=device)
    prefix[:, 1:, 1:] = gain.cumsum(1).cumsum(2)
    best = torch.zeros(batch, size, size, dtype=torch.float64, device=device)
    split = torch.zeros(batch, size, size, dtype=torch.long, device=device)
    inverted = torch.zeros(batch, size, size, dtype=torch.bool, device=device)

    def spans(table, width, step, offset):
        """One corner of every span [l, l + width) of ``table`` as a strided view: entry
        (b, l, c), c = 0 .. width-2 for the splits m = l + 1 + c (one column when ``step`` is
        0), is ``table``'s element ``b * size^2 + l * (size + 1) + c * step + offset``. The
        corners are regular in memory, so no index tensors are built (indexing with them
        cost most of the search's time)."""
        columns = width - 1 if step else 1
        return table.as_strided((batch, time - width + 1, columns),
                                (size * size, size + 1, step), offset)

    for width in range(2, time + 1):
        # splits m = l + k of the span [l, r = l + width): four corners of the cross block
        cross = (spans(prefix, width, size, size + width)     # prefix[m, r]
                 - spans(prefix, width, 0, width)             # prefix[l, r]
                 - spans(prefix, width, size + 1, size + 1)   # prefix[m, m]
                 + spans(prefix, width, 1, 1)) - penalty      # prefix[l, m]
        invert = cross > 0
        total = (spans(best, width, 1, 1)                      # best[l, m]
                 + spans(best, width, size, size + width)      # best[m, r]
                 + cross.clamp(min=0))
        value, choice = total.max(dim=2)  # first maximum: the leftmost split wins ties
        spans(best, width, 0, width).copy_(value.unsqueeze(2))
        spans(split, width, 0, width).copy_(
            (torch.arange(1, time - width + 2, device=device).unsqueeze(0) + choice)
            .unsqueeze(2))
        spans(inverted, width, 0, width).copy_(invert.gather(2, choice.unsqueeze(2)))
    split = split.cpu()
    inverted = inverted.cpu()
    return [_read_tree(split[b], inverted[b], n) for b, n in enumerate(lengths)]


def _read_tree(split, inverted, length):
    """Positions from the chosen splits and merge directions of one sentence."""
    if length < 2:
        return list(range(length))

    def children(span):
        left, right = span
        middle = int(split[left, right])
        first, second = (left, middle), (middle, right)
        return (second, first) if inverted[left, right] else (first, second)

    return tree_positions((0, length), children)


def tree_positions(root, children):
    """Positions of the leaves of a BTG tree in target order. A node is a tuple starting with
    its span ``(left, right)``; ``children(node)`` gives a node of two or more units its two
    children in target order (the inverted ones swapped)."""
    order = []
    stack = [root]
    # depth-first, the second child pushed first so spans come off the stack in target order
    while stack:
        node = stack.pop()
        if node[1] - node[0] == 1:
            order.append(node[0])
            continue
        first, second = children(node)
        stack.append(second)
        stack.append(first)
    positions = [0] * len(order)
    for rank, unit in enumerate(order):
        positions[unit] = rank
    return positions
