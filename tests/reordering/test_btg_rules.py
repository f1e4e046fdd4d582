"""BTG reorder extraction (xlpe_fairseq.reordering.btg_rules) on hand-made alignments."""
import itertools
import random

import pytest

from xlpe_fairseq.reordering.btg_rules import (
    MANY_TO_ONE_KEPT_IN_ORDER,
    NON_BTG_REPAIRED,
    ONE_TO_MANY_AVERAGED,
    PIECES_JOINED,
    UNALIGNED_ATTACHED,
    btg_positions,
    btg_positions_with_stats,
    is_btg_reachable,
    make_btg_reachable,
)
from xlpe_fairseq.reordering.oracle_quality import split_words


def links(text):
    return [tuple(map(int, link.split("-"))) for link in text.split()]


def contains_2413_or_3142(perm):
    for quad in itertools.combinations(perm, 4):
        ranks = [sorted(quad).index(v) for v in quad]
        if ranks in ([1, 3, 0, 2], [2, 0, 3, 1]):
            return True
    return False


def plain(n):
    """``n`` one-piece words."""
    return [f"w{k}" for k in range(n)]


@pytest.mark.parametrize(
    "tokens, alignment, expected, rules",
    [
        pytest.param(plain(3), "0-0 1-1 2-2", [0, 1, 2], set(), id="straight"),
        pytest.param(plain(3), "0-2 1-1 2-0", [2, 1, 0], set(), id="inverted"),
        # a (d c) b: an inverted pair nested in an inversion nested in a straight node
        pytest.param(plain(4), "0-0 1-3 2-2 3-1", [0, 3, 2, 1], set(), id="nested"),
        # A B C D E, A on target 0 and 4 around D C B: A sits at its mean target position 2,
        # the inversions inside its span survive (D A C B E), instead of the identity
        pytest.param(plain(5), "0-0 0-4 1-3 2-2 3-1 4-5", [1, 3, 2, 0, 4],
                     {ONE_TO_MANY_AVERAGED}, id="wide-one-to-many"),
        # token 0 spans target 1..3 around token 1: mean 2 ties with token 1, source order kept
        pytest.param(plain(3), "0-1 0-3 1-2 2-0", [1, 2, 0], {ONE_TO_MANY_AVERAGED},
                     id="discontiguous"),
        # token 1 is unaligned: it goes with its right neighbour, token 2
        pytest.param(plain(3), "0-1 2-0", [2, 0, 1], {UNALIGNED_ATTACHED}, id="unaligned-middle"),
        pytest.param(plain(3), "1-1 2-0", [1, 2, 0], {UNALIGNED_ATTACHED}, id="unaligned-start"),
        # at the end of the sentence there is no right neighbour: it goes with the left one
        pytest.param(plain(3), "0-1 1-0", [2, 0, 1], {UNALIGNED_ATTACHED}, id="unaligned-end"),
        pytest.param(plain(3), "", [0, 1, 2], {UNALIGNED_ATTACHED}, id="no-links"),
        pytest.param(plain(3), "0-1 0-2 1-1 1-2 2-0", [1, 2, 0],
                     {ONE_TO_MANY_AVERAGED, MANY_TO_ONE_KEPT_IN_ORDER}, id="many-to-many"),
        # many-to-one keeps the source order of the tokens on one target, even when inverted
        # around them
        pytest.param(plain(3), "0-1 1-0 2-0", [2, 0, 1], {MANY_TO_ONE_KEPT_IN_ORDER},
                     id="many-to-one"),
        pytest.param(plain(4), "0-2 1-1 2-1 3-0", [3, 1, 2, 0], {MANY_TO_ONE_KEPT_IN_ORDER},
                     id="many-to-one-inside-an-inversion"),
        # one-to-many: the target words a token covers do not matter beyond their mean
        pytest.param(plain(2), "0-2 0-3 1-0 1-1", [1, 0], {ONE_TO_MANY_AVERAGED},
                     id="one-to-many"),
        pytest.param(plain(4), "0-1 1-3 2-0 3-2", [1, 2, 0, 3], {NON_BTG_REPAIRED}, id="2413"),
        pytest.param(plain(4), "0-2 1-0 2-3 3-1", [2, 1, 3, 0], {NON_BTG_REPAIRED}, id="3142"),
        pytest.param(plain(1), "0-5", [0], set(), id="single"),
        pytest.param([], "", [], set(), id="empty"),
        # BPE: the unaligned word-initial piece wor@@ moves with its word, not with "a"
        pytest.param(["a", "wor@@", "d"], "0-1 2-0", [2, 0, 1], set(), id="unaligned-first-piece"),
        pytest.param(["a", "wor@@", "d"], "0-1 1-0", [2, 0, 1], set(), id="unaligned-last-piece"),
        # the pieces' links are pooled: wor@@ on 3 and d on 0 place the word at 1.5, after x
        pytest.param(["wor@@", "d", "x"], "0-3 1-0 2-1", [1, 2, 0],
                     {PIECES_JOINED, ONE_TO_MANY_AVERAGED}, id="pieces-pooled"),
        # two pieces of one word on one target: one link of the word, not many-to-one
        pytest.param(["x", "wor@@", "d"], "0-1 1-0 2-0", [2, 0, 1], {PIECES_JOINED},
                     id="pieces-on-one-target"),
        # an unaligned three-piece word between two inverted words goes with the right one
        pytest.param(["a", "b@@", "c@@", "d", "e"], "0-1 4-0", [4, 0, 1, 2, 3],
                     {UNALIGNED_ATTACHED}, id="unaligned-bpe-word"),
        # a trailing continuation marker still ends the last word
        pytest.param(["a", "b@@"], "0-1 1-0", [1, 0], set(), id="trailing-marker"),
    ],
)
def test_clear_cases(tokens, alignment, expected, rules):
    positions, fired = btg_positions_with_stats(tokens, links(alignment))
    assert positions == expected, f"tokens {tokens}, links {alignment}"
    assert fired == rules
    assert btg_positions(tokens, links(alignment)) == expected


