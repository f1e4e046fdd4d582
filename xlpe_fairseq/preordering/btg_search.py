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

from .model import sentence_pairs

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
    lengths = [int(n) for n in lengths]
    positions = best_positions(scores, lengths, penalty, units).cpu().tolist()
    return [row[:n] for row, n in zip(positions, lengths)]


def best_positions(scores, lengths, penalty=0.0, units=None):
    """``btg_search``'s positions as one ``(batch, time)`` long tensor on the device of
    ``scores``, padding tokens keeping their index; nothing leaves the device, so a
    training loss can use it without a synchronization."""
    gain, counts, unit_of = inversion_gains(scores, lengths, units)
    unit_positions = best_unit_positions(gain, counts, penalty)
    time = unit_of.shape[1]
    index = torch.arange(time, device=unit_of.device)
    lengths = torch.as_tensor(lengths, device=unit_of.device).unsqueeze(1)
    # a token's place: its unit's place, then its own within the unit; padding goes last
    key = torch.where(index < lengths, unit_positions.gather(1, unit_of), time) * time + index
    return key.argsort(dim=1).argsort(dim=1)


def inversion_gains(scores, lengths, units=None):
    """The search's input: ``(gain, counts, unit_of)`` with ``gain[b, i, j]`` (i < j, float64
    on the score grid) what inverting units i and j of sentence b adds to its log-likelihood,
    ``counts[b]`` its number of units (a list of ints) and ``unit_of`` (batch, time) the unit
    of each token (each token its own unit when ``units`` is None; padding token t is unit
    t, beyond the sentence's units)."""
    lengths = [int(n) for n in lengths]
    batch, time = scores.shape[0], scores.shape[1]
    device = scores.device
    pairs = sentence_pairs(torch.tensor(lengths, device=device), time)
    # inversion gain of each pair of tokens: -s_ij for i < j inside the sentence
    gain = (-quantize_scores(scores)).masked_fill(~pairs, 0.0)
    if units is None:
        return gain, lengths, torch.arange(time, device=device).expand(batch, time)
    counts = [u[n - 1] + 1 if n else 0 for u, n in zip(units, lengths)]
    unit_of = torch.tensor([list(u[:n]) + list(range(n, time)) for u, n in zip(units, lengths)],
                           dtype=torch.long, device=device).view(batch, time)
    # summed per unit pair by one scatter; the sums are exact on the grid, in any order
    cell = ((torch.arange(batch, device=device).view(batch, 1, 1) * time
             + unit_of.unsqueeze(2)) * time + unit_of.unsqueeze(1))
    unit_gain = torch.zeros_like(gain).view(-1).index_add_(0, cell.view(-1), gain.view(-1))
    # the pieces of one unit land on the diagonal, which no split crosses
    return torch.triu(unit_gain.view(batch, time, time), diagonal=1), counts, unit_of


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


def best_unit_positions(gain, counts, penalty):
    """Positions ``(batch, time)`` (long, on the device of ``gain``) of the units of the best
    BTG tree of each sentence under pair inversion gains (upper triangle of ``gain`` (batch,
    time, time), float64), ``counts`` (ints) its units; unit u >= counts[b] keeps place u.

    Bottom-up, one tensor step per span width over the whole batch, CKY keeps each span's best
    split and direction; top-down, one step per width again, each node of the chosen trees
    hands its target-order offset to its two children, so that no sentence is read alone."""
    batch, time = gain.shape[0], gain.shape[1]
    device = gain.device
    index = torch.arange(time, device=device)
    width_max = max(counts, default=0)
    if width_max < 2:
        return index.expand(batch, time).clone()
    size = width_max + 1
    prefix = torch.zeros(batch, size, size, dtype=torch.float64, device=device)
    prefix[:, 1:, 1:] = gain[:, :width_max, :width_max].cumsum(1).cumsum(2)
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
        return table.as_strided((batch, size - width, columns),
                                (size * size, size + 1, step), offset)

    # corner[l, m] = prefix[l, m] - prefix[m, m], so a cross block costs three corners
    corner = prefix - prefix.diagonal(dim1=1, dim2=2).unsqueeze(1)
    for width in range(2, size):
        # split m = l + 1 + c of the span [l, r = l + width): the cross block rows [l, m),
        # columns [m, r) is prefix[m, r] + corner[l, m] - prefix[l, r]; the penalty joins
        # the last, one number a span
        cross = spans(prefix, width, size, size + width) + spans(corner, width, 1, 1)
        cross.sub_(spans(prefix, width, 0, width) + penalty).clamp_(min=0)
        total = spans(best, width, 1, 1) + spans(best, width, size, size + width)  # l..m, m..r
        value, choice = total.add_(cross).max(dim=2)  # first maximum: leftmost split wins ties
        choice = choice.unsqueeze(2)
        spans(best, width, 0, width).copy_(value.unsqueeze(2))
        spans(split, width, 0, width).copy_(choice)
        # straight wins ties: invert only for a positive gain
        spans(inverted, width, 0, width).copy_(cross.gather(2, choice) > 0)

    # place[b, l, r]: 1 + the target-order offset of span [l, r) in the tree, 0 off the tree
    place = torch.zeros(batch, size, size, dtype=torch.long, device=device)
    place[torch.arange(batch, device=device), 0, torch.tensor(counts, device=device)] = 1
    table = (torch.arange(batch, device=device) * size * size).view(batch, 1)
    for width in range(size - 1, 1, -1):
        left = index[:size - width].unsqueeze(0)
        middle = left + 1 + spans(split, width, 0, width).squeeze(2)
        right = left + width
        node = spans(place, width, 0, width).squeeze(2)
        on_tree = node > 0
        swap = spans(inverted, width, 0, width).squeeze(2)
        # an inverted node puts its right child first; off the tree, children get 0 added
        first = node + (on_tree & swap) * (right - middle)
        second = node + (on_tree & ~swap) * (middle - left)
        place.view(-1).index_add_(
            0, torch.cat([table + left * size + middle, table + middle * size + right], 1)
            .view(-1), torch.cat([first, second], 1).view(-1))
    leaves = place.diagonal(offset=1, dim1=1, dim2=2) - 1
    positions = index.expand(batch, time).clone()
    positions[:, :width_max] = torch.where(index[:width_max] < torch.tensor(
        counts, device=device).unsqueeze(1), leaves, index[:width_max])
    return positions


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
