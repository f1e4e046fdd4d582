"""The k best distinct BTG permutations under pairwise order scores.

``btg_search`` returns the single best BTG tree (Wu 1997) under the preorderer's pair scores.
Its runners-up are the other reorderings the preorderer finds plausible, for a later step to
choose among (e.g. by the translation model's score). Many BTG trees yield the same
permutation (straight(straight(a, b), c) and straight(a, straight(b, c)) both keep a b c), so
the search runs over the normal form in which no node has a right child of its own orientation:
each BTG permutation has exactly one such tree (Wu 1997), so the k best trees are k
distinct permutations. A tree scores what ``btg_search`` maximizes, the inversion gains of the
pairs its inverted nodes cross minus ``penalty`` per inverted node, so the first of the k is
worth exactly the single best tree; where trees tie, the first is ``btg_search``'s own, so that
one candidate is the preorderer's usual prediction.

Each (span, orientation) keeps its k best derivations; they are enumerated lazily from a heap
over the splits (Huang and Chiang 2005, algorithm 2), O(n^3 + n^2 k log n) a sentence.
"""
import heapq

from .btg_search import best_unit_positions, expand_units, inversion_gains, tree_positions

STRAIGHT, INVERTED = 0, 1


def btg_kbest(scores, lengths, k, penalty=0.0, units=None):
    """Up to ``k`` distinct BTG-consistent position lists for each sentence of a batch, best
    first, each as ``(score, positions)``; arguments as for ``btg_search``. A sentence has
    fewer than ``k`` when fewer BTG permutations of its units exist."""
    gain, counts, unit_of = inversion_gains(scores, lengths, units)
    firsts = best_unit_positions(gain, counts, penalty).cpu().tolist()
    gain = gain.cpu()
    unit_of = unit_of.cpu().tolist()
    results = []
    for b, (n, length, first) in enumerate(zip(counts, lengths, firsts)):
        u, first = unit_of[b][:int(length)], first[:n]
        found = _kbest_units(gain[b, :n, :n].tolist(), n, k, penalty)
        # the same score as found[0]'s (both searches are exact on the score grid)
        found = [(found[0][0], first)] + [c for c in found if c[1] != first][:k - 1]
        results.append([(score, expand_units(positions, u)) for score, positions in found])
    return results


def _kbest_units(gain, n, k, penalty):
    """``(score, positions)`` of the k best normal-form BTG trees over n units."""
    if n < 2:
        return [(0.0, list(range(n)))]
    # prefix[i][j]: sum of gain[a][b] over a < i, b < j (only a < b is ever non-zero)
    prefix = [[0.0] * (n + 1) for _ in range(n + 1)]
    for i in range(n):
        row_sum = 0.0
        for j in range(n):
            row_sum += gain[i][j]
            prefix[i + 1][j + 1] = prefix[i][j + 1] + row_sum
    # best[(l, r, o)]: k best derivations of span [l, r) rooted in orientation o (a one-unit
    # span is a leaf, kept under both keys); derivation = (score, split, left_rank,
    # right_rank); either[(l, r)] merges both orientations: (score, orientation, rank)
    best, either = {}, {}
    for l in range(n):
        best[(l, l + 1, STRAIGHT)] = best[(l, l + 1, INVERTED)] = [(0.0, None, 0, 0)]
        either[(l, l + 1)] = [(0.0, None, 0)]
    for width in range(2, n + 1):
        for l in range(n - width + 1):
            r = l + width
            for orientation in (STRAIGHT, INVERTED):
                best[(l, r, orientation)] = _kbest_node(l, r, orientation, best, either,
                                                        prefix, penalty, k)
            merged = [(d[0], STRAIGHT, rank) for rank, d in enumerate(best[(l, r, STRAIGHT)])]
            merged += [(d[0], INVERTED, rank) for rank, d in enumerate(best[(l, r, INVERTED)])]
            # straight before inverted on equal scores, as btg_search decides ties
            merged.sort(key=lambda entry: (-entry[0], entry[1], entry[2]))
            either[(l, r)] = merged[:k]
    return [(score, _positions(n, orientation, rank, best, either))
            for score, orientation, rank in either[(0, n)]]


def _kbest_node(l, r, orientation, best, either, prefix, penalty, k):
    """The k best derivations of span [l, r) whose root has ``orientation``: left child of
    any orientation, right child a leaf or of the other orientation (the normal form)."""
    other = INVERTED - orientation
    heap = []
    for m in range(l + 1, r):
        if orientation == INVERTED:
            node = prefix[m][r] - prefix[l][r] - prefix[m][m] + prefix[l][m] - penalty
        else:
            node = 0.0
        left, right = either[(l, m)], best[(m, r, other)]
        heap.append((-(left[0][0] + right[0][0] + node), m, 0, 0, node))
    heapq.heapify(heap)
    seen = {(m, 0, 0) for m in range(l + 1, r)}
    found = []
    while heap and len(found) < k:
        negative, m, i, j, node = heapq.heappop(heap)
        found.append((-negative, m, i, j))
        left, right = either[(l, m)], best[(m, r, other)]
        for i2, j2 in ((i + 1, j), (i, j + 1)):
            if i2 < len(left) and j2 < len(right) and (m, i2, j2) not in seen:
                seen.add((m, i2, j2))
                heapq.heappush(heap, (-(left[i2][0] + right[j2][0] + node), m, i2, j2, node))
    return found


def _positions(n, orientation, rank, best, either):
    """Unit positions of the derivation ``rank`` of ``best[(0, n, orientation)]``."""

    def children(node):
        l, r, orientation, rank = node
        _, m, i, j = best[(l, r, orientation)][rank]
        _, left_orientation, left_rank = either[(l, m)][i]
        first, second = (l, m, left_orientation, left_rank), (m, r, INVERTED - orientation, j)
        return (second, first) if orientation == INVERTED else (first, second)

    return tree_positions((0, n, orientation, rank), children)
