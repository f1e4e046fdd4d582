"""A training loss that sees what the search does: the structured hinge over BTG trees.

The pairwise logistic loss (``PairwiseOrderScorer.pairwise_loss``) trains every token pair on
its own, while the preorderer decodes with the exact BTG search (``btg_search``), which trades
pairs against each other inside a tree. The structured hinge (Taskar et al. 2004; Tsochantaridis
et al. 2005, the max-margin counterpart of the BTG preorderers of Neubig et al. 2012 and
Nakagawa 2015) trains the scores on the search's own output:

    L = max_T [score(T) + cost(T, T*)] - score(T*),   score(T) = -sum_{i<j inverted by T} s_ij

over BTG trees T of the sentence's words, with T* the oracle tree and ``cost`` the number of
token pairs whose order T gets wrong (so that L is an upper bound on the pairs the search
gets wrong, scaled by the margin). Both score and cost decompose over pairs, so the
maximization is the same CKY search on shifted scores (``s_ij - margin * (1 - 2 o_ij)``, with
``o_ij`` = 1 where the oracle inverts i and j). The loss is then linear in the scores:
``sum_ij s_ij (o_ij - p_ij) + margin * sum_ij |o_ij - p_ij|`` with ``p`` the pairs that the
maximizing tree inverts, per sentence divided by its number of pairs, like Kendall's tau.
"""
import torch

from .btg_search import best_positions
from .model import sentence_pairs


def inverted_pairs(positions, lengths):
    """``(batch, time, time)`` float: 1 where ``i < j < length`` and position i > position j."""
    pairs = sentence_pairs(torch.as_tensor(lengths, device=positions.device), positions.shape[1])
    return ((positions.unsqueeze(2) > positions.unsqueeze(1)) & pairs).float()


def structured_hinge_loss(scores, positions, lengths, units, margin=1.0):
    """Mean over sentences of the structured hinge per token pair (see the module docstring).

    ``scores`` (batch, time, time) with gradient; ``positions`` (batch, time) the oracle
    positions (any value on padding); ``units`` one word-unit list per sentence
    (``word_units``), so the search moves the BPE pieces of a word as a block, as the oracle
    does.
    """
    lengths = torch.as_tensor(lengths)
    oracle = inverted_pairs(positions, lengths)
    with torch.no_grad():
        shifted = scores - margin * (1.0 - 2.0 * oracle)
        # the whole batch in one search that stays on the device
        predicted = inverted_pairs(best_positions(shifted, lengths.tolist(), 0.0, units),
                                   lengths)
    wrong = (oracle - predicted).abs()
    per_sentence = (scores * (oracle - predicted) + margin * wrong).sum(dim=(1, 2))
    pairs = (lengths * (lengths - 1) // 2).clamp(min=1).to(scores.device, scores.dtype)
    return (per_sentence.clamp(min=0.0) / pairs).mean()