def test_repair_moves_one_token_of_2413_inside_a_longer_sentence():
    # 2413 on tokens 1..4, straight around them
    positions = btg_positions(plain(6), links("0-0 1-2 2-4 3-1 4-3 5-5"))
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


def test_random_alignments_give_btg_permutations_that_keep_words_whole():
    rng = random.Random(1)
    for _ in range(300):
        n_src = rng.randint(1, 60)
        n_tgt = rng.randint(1, 60)
        tokens = [f"p{k}" + ("@@" if rng.random() < 0.3 else "") for k in range(n_src)]
        alignment = [
            (rng.randrange(n_src), rng.randrange(n_tgt)) for _ in range(rng.randint(0, 2 * n_src))
        ]
        positions = btg_positions(tokens, alignment)
        assert sorted(positions) == list(range(n_src)), (tokens, alignment)
        assert is_btg_reachable(positions), (tokens, alignment)
        assert split_words(tokens, positions)[1] == 0, (tokens, alignment, positions)


def test_long_random_permutation_is_repaired():
    rng = random.Random(2)
    perm = rng.sample(range(400), 400)
    positions, fired = btg_positions_with_stats(plain(400), list(enumerate(perm)))
    assert fired == {NON_BTG_REPAIRED}
    assert sorted(positions) == list(range(400))
    assert is_btg_reachable(positions)


def test_repair_moves_words_not_pieces():
    # 2413 over four two-piece words
    tokens = ["a@@", "a", "b@@", "b", "c@@", "c", "d@@", "d"]
    positions, fired = btg_positions_with_stats(tokens, links("0-1 2-3 4-0 6-2"))
    assert fired == {NON_BTG_REPAIRED}
    assert is_btg_reachable(positions)
    assert split_words(tokens, positions) == (4, 0), positions


@pytest.mark.parametrize("bad", [[(3, 0)], [(-1, 0)], [(0, -2)]])
def test_links_outside_the_sentence_are_rejected(bad):
    with pytest.raises(ValueError, match="out of range|negative"):
        btg_positions(plain(3), bad)


def test_registered_with_the_extraction_command():
    from xlpe_fairseq.reordering.extract import METHODS

    assert METHODS["btg"] is btg_positions
