"""The preorderer's network: a BiLSTM that scores, for every token pair, "i goes before j".

A pair score ``s_ij`` (i < j in the source) is the log-odds that token i precedes token j in
the target order: a bilinear form of the two tokens' BiLSTM states (``q_i . k_j``, as in
dot-product attention, so the batch never holds a vector per pair), a score of each token
alone (``a_i + b_j``) and one of their distance; it is
trained with a logistic loss on every pair of the oracle permutation (the pairwise
classification of Jehl et al. 2014 and Nakagawa 2015, a discriminative reordering model in
the spirit of Neubig et al. 2012). Decoding (``btg_search``) turns the scores into the best
BTG-consistent permutation, so every prediction has the shape of the BTG training positions.
An untrained model scores every pair positive and the search keeps the source order, the
natural start since most tokens of most language pairs keep their place.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def distance_buckets(distance, exact=8, buckets=16, max_distance=256):
    """Bucket index of positive source distances: exact up to ``exact``, then log-spaced."""
    distance = distance.clamp(min=1)
    log_bucket = exact + (torch.log(distance.float() / exact)
                          / torch.log(torch.tensor(max_distance / exact))
                          * (buckets - exact)).long()
    return torch.where(distance <= exact, distance - 1,
                       log_bucket.clamp(max=buckets - 1))


def sentence_pairs(lengths, time):
    """``(batch, time, time)`` bool: True for the pairs ``i < j < length`` of each sentence."""
    index = torch.arange(time, device=lengths.device)
    valid = index.unsqueeze(0) < lengths.unsqueeze(1)
    return (index.unsqueeze(1) < index.unsqueeze(0)) & valid.unsqueeze(2) & valid.unsqueeze(1)


class PairwiseOrderScorer(nn.Module):
    """Pair scores ``(batch, time, time)`` for right-padded token indices.

    Only ``i < j`` inside the sentence is meaningful: ``s[b, i, j] > 0`` says token i comes
    before token j in the target order.
    """

    def __init__(self, vocab_size, embed_dim=64, hidden_dim=128, pair_dim=64, num_layers=1,
                 dropout=0.1, padding_idx=0, distance_buckets=16):
        super().__init__()
        self.config = dict(vocab_size=vocab_size, embed_dim=embed_dim, hidden_dim=hidden_dim,
                           pair_dim=pair_dim, num_layers=num_layers, dropout=dropout,
                           padding_idx=padding_idx, distance_buckets=distance_buckets)
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=padding_idx)
        self.dropout = nn.Dropout(dropout)
        # +1 input: the relative position i / n, which tells "near the end" apart
        # in sentences of any length
        self.lstm = nn.LSTM(embed_dim + 1, hidden_dim, num_layers=num_layers, batch_first=True,
                            bidirectional=True, dropout=dropout if num_layers > 1 else 0.0)
        # per token: a query and a key of pair_dim, and its own score as left / right token
        self.project = nn.Linear(2 * hidden_dim, 2 * pair_dim + 2)
        self.distance = nn.Embedding(distance_buckets, 1)
        # an untrained model scores every pair about 1, "keep the source order", while
        # gradients reach every layer at once
        nn.init.normal_(self.project.weight, std=0.01)
        nn.init.zeros_(self.project.bias)
        nn.init.constant_(self.distance.weight, 1.0)

    def forward(self, tokens, lengths):
        """``tokens`` (batch, time) long on the model's device, ``lengths`` (batch,) ints >= 1."""
        batch, time = tokens.shape
        lengths = torch.as_tensor(lengths, dtype=torch.long)
        device = tokens.device
        index = torch.arange(time, device=device)
        length = lengths.to(device=device, dtype=torch.float).unsqueeze(1)
        relative = (index.float().expand(batch, time) / length).unsqueeze(2)
        features = torch.cat([self.dropout(self.embed(tokens)), relative], dim=2)
        packed = pack_padded_sequence(features, lengths.cpu(), batch_first=True,
                                      enforce_sorted=False)
        states, _ = self.lstm(packed)
        states, _ = pad_packed_sequence(states, batch_first=True, total_length=time)
        pair_dim = self.config["pair_dim"]
        query, key, alone = self.project(self.dropout(states)).split(
            [pair_dim, pair_dim, 2], dim=2)
        distance = self.distance(distance_buckets(
            index.unsqueeze(0) - index.unsqueeze(1), buckets=self.config["distance_buckets"]))
        return (torch.bmm(query, key.transpose(1, 2)) * pair_dim ** -0.5
                + alone[:, :, 0].unsqueeze(2) + alone[:, :, 1].unsqueeze(1)
                + distance.squeeze(2))

    @staticmethod
    def pairwise_loss(scores, positions, lengths):
        """Mean over sentences of the mean logistic loss over their pairs ``i < j``.

        ``positions`` (batch, time) holds the reference target-order positions (any value
        on padding). Averaging per sentence first keeps long sentences, which have
        quadratically many pairs, from drowning the short ones (Kendall's tau is a mean
        over sentences too).
        """
        lengths = torch.as_tensor(lengths, device=scores.device)
        pairs_mask = sentence_pairs(lengths, scores.shape[1])
        before = (positions.unsqueeze(2) < positions.unsqueeze(1)).to(scores.dtype)
        losses = F.binary_cross_entropy_with_logits(scores, before, reduction="none")
        losses = losses.masked_fill(~pairs_mask, 0.0)
        pairs = (lengths * (lengths - 1) // 2).clamp(min=1).to(scores.dtype)
        return (losses.sum(dim=(1, 2)) / pairs).mean()
