"""SinusoidalPositionsAt reads fairseq's own table at arbitrary positions."""
import torch
from fairseq.modules import SinusoidalPositionalEmbedding

from xlpe_fairseq.modules import SinusoidalPositionsAt


def test_identity_positions_equal_fairseq_absolute_positions():
    padding_idx = 1
    src_tokens = torch.LongTensor([[padding_idx, padding_idx, 5, 6, 2], [7, 8, 9, 10, 2]])
    absolute = SinusoidalPositionalEmbedding(16, padding_idx)(src_tokens)
    lengths = src_tokens.ne(padding_idx).sum(1, keepdim=True)
    columns = torch.arange(5).expand(2, 5)
    identity = torch.where(src_tokens.ne(padding_idx), columns - (5 - lengths), torch.full_like(columns, -1))
    assert torch.equal(SinusoidalPositionsAt(16, padding_idx)(identity), absolute), (
        "0-based identity positions must give fairseq's absolute PE (padding -> zero row)"
    )


def test_table_grows_for_long_inputs_and_reorders_rows():
    positions_at = SinusoidalPositionsAt(8, padding_idx=1, init_size=4)
    positions = torch.arange(50).flip(0).unsqueeze(0)
    table = SinusoidalPositionalEmbedding.get_embedding(60, 8, 1)
    assert torch.equal(positions_at(positions)[0], table[positions[0] + 2])


def test_table_is_not_saved_in_checkpoints():
    assert "weights" not in SinusoidalPositionsAt(8, 1).state_dict()
