"""How well a reorder permutation follows the alignment: split BPE words and realized inversions.

Used to check the BTG oracle (``btg_rules``) against the alignment it comes from:

- a **split word** is a multi-piece BPE word whose pieces do not take consecutive positions in
  their own order (the oracle must split none);
- an **alignment-implied inversion** is a pair of aligned source words ``u`` before ``v`` whose
  target spans are strictly ordered the other way round (every target position of ``v``, the
  union of its pieces' links, precedes every target position of ``u``); it is **realized** when
  every piece of ``v`` comes before every piece of ``u`` in the permutation.

``mean_sort_positions`` is the reference point: pieces sorted by the mean of their own target
positions (unaligned pieces next to the previous aligned one) and made BTG-reachable by the same
greedy repair as the oracle.
"""
from .btg_rules import make_btg_reachable, words


def split_words(source_tokens, positions):
    """(multi-piece words, how many of them ``positions`` splits or reorders inside)."""
    word_of, starts = words(source_tokens)
    multi = split = 0
    for first, end in zip(starts, starts[1:]):
        if end - first > 1:
            multi += 1
            if positions[first:end] != list(range(positions[first], positions[first] + end - first)):
                split += 1
    return multi, split


def implied_inversions(source_tokens, links, positions):
    """(alignment-implied inversions between source words, how many ``positions`` realizes)."""
    word_of, starts = words(source_tokens)
    n_words = len(starts) - 1
    low = [None] * n_words
    high = [None] * n_words
    for i, j in links:
        w = word_of[i]
        if low[w] is None or j < low[w]:
            low[w] = j
        if high[w] is None or j > high[w]:
            high[w] = j
    first_position = [min(positions[starts[w]:starts[w + 1]]) for w in range(n_words)]
    last_position = [max(positions[starts[w]:starts[w + 1]]) for w in range(n_words)]
    aligned = [w for w in range(n_words) if low[w] is not None]
    implied = realized = 0
    for a, u in enumerate(aligned):
        for v in aligned[a + 1:]:
            if high[v] < low[u]:
                implied += 1
                realized += last_position[v] < first_position[u]
    return implied, realized


def mean_sort_positions(n_src, links):
    """Pieces sorted by the mean of their target positions, unaligned pieces keyed like the
    aligned piece before them (or, at the start, after them), then made BTG-reachable."""
    sums = [0] * n_src
    counts = [0] * n_src
    for i, j in set(links):
        sums[i] += j
        counts[i] += 1
    keys = [sums[i] / counts[i] if counts[i] else None for i in range(n_src)]
    previous = next((key for key in keys if key is not None), 0)
    for i, key in enumerate(keys):
        if key is None:
            keys[i] = previous
        else:
            previous = key
    positions = [0] * n_src
    for rank, i in enumerate(sorted(range(n_src), key=keys.__getitem__)):
        positions[i] = rank
    return make_btg_reachable(positions)[0]
