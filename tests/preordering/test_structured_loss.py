"""The structured hinge over BTG trees: zero when the search finds the oracle with a margin,
an upper bound on the search's wrong pairs otherwise, and a gradient that leads the search
to the oracle."""
import random

import torch

from preordering.btg_reference import random_batch_lengths, random_units, reference_search
from xlpe_fairseq.preordering.btg_search import btg_search
from xlpe_fairseq.preordering.metrics import corpus_scores, monotone_scores
from xlpe_fairseq.preordering.structured_loss import inverted_pairs, structured_hinge_loss
from xlpe_fairseq.preordering.train import train_preorderer

# a BTG permutation of 5 tokens (the last two swapped, then the blocks inverted), padded to 6
ORACLE = torch.tensor([[3, 4, 2, 1, 0, 0]])
LENGTHS = [5]
UNITS = [[0, 1, 2, 3, 4]]


def test_inverted_pairs_marks_the_pairs_that_change_order_inside_the_sentence():
    pairs = inverted_pairs(ORACLE, LENGTHS)[0]
    assert pairs[0, 2] == 1 and pairs[0, 1] == 0 and pairs[3, 4] == 1, pairs
    assert pairs[:, 5].sum() == 0 and pairs[5].sum() == 0, "padding is no pair"
    assert int(pairs.sum()) == 9, "10 pairs, of which tokens 0 and 1 keep their order"


def test_zero_when_the_scores_pick_the_oracle_by_more_than_the_margin():
    scores = 3.0 * (1 - 2 * inverted_pairs(ORACLE, LENGTHS))
    loss = structured_hinge_loss(scores, ORACLE, LENGTHS, UNITS)
    assert loss.item() == 0.0, f"scores that agree with the oracle by 3 > margin 1: {loss}"


def test_bounds_the_share_of_pairs_the_search_gets_wrong():
    torch.manual_seed(0)
    for _ in range(20):
        scores = torch.randn(1, 6, 6)
        loss = structured_hinge_loss(scores, ORACLE, LENGTHS, UNITS)
        predicted = torch.tensor([btg_search(scores, LENGTHS)[0] + [0]])
        wrong = (inverted_pairs(predicted, LENGTHS) - inverted_pairs(ORACLE, LENGTHS)).abs()
        assert loss.item() >= wrong.sum().item() / 10 - 1e-9, \
            f"hinge {loss.item():.3f} below the search's error {wrong.sum().item() / 10:.3f}"


def test_gradient_descent_on_the_scores_leads_the_search_to_the_oracle():
    scores = torch.ones(1, 6, 6, requires_grad=True)  # "keep the source order" everywhere
    optimizer = torch.optim.SGD([scores], lr=2.0)
    for _ in range(30):
        optimizer.zero_grad()
        structured_hinge_loss(scores, ORACLE, LENGTHS, UNITS).backward()
        optimizer.step()
    assert btg_search(scores.detach(), LENGTHS)[0] == ORACLE[0, :5].tolist()


def test_the_pieces_of_a_word_move_as_a_block():
    # tokens 0 and 1 are one word: a search over tokens could split them, one over units cannot
    oracle = torch.tensor([[0, 1, 2, 3, 4, 0]])
    scores = 3.0 * (1 - 2 * inverted_pairs(oracle, LENGTHS))
    scores[0, 0, 1] = -5.0  # the scores say: put piece 1 before piece 0
    units = [[0, 0, 1, 2, 3]]
    loss = structured_hinge_loss(scores, oracle, LENGTHS, units)
    assert loss.item() == 0.0, "the search over words never inverts the pieces of a word"


def test_the_batched_loss_is_the_per_sentence_loss_of_the_per_sentence_search():
    rng = random.Random(5)
    generator = torch.Generator().manual_seed(5)
    for _ in range(8):
        lengths = random_batch_lengths(rng, 6, 10)
        time = max(lengths)
        scores = torch.randn(len(lengths), time, time, generator=generator, requires_grad=True)
        oracle = torch.zeros(len(lengths), time, dtype=torch.long)
        for b, n in enumerate(lengths):
            oracle[b, :n] = torch.randperm(n, generator=generator)
        units = [random_units(rng, n) for n in lengths]
        batched = structured_hinge_loss(scores, oracle, lengths, units, margin=0.5)
        (batched_gradient,) = torch.autograd.grad(batched, scores)
        per_sentence = []
        for b, n in enumerate(lengths):
            # the search on the cost-augmented scores of this sentence alone
            sentence = scores[b:b + 1, :n, :n]
            target = inverted_pairs(oracle[b:b + 1, :n], [n])
            shifted = sentence.detach() - 0.5 * (1 - 2 * target)
            predicted = torch.tensor([reference_search(shifted[0], n, 0.0, units[b])])
            change = target - inverted_pairs(predicted, [n])
            hinge = (sentence * change + 0.5 * change.abs()).sum().clamp(min=0)
            per_sentence.append(hinge / max(n * (n - 1) // 2, 1))
        looped = torch.stack(per_sentence).mean()
        (looped_gradient,) = torch.autograd.grad(looped, scores)
        assert torch.allclose(batched, looped, rtol=1e-6, atol=1e-7), (lengths, batched, looped)
        assert torch.allclose(batched_gradient, looped_gradient, rtol=1e-6, atol=1e-8)


def test_a_preorderer_trained_with_the_structured_loss_beats_monotone(synthetic_train,
                                                                      synthetic_test):
    for loss in ("structured", "both"):
        preorderer = train_preorderer(*synthetic_train, epochs=3, hidden_dim=32, embed_dim=16,
                                      pair_dim=16, batch_tokens=300, loss=loss)
        sentences, reference = synthetic_test
        scores = corpus_scores(preorderer.predict(sentences), reference)
        monotone = monotone_scores(reference)
        assert scores["kendall_tau"] > monotone["kendall_tau"] + 0.1, f"{loss}: {scores}"
        assert scores["fuzzy_reordering_score"] > monotone["fuzzy_reordering_score"] + 0.1, \
            f"{loss}: {scores}"
