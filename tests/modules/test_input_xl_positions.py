"""InXL's input position (Eq. 7): the statistics the criterion logs, on a hand-made batch, and
the slower steps of --xlpe-uv-lr-scale."""
import pytest
import torch

from xlpe_fairseq.io import OptionError
from xlpe_fairseq.modules.input_xl_positions import InputXLPositions, input_statistics


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


def effective_u_after_adam_steps(lr_scale, steps=5, width=8):
    """``U`` as Eq. 7 sees it after ``steps`` Adam updates on a fixed loss."""
    torch.manual_seed(0)
    pe_abs, pe_xl = torch.randn(3, width), torch.randn(3, width)
    target = torch.randn(3, width)
    module = InputXLPositions(width, "identity", lr_scale)
    optimizer = torch.optim.Adam(module.parameters(), lr=1e-2)
    for _ in range(steps):
        optimizer.zero_grad()
        ((module(pe_abs, pe_xl) - target) ** 2).sum().backward()
        optimizer.step()
    return module.u.weight.detach() * lr_scale, module


def test_lr_scale_starts_at_the_same_input_and_slows_adam_steps_on_u_and_v():
    moved_full, _ = effective_u_after_adam_steps(1.0)
    moved_quarter, module = effective_u_after_adam_steps(0.25)
    pe = torch.randn(2, 8)
    fresh = InputXLPositions(8, "identity", 0.25)
    assert torch.allclose(fresh(pe, torch.randn(2, 8)), torch.tanh(pe), atol=1e-6), \
        "a scaled PE_IN must start where the unscaled one does, tanh(PE_abs)"
    full_step = float((moved_full - torch.eye(8)).abs().max())
    quarter_step = float((moved_quarter - torch.eye(8)).abs().max())
    assert quarter_step == pytest.approx(full_step / 4, rel=0.05), \
        f"U moved {quarter_step:.4f} with --xlpe-uv-lr-scale 0.25 against {full_step:.4f}"
    pre = module.pre_activation(pe, torch.zeros(2, 8))
    assert torch.allclose(pre, pe @ moved_quarter.T, atol=1e-5), \
        "the pre-activation must use the stored weight times the scale"


@pytest.mark.parametrize("lr_scale", [0.0, -0.5, 1.5])
def test_lr_scale_outside_0_1_is_refused(lr_scale):
    with pytest.raises(OptionError, match="--xlpe-uv-lr-scale"):
        InputXLPositions(8, "identity", lr_scale)


def test_xl_warmup_brings_the_pe_xl_term_in_linearly():
    torch.manual_seed(0)
    warming = InputXLPositions(8, init="xavier", xl_warmup_updates=10)
    plain = InputXLPositions(8, init="xavier")
    plain.load_state_dict(warming.state_dict())
    pe_abs, pe_xl = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    abs_term, xl_term = warming.u(pe_abs), warming.v(pe_xl)
    assert torch.equal(warming.pre_activation(pe_abs, pe_xl), abs_term), \
        "at update 0 the warm-up leaves PE_XL V out of the input"
    warming.set_num_updates(5)
    assert torch.allclose(warming.pre_activation(pe_abs, pe_xl), abs_term + 0.5 * xl_term), \
        "half-way through the warm-up PE_XL V counts half"
    warming.set_num_updates(25)
    assert torch.equal(warming.pre_activation(pe_abs, pe_xl), plain.pre_activation(pe_abs, pe_xl)), \
        "after the warm-up the input is Eq. 7's, as without the option"
    plain.set_num_updates(0)
    assert torch.equal(plain.pre_activation(pe_abs, pe_xl), abs_term + xl_term), \
        "without the option the update number changes nothing"


def test_negative_xl_warmup_is_refused():
    with pytest.raises(OptionError, match="--xlpe-xl-warmup-updates"):
        InputXLPositions(8, xl_warmup_updates=-1)
