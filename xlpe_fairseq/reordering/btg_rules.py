"""BTG reorder extraction: the source permutation a BTG tree consistent with the alignment yields.

Ding et al. (2020) feed the Transformer ``pos_XL``, the position each source token takes in a
source sentence reordered by a bracketing transduction grammar (BTG, Wu 1997) tree that agrees
with the word alignment; at training time that tree is the oracle of Neubig et al. (2012),
"Inducing a Discriminative Parser to Optimize Machine Translation Reordering".

This module computes such a permutation in near-linear time, in three steps:

1. **Spans.** Each aligned source token takes its aligned target span ``[min j, max j]``.
   *Unaligned tokens* (rule ``unaligned_attached``) take the span of the nearest aligned token
   before them, or, at the start of the sentence, after them: they travel with their left
   neighbour, which keeps particles and BPE continuations next to the word they belong to.
   A sentence without any link keeps the monotone order.
2. **Blocks.** Tokens whose spans overlap (transitively) form one block that moves as a unit,
   keeping source order inside (rule ``overlapping_spans_merged``, fired when a block holds two or
   more aligned tokens: many-to-one, many-to-many and discontiguous one-to-many links). Blocks
   have disjoint spans, so sorting them by span gives the target order.
3. **BTG repair.** A permutation is BTG-reachable (separable) iff it contains neither 2413 nor
   3142. A shift-reduce parse over the source tokens merges the two top stack items whenever
   their target ranges are adjacent (straight if in order, inverted if not); that greedy parse
   reduces to one item exactly for BTG-reachable permutations. When it gets stuck (rule
   ``non_btg_repaired``) the adjacent pair whose forced merge displaces the fewest tokens
   (tokens in the gap between their target ranges times the smaller block) is merged anyway, the
   smaller block jumping next to the larger one, and the parse goes on. Neubig et al. search all
   BTG trees for the one that best matches the alignment; this greedy repair is a linear-time
   stand-in that leaves BTG-reachable permutations unchanged and moves few tokens otherwise.
"""

UNALIGNED_ATTACHED = "unaligned_attached"
OVERLAPPING_SPANS_MERGED = "overlapping_spans_merged"
NON_BTG_REPAIRED = "non_btg_repaired"
RULE_NAMES = (UNALIGNED_ATTACHED, OVERLAPPING_SPANS_MERGED, NON_BTG_REPAIRED)


def btg_positions(n_src, links):
    """The target-ordered position of each of the ``n_src`` source tokens (a permutation).

    ``links`` are ``(i, j)`` pairs, 0-based source and target token indices (fairseq's ``i-j``).
    """
    return btg_positions_with_stats(n_src, links)[0]


def btg_positions_with_stats(n_src, links):
    """Like :func:`btg_positions`, also returning the set of rule names (see ``RULE_NAMES``)
    that changed something in this sentence."""
    rules = set()
    target_order = _target_order(n_src, links, rules)
    positions = [0] * n_src
    for rank, i in enumerate(target_order):
        positions[i] = rank
    positions, repaired = make_btg_reachable(positions)
    if repaired:
        rules.add(NON_BTG_REPAIRED)
    return positions, rules


