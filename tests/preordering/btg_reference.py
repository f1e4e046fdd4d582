"""The BTG search for one sentence in plain Python, as a reference for the batched search.

The CKY recursion of ``btg_search`` written out span by span, split by split, each cross block
summed pair by pair (exact on the score grid, so in any order), with the same tie-breaking: the
leftmost of equally good splits, the straight merge unless inverting gains more than the
penalty.
"""
from xlpe_fairseq.preordering.btg_search import quantize_scores


def reference_search(scores, length, penalty=0.0, units=None):
    """Positions of the best BTG tree of one sentence; ``scores`` (time, time), ``units`` its
    tokens' unit indices (each token its own unit when None)."""
    units = list(range(length)) if units is None else list(units[:length])
    count = units[-1] + 1 if units else 0
    grid = quantize_scores(scores).tolist()
    gain = [[0.0] * count for _ in range(count)]
    for i in range(length):
        for j in range(i + 1, length):
            if units[i] != units[j]:
                gain[units[i]][units[j]] -= grid[i][j]
    best = {(left, left + 1): 0.0 for left in range(count)}
    chosen = {}
    for width in range(2, count + 1):
        for left in range(count - width + 1):
            right = left + width
            for middle in range(left + 1, right):
                cross = sum(gain[i][j] for i in range(left, middle)
                            for j in range(middle, right)) - penalty
                total = best[(left, middle)] + best[(middle, right)] + max(cross, 0.0)
                if (left, right) not in best or total > best[(left, right)]:
                    best[(left, right)] = total
                    chosen[(left, right)] = (middle, cross > 0)

    def unit_order(left, right):
        if right - left == 1:
            return [left]
        middle, inverted = chosen[(left, right)]
        first, second = unit_order(left, middle), unit_order(middle, right)
        return second + first if inverted else first + second

    order = [token for unit in (unit_order(0, count) if count else [])
             for token in range(length) if units[token] == unit]
    positions = [0] * length
    for rank, token in enumerate(order):
        positions[token] = rank
    return positions


def random_units(rng, length, word_end=0.7):
    """Word units of ``length`` tokens, each token ending its word with probability
    ``word_end``."""
    units, word = [], 0
    for _ in range(length):
        units.append(word)
        if rng.random() < word_end:
            word += 1
    return units


def random_batch_lengths(rng, size, longest):
    """Mixed sentence lengths, one and two tokens among them."""
    return [rng.choice([1, 2, rng.randint(1, longest)]) for _ in range(size)]

