"""Target-ordered source positions from a word alignment, by the rules of DPE.

Zheng, Rezagholizadeh and Passban (2021), "Dynamic Position Encoding for Transformers",
Section 3.1, turn an alignment into a reordering of the source with four rules:

- one-to-many: a source word aligned to several target words takes the FIRST target position;
- many-to-one: source words that share that target position move together as one unit,
  keeping their relative order;
- unaligned: a source word without links keeps its position;
- no source word gets a position beyond the source length.

The last rule is why positions are ranks, not raw target indices. What "keeps its position"
means for the order loss is a choice (``unaligned``):

- ``keep`` (default, the paper's text): unaligned words stay in their slots and are supervised
  there; the aligned words fill the remaining slots sorted by ``(first target position, source
  index)``. The result is a permutation of 0..n-1.
- ``skip`` (the authors' public code, which supervises aligned words only): unaligned words get
  NO_ORDER_TARGET (-1), and the m aligned words are ranked 0..m-1 among themselves by the same
  key.
"""
import collections

from ..data.reorder_file import NO_ORDER_TARGET

UNALIGNED_KEEP = "keep"
UNALIGNED_SKIP = "skip"
UNALIGNED_CHOICES = (UNALIGNED_KEEP, UNALIGNED_SKIP)


def dpe_positions(n_src, links, unaligned=UNALIGNED_KEEP):
    """Return ``pos`` with ``pos[i]`` = position of source token i in the target-ordered source.

    ``links`` are ``(i, j)`` pairs (0-based source, target indices); duplicates are allowed.
    ``unaligned`` is ``keep`` or ``skip`` (see the module docstring).
    """
    if unaligned not in UNALIGNED_CHOICES:
        raise ValueError(f"unaligned must be one of {UNALIGNED_CHOICES}, got {unaligned!r}")
    first_target = {}
    for i, j in links:
        if i not in first_target or j < first_target[i]:
            first_target[i] = j
    aligned_in_target_order = sorted(first_target, key=lambda i: (first_target[i], i))
    if unaligned == UNALIGNED_SKIP:
        pos = [NO_ORDER_TARGET] * n_src
        for rank, i in enumerate(aligned_in_target_order):
            pos[i] = rank
        return pos
    free_slots = sorted(first_target)  # the slots not held by unaligned words
    pos = list(range(n_src))
    for slot, i in zip(free_slots, aligned_in_target_order):
        pos[i] = slot
    return pos


def alignment_cases(n_src, links):
    """Count source tokens by the DPE rule that applies to them.

    Returns a Counter with ``tokens``, ``unaligned`` (no link), ``one_to_many`` (linked to
    more than one target word) and ``many_to_one`` (its first target word is shared with
    another source word, so it moves as part of a unit).
    """
    targets = collections.defaultdict(set)
    for i, j in links:
        targets[i].add(j)
    sharing = collections.Counter(min(js) for js in targets.values())
    return collections.Counter(
        tokens=n_src,
        unaligned=n_src - len(targets),
        one_to_many=sum(len(js) > 1 for js in targets.values()),
        many_to_one=sum(sharing[min(js)] > 1 for js in targets.values()),
    )
