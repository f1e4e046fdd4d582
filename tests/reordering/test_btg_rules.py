"""BTG reorder extraction (xlpe_fairseq.reordering.btg_rules) on hand-made alignments."""
import itertools
import random

import pytest

from xlpe_fairseq.reordering.btg_rules import (
    NON_BTG_REPAIRED,
    OVERLAPPING_SPANS_MERGED,
    UNALIGNED_ATTACHED,
    btg_positions,
    btg_positions_with_stats,
    is_btg_reachable,
    make_btg_reachable,
)


def links(text):
    return [tuple(map(int, link.split("-"))) for link in text.split()]


def contains_2413_or_3142(perm):
    for quad in itertools.combinations(perm, 4):
        ranks = [sorted(quad).index(v) for v in quad]
        if ranks in ([1, 3, 0, 2], [2, 0, 3, 1]):
            return True
    return False


@pytest.mark.parametrize(
    "n_src, alignment, expected, rules",
    [
        pytest.param(3, "0-0 1-1 2-2", [0, 1, 2], set(), id="straight"),
        pytest.param(3, "0-2 1-1 2-0", [2, 1, 0], set(), id="inverted"),
        # a (d c) b: an inverted pair nested in an inversion nested in a straight node
        pytest.param(4, "0-0 1-3 2-2 3-1", [0, 3, 2, 1], set(), id="nested"),
        # token 0 spans target 1..3 around token 1, so they move as one block after token 2
        pytest.param(
            3, "0-1 0-3 1-2 2-0", [1, 2, 0], {OVERLAPPING_SPANS_MERGED}, id="discontiguous"
        ),
        # token 1 is unaligned: it follows token 0
        pytest.param(3, "0-1 2-0", [1, 2, 0], {UNALIGNED_ATTACHED}, id="unaligned-middle"),
        # token 0 is unaligned at the sentence start: it goes with token 1
        pytest.param(3, "1-1 2-0", [1, 2, 0], {UNALIGNED_ATTACHED}, id="unaligned-start"),
        pytest.param(3, "0-1 1-0", [2, 0, 1], {UNALIGNED_ATTACHED}, id="unaligned-end"),
        pytest.param(3, "", [0, 1, 2], {UNALIGNED_ATTACHED}, id="no-links"),
        pytest.param(
            3, "0-1 0-2 1-1 1-2 2-0", [1, 2, 0], {OVERLAPPING_SPANS_MERGED}, id="many-to-many"
        ),
        # many-to-one keeps the source order of the merged tokens, even when inverted around them
        pytest.param(3, "0-1 1-0 2-0", [2, 0, 1], {OVERLAPPING_SPANS_MERGED}, id="many-to-one"),
        # one-to-many: the target words a token covers do not matter beyond its span
        pytest.param(2, "0-2 0-3 1-0 1-1", [1, 0], set(), id="one-to-many"),
        pytest.param(4, "0-1 1-3 2-0 3-2", [1, 2, 0, 3], {NON_BTG_REPAIRED}, id="2413"),
        pytest.param(4, "0-2 1-0 2-3 3-1", [2, 1, 3, 0], {NON_BTG_REPAIRED}, id="3142"),
        pytest.param(1, "0-5", [0], set(), id="single"),
        pytest.param(0, "", [], set(), id="empty"),
    ],
)
def test_clear_cases(n_src, alignment, expected, rules):
    positions, fired = btg_positions_with_stats(n_src, links(alignment))
    assert positions == expected
    assert fired == rules
    assert btg_positions(n_src, links(alignment)) == expected


def test_repair_moves_one_token_of_2413_inside_a_longer_sentence():
    # 2413 on tokens 1..4, straight around them
    positions = btg_positions(6, links("0-0 1-2 2-4 3-1 4-3 5-5"))
    assert is_btg_reachable(positions)
    assert positions[0] == 0 and positions[5] == 5
    target_order = [2, 4, 1, 3]  # ranks of tokens 1..4 in the alignment
    kept_pairs = sum(
        (target_order[a] < target_order[b]) == (positions[a + 1] < positions[b + 1])
        for a, b in itertools.combinations(range(4), 2)
    )
    assert kept_pairs == 5  # of 6 pairs: one adjacent swap


@pytest.mark.parametrize("n", range(1, 8))
def test_btg_reachability_matches_pattern_avoidance(n):
    for perm in itertools.permutations(range(n)):
        perm = list(perm)
        assert is_btg_reachable(perm) == (not contains_2413_or_3142(perm))
        repaired, changed = make_btg_reachable(perm)
        assert sorted(repaired) == list(range(n))
        assert is_btg_reachable(repaired)
        assert changed == contains_2413_or_3142(perm)
        if not changed:
            assert repaired == perm


def test_random_alignments_always_give_btg_permutations():
    rng = random.Random(1)
    for _ in range(300):
        n_src = rng.randint(1, 60)
        n_tgt = rng.randint(1, 60)
        alignment = [
            (rng.randrange(n_src), rng.randrange(n_tgt)) for _ in range(rng.randint(0, 2 * n_src))
        ]
        positions = btg_positions(n_src, alignment)
        assert sorted(positions) == list(range(n_src))
        assert is_btg_reachable(positions)


def test_long_random_permutation_is_repaired():
    rng = random.Random(2)
    perm = rng.sample(range(400), 400)
    positions, fired = btg_positions_with_stats(400, list(enumerate(perm)))
    assert fired == {NON_BTG_REPAIRED}
    assert sorted(positions) == list(range(400))
    assert is_btg_reachable(positions)


@pytest.mark.parametrize("bad", [[(3, 0)], [(-1, 0)], [(0, -2)]])
def test_links_outside_the_sentence_are_rejected(bad):
    with pytest.raises(ValueError, match="out of range|negative"):
        btg_positions(3, bad)


def test_registered_with_the_extraction_command():
    from xlpe_fairseq.reordering.extract import METHODS

    assert METHODS["btg"] is btg_positions
