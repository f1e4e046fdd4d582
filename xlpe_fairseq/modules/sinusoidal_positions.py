"""Sinusoidal position encodings at arbitrary (e.g. reordered) positions.

fairseq's ``SinusoidalPositionalEmbedding.forward`` ignores its ``positions`` argument and
always numbers tokens left to right. XL PE (Ding et al. 2020, Eq. 7) needs ``PE_XL``, the same
table read at cross-lingual positions, and DPE (Zheng et al. 2021, Eq. 1) needs ``p_j``, the
table read at target-ordered positions. This is the one place that reads the table at
given positions, so both stay identical to the model's absolute ``PE``.
"""
import torch
from fairseq.modules import SinusoidalPositionalEmbedding
from torch import nn


def positions_from_reorder(reorder_positions: torch.Tensor, padding_idx: int) -> torch.Tensor:
    """Map 0-based reorder positions (``-1`` at padding) to fairseq's table indices.

    fairseq numbers the first real token ``padding_idx + 1`` and keeps row ``padding_idx``
    zero, so padding (-1) lands on the zero row.
    """
    return reorder_positions + (padding_idx + 1)


class SinusoidalPositionsAt(nn.Module):
    """``PE(pos)`` for a tensor of 0-based positions, from fairseq's sinusoid table.

    The table is a non-persistent buffer (like fairseq's), grown on demand, so checkpoints
    do not change and no per-step recomputation happens.
    """

    def __init__(self, embedding_dim: int, padding_idx: int, init_size: int = 1026):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.register_buffer(
            "weights",
            SinusoidalPositionalEmbedding.get_embedding(init_size, embedding_dim, padding_idx),
            persistent=False,
        )

    def forward(self, reorder_positions: torch.Tensor) -> torch.Tensor:
        """``reorder_positions``: LongTensor ``(..., T)`` of 0-based positions below ``T``
        (a permutation per row plus EOS), -1 at padding and at tokens without an order
        target (``xlpe-reorder --unaligned skip``); -1 reads the zero row."""
        index = positions_from_reorder(reorder_positions, self.padding_idx)
        # sized from the shape, not index.max(), to avoid a device sync per step
        needed = self.padding_idx + 1 + reorder_positions.size(-1)
        if needed > self.weights.size(0):
            self.weights = SinusoidalPositionalEmbedding.get_embedding(
                needed, self.embedding_dim, self.padding_idx
            ).to(self.weights)
        return self.weights[index].detach()
