"""The BTG search finds the best BTG-consistent permutation under pairwise order scores."""
import itertools
import random

import torch

from preordering.btg_reference import random_batch_lengths, random_units, reference_search
from xlpe_fairseq.preordering.btg_search import best_positions, btg_search, quantize_scores, \
    word_units
from xlpe_fairseq.reordering.btg_rules import is_btg_reachable


def inversion_gain(positions, scores):
    """Sum of -s_ij over the pairs i < j that ``positions`` inverts (the search's objective)."""
    gain = (-quantize_scores(scores)).tolist()
    n = len(positions)
    return sum(gain[i][j] for i in range(n) for j in range(i + 1, n)
               if positions[i] > positions[j])


def expand(word_positions, words):
    """Token positions when each word's tokens follow each other in the word order."""
    order = [t for w in sorted(range(len(words)), key=word_positions.__getitem__)
             for t in words[w]]
    positions = [0] * len(order)
    for rank, token in enumerate(order):
        positions[token] = rank
    return positions


def test_finds_the_best_btg_permutation_by_exhaustive_search():
    rng = random.Random(0)
    for n in range(1, 7):
        candidates = [list(p) for p in itertools.permutations(range(n)) if is_btg_reachable(list(p))]
        for _ in range(20):
            scores = torch.tensor([[rng.gauss(0, 2) for _ in range(n)] for _ in range(n)])
            found = btg_search(scores.unsqueeze(0), [n])[0]
            assert is_btg_reachable(found), found
            best = max(inversion_gain(p, scores) for p in candidates)
            assert abs(inversion_gain(found, scores) - best) < 1e-9, (n, found)


def test_recovers_a_permutation_its_scores_encode():
    positions = [3, 4, 1, 2, 0, 6, 5]
    order = torch.tensor(positions, dtype=torch.float)
    scores = torch.where(order.unsqueeze(1) < order.unsqueeze(0), 3.0, -3.0)
    assert btg_search(scores.unsqueeze(0), [7]) == [positions]


def test_no_evidence_keeps_the_source_order_and_a_high_penalty_too():
    scores = torch.zeros(1, 5, 5)
    assert btg_search(scores, [5]) == [[0, 1, 2, 3, 4]], "ties go to the straight merge"
    scores = torch.full((1, 3, 3), -0.5)
    assert btg_search(scores, [3]) == [[2, 1, 0]]
    assert btg_search(scores, [3], penalty=2.0) == [[0, 1, 2]]


def test_padding_and_batch_neighbours_do_not_change_a_sentence():
    rng = torch.Generator().manual_seed(1)
    scores = torch.randn(4, 9, 9, generator=rng)
    lengths = [9, 4, 1, 6]
    together = btg_search(scores, lengths)
    for b, n in enumerate(lengths):
        alone = btg_search(scores[b:b + 1, :n, :n], [n])[0]
        assert together[b] == alone, f"sentence {b} differs when batched"
        assert sorted(alone) == list(range(n))


def test_word_pieces_move_as_a_block_and_the_best_word_order_is_found():
    tokens = ["a@@", "b", "c", "d@@", "e@@", "f", "g"]
    units = word_units(tokens)
    assert units == [0, 0, 1, 2, 2, 2, 3]
    rng = random.Random(2)
    words = [[0, 1], [2], [3, 4, 5], [6]]
    for _ in range(20):
        scores = torch.tensor([[rng.gauss(0, 2) for _ in range(7)] for _ in range(7)])
        found = btg_search(scores.unsqueeze(0), [7], units=[units])[0]
        order = sorted(range(7), key=found.__getitem__)
        word_order = []
        for token in order:
            if units[token] not in word_order:
                word_order.append(units[token])
        assert order == [t for u in word_order for t in words[u]], f"a word split: {order}"
        best = max(inversion_gain(expand(p, words), scores)
                   for p in itertools.permutations(range(4)) if is_btg_reachable(list(p)))
        assert abs(inversion_gain(found, scores) - best) < 1e-9


def random_search_batch(rng, generator, size, longest, ties):
    """Scores of a padded batch of mixed lengths (on a coarse grid when ``ties``, so that many
    splits and merges tie), their lengths and word units; padding scores are huge, to show
    that they are ignored."""
    lengths = random_batch_lengths(rng, size, longest)
    time = max(lengths) + rng.randint(0, 2)
    if ties:
        scores = torch.randint(-2, 3, (size, time, time), generator=generator) * 0.5
    else:
        scores = torch.randn(size, time, time, generator=generator) * 2
    for b, n in enumerate(lengths):
        scores[b, n:] = scores[b, :, n:] = 1e6
    return scores, lengths, [random_units(rng, n) for n in lengths]


def test_the_batched_search_is_the_per_sentence_search_on_random_batches():
    rng = random.Random(3)
    generator = torch.Generator().manual_seed(3)
    for trial in range(60):
        scores, lengths, units = random_search_batch(rng, generator, rng.randint(1, 6), 9,
                                                     ties=trial % 2 == 1)
        penalty = rng.choice([0.0, 0.25, 1.0])
        words = units if trial % 3 else None
        found = btg_search(scores, lengths, penalty, words)
        expected = [reference_search(scores[b], n, penalty, words and words[b])
                    for b, n in enumerate(lengths)]
        assert found == expected, (trial, lengths, penalty)
        assert all(is_btg_reachable(p) for p in found)


def test_best_positions_stays_on_the_device_and_keeps_padding_in_place():
    rng = random.Random(4)
    generator = torch.Generator().manual_seed(4)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    scores, lengths, units = random_search_batch(rng, generator, 5, 9, ties=False)
    expected = btg_search(scores, lengths, 0.5, units)
    for device in devices:
        positions = best_positions(scores.to(device), lengths, 0.5, units)
        assert positions.device.type == device
        for row, n, sentence in zip(positions.tolist(), lengths, expected):
            assert row[:n] == sentence and row[n:] == list(range(n, len(row)))
