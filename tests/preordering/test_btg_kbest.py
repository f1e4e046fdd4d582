"""The k-best BTG search lists distinct BTG permutations, best first, with exact scores."""
import random

import torch

from xlpe_fairseq.preordering.btg_kbest import btg_kbest
from xlpe_fairseq.preordering.btg_search import btg_search, quantize_scores, word_units
from xlpe_fairseq.reordering.btg_rules import is_btg_reachable

# how many BTG permutations n tokens have (the large Schröder numbers)
BTG_PERMUTATIONS = {1: 1, 2: 2, 3: 6, 4: 22, 5: 90, 6: 394}


def best_tree_scores(scores, penalty):
    """{target order: best score of a BTG tree yielding it}, by enumerating every tree: the
    inversion gains of the pairs each inverted node crosses, minus ``penalty`` a node."""
    gain = (-quantize_scores(scores)).tolist()

    def trees(first, last):
        if last - first == 1:
            return {(first,): 0.0}
        found = {}
        for middle in range(first + 1, last):
            cross = sum(gain[i][j] for i in range(first, middle) for j in range(middle, last))
            for left, left_score in trees(first, middle).items():
                for right, right_score in trees(middle, last).items():
                    for order, value in ((left + right, left_score + right_score),
                                         (right + left, left_score + right_score + cross - penalty)):
                        found[order] = max(found.get(order, value), value)
        return found

    return trees(0, len(gain))


def target_order(positions):
    return tuple(sorted(range(len(positions)), key=positions.__getitem__))


def test_enough_candidates_list_every_btg_permutation_once():
    for n, count in BTG_PERMUTATIONS.items():
        found = btg_kbest(torch.randn(1, n, n), [n], k=1000)[0]
        permutations = [tuple(positions) for _, positions in found]
        assert len(permutations) == count, f"{n} tokens: {len(permutations)} candidates, " \
                                           f"{count} BTG permutations exist"
        assert len(set(permutations)) == count, f"{n} tokens: a permutation came twice"
        assert all(is_btg_reachable(list(p)) for p in permutations)


def test_the_k_best_are_the_best_scores_of_an_exhaustive_search_in_order():
    rng = random.Random(0)
    for _ in range(60):
        n, k, penalty = rng.randint(2, 6), rng.choice([1, 3, 8]), rng.choice([0.0, 0.5, 2.0])
        scores = torch.tensor([[rng.gauss(0, 2) for _ in range(n)] for _ in range(n)])
        exhaustive = best_tree_scores(scores, penalty)
        found = btg_kbest(scores.unsqueeze(0), [n], k, penalty)[0]
        expected = sorted(exhaustive.values(), reverse=True)[:k]
        assert [round(score, 9) for score, _ in found] == [round(v, 9) for v in expected], \
            f"{n} tokens, k {k}, penalty {penalty}: scores differ from the exhaustive search"
        for score, positions in found:
            assert abs(exhaustive[target_order(positions)] - score) < 1e-9, \
                f"a candidate's score is not its permutation's best tree score: {positions}"


def test_the_first_candidate_is_the_single_best_search_even_among_ties():
    torch.manual_seed(0)
    # integer scores: many trees tie, and btg_search breaks ties its own way
    scores = torch.randint(-2, 3, (40, 7, 7)).float()
    lengths = torch.randint(1, 8, (40,))
    singles = btg_search(scores, lengths, 0.5)
    for b, (found, single) in enumerate(zip(btg_kbest(scores, lengths, 4, 0.5), singles)):
        assert found[0][1] == single, f"sentence {b}: first candidate {found[0][1]}, " \
                                      f"btg_search {single}"
        assert len({tuple(p) for _, p in found}) == len(found), f"sentence {b}: a repeat"
        assert all(a[0] >= b[0] for a, b in zip(found, found[1:])), f"sentence {b}: unsorted"


def test_word_pieces_move_as_a_block_in_every_candidate():
    tokens = ["a@@", "b", "c", "d@@", "e@@", "f", "g"]
    units = word_units(tokens)
    torch.manual_seed(1)
    found = btg_kbest(torch.randn(1, 7, 7) * 3, [7], 20, units=[units])[0]
    assert len(found) == 20
    for _, positions in found:
        for word in set(units):
            members = sorted(positions[t] for t in range(7) if units[t] == word)
            assert members == list(range(members[0], members[0] + len(members))), \
                f"word {word} split apart in {positions}"
