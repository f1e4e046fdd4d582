"""InXL's input position (Eq. 7): the statistics the criterion logs, on a hand-made batch."""
import pytest
import torch

from xlpe_fairseq.modules.input_xl_positions import input_statistics


def test_input_statistics_on_a_hand_made_batch():
    pre = torch.tensor([[[3.0, 0.0], [0.5, -2.5]], [[9.0, 9.0], [0.0, 0.0]]])
    embedding = torch.tensor([[[3.0, 4.0], [0.0, 1.0]], [[5.0, 5.0], [6.0, 8.0]]])
    padding = torch.tensor([[False, False], [True, False]])
    in_norm, embed_norm, saturated, tokens, units = input_statistics(pre, embedding,
                                                                     padding).tolist()
    expected_in = float(torch.tanh(torch.tensor(3.0)) + torch.tanh(torch.tensor([0.5, -2.5])).norm())
    assert in_norm == pytest.approx(expected_in, rel=1e-6)
    assert embed_norm == pytest.approx(5.0 + 1.0 + 10.0), "padding must not count"
    assert (saturated, tokens, units) == (2, 3, 6), "|3| and |-2.5| are over 2; 9s are padding"
