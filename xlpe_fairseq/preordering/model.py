"""The preorderer's network: a BiLSTM that gives each source token a target-order score.

Sorting the tokens of a sentence by score yields the predicted target order, so every output
is a permutation. The score is the token's own position plus two learned offsets, one in
tokens (local moves such as adjective-noun swaps) and one in sentence lengths (moves to a
sentence edge, such as verb-final order); an untrained offset of zero is the monotone order,
the natural starting point because most tokens of most language pairs keep their place.
Training ranks every pair of tokens (a pairwise logistic loss in the spirit of the
discriminative reordering model of Neubig et al. 2012), which directly optimises Kendall's tau.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class PreorderScorer(nn.Module):
    """Scores ``(batch, time)`` for right-padded token indices; padding scores are meaningless."""

    def __init__(self, vocab_size, embed_dim=64, hidden_dim=128, num_layers=1, dropout=0.1,
                 padding_idx=0):
        super().__init__()
        self.config = dict(vocab_size=vocab_size, embed_dim=embed_dim, hidden_dim=hidden_dim,
                           num_layers=num_layers, dropout=dropout, padding_idx=padding_idx)
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=padding_idx)
        self.dropout = nn.Dropout(dropout)
        # +1 input: the relative position i / n, which tells "near the end" apart
        # in sentences of any length
        self.lstm = nn.LSTM(embed_dim + 1, hidden_dim, num_layers=num_layers, batch_first=True,
                            bidirectional=True, dropout=dropout if num_layers > 1 else 0.0)
        self.offsets = nn.Sequential(nn.Linear(2 * hidden_dim, hidden_dim), nn.Tanh(),
                                     nn.Linear(hidden_dim, 2))
        # the last layer starts at zero so an untrained scorer predicts the monotone order
        nn.init.zeros_(self.offsets[-1].weight)
        nn.init.zeros_(self.offsets[-1].bias)
        # sharpness of the pairwise loss; sorting ignores it
        self.log_temperature = nn.Parameter(torch.zeros(()))

    def forward(self, tokens, lengths):
        """``tokens`` (batch, time) long on the model's device, ``lengths`` (batch,) ints >= 1."""
        batch, time = tokens.shape
        lengths = torch.as_tensor(lengths, dtype=torch.long)
        device = tokens.device
        index = torch.arange(time, device=device, dtype=torch.float).expand(batch, time)
        length = lengths.to(device=device, dtype=torch.float).unsqueeze(1)
        features = torch.cat([self.dropout(self.embed(tokens)), (index / length).unsqueeze(2)],
                             dim=2)
        packed = pack_padded_sequence(features, lengths.cpu(), batch_first=True,
                                      enforce_sorted=False)
        states, _ = self.lstm(packed)
        states, _ = pad_packed_sequence(states, batch_first=True, total_length=time)
        token_offset, length_offset = self.offsets(self.dropout(states)).unbind(dim=2)
        return index + token_offset + length * length_offset

    def pairwise_loss(self, scores, positions, lengths):
        """Mean over sentences of the mean logistic loss over token pairs ranked wrongly.

        ``positions`` (batch, time) holds the reference target-order positions (any value
        on padding). Averaging per sentence first keeps long sentences, which have
        quadratically many pairs, from drowning the short ones.
        """
        time = scores.shape[1]
        lengths = torch.as_tensor(lengths, device=scores.device)
        valid = torch.arange(time, device=scores.device).unsqueeze(0) < lengths.unsqueeze(1)
        before = (positions.unsqueeze(2) < positions.unsqueeze(1)) & valid.unsqueeze(2) \
            & valid.unsqueeze(1)
        margin = (scores.unsqueeze(2) - scores.unsqueeze(1)) * self.log_temperature.exp()
        losses = F.softplus(margin).masked_fill(~before, 0.0)
        pairs = (lengths * (lengths - 1) // 2).clamp(min=1).to(scores.dtype)
        return (losses.sum(dim=(1, 2)) / pairs).mean()
