"""DPE alignment rules (Zheng et al. 2021, Sec. 3.1) on hand-made alignments."""
import itertools
import random

import pytest

from xlpe_fairseq.reordering.dpe_rules import alignment_cases, dpe_positions


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
