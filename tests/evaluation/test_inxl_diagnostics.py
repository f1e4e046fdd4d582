"""xlpe-inxl-diagnostics: what InXL's input position holds, on hand-made features and batches."""
import pytest
import torch
from fairseq.modules import SinusoidalPositionalEmbedding

from models.model_builders import build_model, make_batch
from xlpe_fairseq.evaluation.inxl_diagnostics import input_diagnostics, position_readback
from xlpe_fairseq.io import InputError

SOURCES = ["w1 w2 w3 w4 w5 w6", "w6 w7 w8 w9", "w8 w9 w10", "w2 w4 w6 w8 w10", "w1 w3", "w5 w7 w9"]
TARGETS = ["w1", "w2", "w3", "w4", "w5", "w6"]
REORDER = [[5, 4, 3, 2, 1, 0], [3, 2, 1, 0], [2, 1, 0], [4, 3, 2, 1, 0], [1, 0], [2, 1, 0]]


def table(rows, dim=16):
    return SinusoidalPositionalEmbedding.get_embedding(rows + 2, dim, 1)[2:]


def test_readback_of_the_sinusoid_itself_is_perfect_and_of_a_constant_is_chance():
    positions = torch.arange(8).repeat(10)
    fitted = torch.arange(80) < 40
    rows = table(8)
    assert position_readback(rows[positions], positions, rows, fitted) == 1.0
    constant = torch.ones(80, 16)
    assert position_readback(constant, positions, rows, fitted) <= 0.125, \
        "a feature that holds no position must read back one position for all"
    assert position_readback(rows[positions], positions, rows, torch.ones(80, dtype=bool)) is None


def test_identity_init_holds_absolute_positions_and_no_xl_ones():
    model, task = build_model("transformer_xlpe_iwslt_de_en", xlpe_mode="inxl",
                              xlpe_init="identity")
    batch = make_batch(task.source_dictionary, SOURCES, TARGETS, REORDER)
    found = input_diagnostics(model, [batch])
    assert found["tokens"] == sum(len(s.split()) + 1 for s in SOURCES)
    assert found["saturated"] == 0
    assert found["abs_readback"] == 1.0, "tanh(PE_abs) keeps every absolute position"
    assert found["xl_readback_moved"] < 0.5, "with V = 0 the moved tokens' XL position is lost"
    assert found["sinusoid_norm"] == pytest.approx(8 ** 0.5, rel=1e-5)
    assert found["in_norm"] < found["sinusoid_norm"], "tanh shrinks the sinusoid"


def test_xavier_init_mixes_both_positions():
    model, task = build_model("transformer_xlpe_iwslt_de_en", xlpe_mode="inxl", xlpe_init="xavier")
    found = input_diagnostics(model, [make_batch(task.source_dictionary, SOURCES, TARGETS,
                                                 REORDER)])
    assert found["xl_readback_moved"] == 1.0, "random U and V let a probe read PE_XL"


def test_models_without_pe_in_are_refused():
    model, task = build_model("transformer_xlpe_iwslt_de_en", xlpe_mode="headxl", xlpe_heads=2)
    with pytest.raises(InputError, match="without PE_IN"):
        input_diagnostics(model, [make_batch(task.source_dictionary, SOURCES, TARGETS, REORDER)])
