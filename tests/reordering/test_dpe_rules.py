"""DPE alignment rules (Zheng et al. 2021, Sec. 3.1) on hand-made alignments."""
import itertools
import random

import pytest

from xlpe_fairseq.reordering.dpe_rules import alignment_cases, dpe_positions
from xlpe_fairseq.data.reorder_file import validate_permutation


def assert_permutation(pos, n):
    assert sorted(pos) == list(range(n)), f"{pos} is not a permutation of 0..{n - 1}"


def test_straight_alignment_keeps_order():
    assert dpe_positions(3, [(0, 0), (1, 1), (2, 2)]) == [0, 1, 2]


def test_crossing_alignment_reverses():
    # source a b c translates to target c b a
    assert dpe_positions(3, [(0, 2), (1, 1), (2, 0)]) == [2, 1, 0]


def test_one_to_many_keeps_first_target_position():
    # token 0 links to targets 1 and 3; token 1 to target 2: token 0 (first j=1) comes first
    pos = dpe_positions(2, [(0, 3), (1, 2), (0, 1)])
    assert pos == [0, 1], f"one-to-many must use the first target position, got {pos}"


def test_many_to_one_moves_together_in_relative_order():
    # tokens 1 and 2 both translate target 0, token 0 translates target 1
    pos = dpe_positions(3, [(0, 1), (1, 0), (2, 0)])
    assert pos == [2, 0, 1], f"tokens 1,2 should move to the front as a unit, got {pos}"


def test_unaligned_word_keeps_its_slot():
    # token 1 is unaligned; tokens 0 and 2 swap around it
    pos = dpe_positions(3, [(0, 5), (2, 0)])
    assert pos[1] == 1, f"unaligned token must keep position 1, got {pos}"
    assert pos == [2, 1, 0]


def test_no_position_beyond_source_length():
    # target positions far beyond the source length still yield ranks < n
    pos = dpe_positions(2, [(0, 40), (1, 17)])
    assert pos == [1, 0]


def test_empty_source_and_no_links():
    assert dpe_positions(0, []) == []
    assert dpe_positions(4, []) == [0, 1, 2, 3]


def test_always_a_permutation_on_random_alignments():
    rng = random.Random(0)
    for _ in range(500):
        n, m = rng.randint(1, 12), rng.randint(1, 12)
        links = [(i, j) for i, j in itertools.product(range(n), range(m)) if rng.random() < 0.2]
        assert_permutation(dpe_positions(n, links), n)


def test_alignment_cases_counts_each_rule():
    # 0 -> {0, 1} (one-to-many), 1 and 2 -> 2 (many-to-one), 3 unaligned
    cases = alignment_cases(4, [(0, 0), (0, 1), (1, 2), (2, 2)])
    assert (cases["tokens"], cases["unaligned"], cases["one_to_many"],
            cases["many_to_one"]) == (4, 1, 1, 2), dict(cases)


@pytest.mark.parametrize("n", [1, 5])
def test_identity_when_every_word_aligned_to_itself(n):
    assert dpe_positions(n, [(i, i) for i in range(n)]) == list(range(n))


def test_skip_gives_unaligned_words_no_target_and_ranks_the_others():
    # token 1 is unaligned; 0 -> target 5, 2 -> target 0, 3 -> target 2: ranked 2, 0, 1
    assert dpe_positions(4, [(0, 5), (2, 0), (3, 2)], unaligned="skip") == [2, -1, 0, 1]


def test_skip_keeps_the_other_rules():
    # one-to-many (0 -> {1, 3}: first target 1), many-to-one (2 and 3 -> target 0, moving
    # together in source order), unaligned 1 and 4
    links = [(0, 3), (0, 1), (2, 0), (3, 0)]
    assert dpe_positions(5, links, unaligned="skip") == [2, -1, 0, 1, -1]
    assert dpe_positions(5, links, unaligned="keep") == [3, 1, 0, 2, 4]


def test_skip_equals_keep_when_every_word_is_aligned():
    links = [(0, 2), (1, 0), (2, 1)]
    assert dpe_positions(3, links, unaligned="skip") == dpe_positions(3, links) == [2, 0, 1]


def test_skip_without_links_supervises_nothing():
    assert dpe_positions(3, [], unaligned="skip") == [-1, -1, -1]


def test_skip_is_a_partial_permutation_on_random_alignments():
    rng = random.Random(1)
    for _ in range(500):
        n, m = rng.randint(1, 12), rng.randint(1, 12)
        links = [(i, j) for i, j in itertools.product(range(n), range(m)) if rng.random() < 0.2]
        pos = dpe_positions(n, links, unaligned="skip")
        aligned = {i for i, _ in links}
        assert [i for i, p in enumerate(pos) if p == -1] == sorted(set(range(n)) - aligned)
        validate_permutation(pos, n, f"links {links}", allow_no_target=True)


def test_unknown_unaligned_choice_is_refused():
    with pytest.raises(ValueError, match="unaligned must be one of"):
        dpe_positions(2, [(0, 0)], unaligned="drop")