def _target_order(n_src, links, rules):
    """Source indices listed in target order (steps 1 and 2 of the module docstring)."""
    starts = [None] * n_src
    ends = [None] * n_src
    for i, j in links:
        if not 0 <= i < n_src:
            raise ValueError(f"link {i}-{j}: source index {i} is out of range 0..{n_src - 1}")
        if j < 0:
            raise ValueError(f"link {i}-{j}: target index {j} is negative")
        start = starts[i]
        if start is None:
            starts[i] = ends[i] = j
        elif j < start:
            starts[i] = j
        elif j > ends[i]:
            ends[i] = j

    if n_src == 0:
        return []
    aligned = [start is not None for start in starts]
    if not all(aligned):
        rules.add(UNALIGNED_ATTACHED)
        first = next((i for i in range(n_src) if aligned[i]), None)
        if first is None:
            return list(range(n_src))
        previous = first  # tokens before the first aligned one attach to it
        for i in range(n_src):
            if aligned[i]:
                previous = i
            else:
                starts[i] = starts[previous]
                ends[i] = ends[previous]

    # Python's sort is stable: equal starts keep source order.
    by_start = sorted(range(n_src), key=starts.__getitem__)
    order = []
    block = [by_start[0]]
    block_end = ends[by_start[0]]
    for i in by_start[1:]:
        if starts[i] <= block_end:
            block.append(i)
            if ends[i] > block_end:
                block_end = ends[i]
        else:
            _emit_block(block, aligned, order, rules)
            block = [i]
            block_end = ends[i]
    _emit_block(block, aligned, order, rules)
    return order


def _emit_block(block, aligned, order, rules):
    if len(block) > 1:
        block.sort()
        if sum(aligned[i] for i in block) > 1:
            rules.add(OVERLAPPING_SPANS_MERGED)
    order.extend(block)


def is_btg_reachable(positions):
    """Whether ``positions`` (a permutation) is yielded by some BTG tree, i.e. avoids 2413/3142."""
    lows = []
    highs = []
    for p in positions:
        low = high = p
        while lows:
            if highs[-1] + 1 == low:
                low = lows.pop()
                highs.pop()
            elif high + 1 == lows[-1]:
                lows.pop()
                high = highs.pop()
            else:
                break
        lows.append(low)
        highs.append(high)
    return len(lows) <= 1


def make_btg_reachable(positions):
    """A BTG-reachable permutation close to ``positions``, and whether it had to change it.

    BTG-reachable input comes back unchanged (the common case, checked first without building
    any tree); otherwise see step 3 of the module docstring.
    """
    if is_btg_reachable(positions):
        return positions, False
    items = _reduce([_Item(p, p, [i]) for i, p in enumerate(positions)])
    while len(items) > 1:
        items = _reduce(_force_cheapest_merge(items))
    repaired = [0] * len(positions)
    for rank, i in enumerate(items[0].order):
        repaired[i] = rank
    return repaired, True


class _Item:
    """A contiguous source span whose tokens fill the target range ``low..high``."""

    __slots__ = ("low", "high", "order")

    def __init__(self, low, high, order):
        self.low = low
        self.high = high
        self.order = order  # the span's source indices in target order


def _reduce(items):
    """Shift-reduce over ``items`` (in source order), merging target-adjacent neighbours."""
    stack = []
    for item in items:
        while stack:
            top = stack[-1]
            if top.high + 1 == item.low:
                top.order.extend(item.order)
                item = _Item(top.low, item.high, top.order)
            elif item.high + 1 == top.low:
                item.order.extend(top.order)
                item = _Item(item.low, top.high, item.order)
            else:
                break
            stack.pop()
        stack.append(item)
    return stack


def _force_cheapest_merge(items):
    """Merge the adjacent pair that displaces fewest tokens; re-rank targets to stay contiguous."""
    best = None
    for k in range(len(items) - 1):
        left, right = items[k], items[k + 1]
        gap = right.low - left.high - 1 if left.high < right.low else left.low - right.high - 1
        cost = gap * min(len(left.order), len(right.order))
        if best is None or cost < best[0]:
            best = (cost, k)
    k = best[1]
    left, right = items[k], items[k + 1]
    order = left.order + right.order if left.high < right.low else right.order + left.order
    # The larger block stays put; the smaller one jumps across the gap to join it.
    anchor = left if len(left.order) >= len(right.order) else right
    merged = _Item(anchor.low, None, order)
    items = items[:k] + [merged] + items[k + 2:]

    next_low = 0
    for item in sorted(items, key=lambda item: item.low):
        item.low = next_low
        next_low += len(item.order)
        item.high = next_low - 1
    return items
