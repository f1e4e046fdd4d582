"""The papers' baseline presets: deeper encoders (DPE Table 5) and encoder-free Transformers
with absolute or InXL positions (XL PE Table 4)."""
from argparse import Namespace

import pytest
import torch
from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY
from fairseq.models.transformer import transformer_wmt_en_de, transformer_wmt_en_de_big

from models.model_builders import TINY, make_batch, make_task

SOURCES = ["w1 w2 w3 w4 w5", "w6 w7", "w8 w9 w10"]
TARGETS = ["w5 w4 w3", "w7 w6 w1 w2", "w9 w8"]
REORDER = [[4, 0, 3, 1, 2], [1, 0], [2, 0, 1]]


def build_preset(arch, **overrides):
    """A tiny model whose layer counts come from the preset (``TINY`` fixes them otherwise)."""
    task = make_task()
    sizes = {k: v for k, v in TINY.items() if not k.endswith("_layers")}
    args = Namespace(arch=arch, **{**sizes, **overrides})
    ARCH_CONFIG_REGISTRY[arch](args)
    torch.manual_seed(1)
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task).eval(), task


@pytest.mark.parametrize("arch, layers", [("transformer_8e_wmt_en_de", 8),
                                          ("transformer_10e_wmt_en_de", 10)])
def test_deeper_encoder_presets_are_transformer_base_with_more_encoder_layers(arch, layers):
    preset, base = Namespace(), Namespace()
    ARCH_CONFIG_REGISTRY[arch](preset)
    transformer_wmt_en_de(base)
    assert {**vars(preset), "encoder_layers": base.encoder_layers} == vars(base), (
        f"{arch} must differ from transformer_wmt_en_de in the encoder depth only")
    model, _ = build_preset(arch)
    assert (len(model.encoder.layers), len(model.decoder.layers)) == (layers, 6)


def test_encoder_free_big_preset_is_transformer_big_without_encoder_layers():
    preset, big = Namespace(), Namespace()
    ARCH_CONFIG_REGISTRY["transformer_encoder_free_wmt_en_de_big"](preset)
    transformer_wmt_en_de_big(big)
    assert {**vars(preset), "encoder_layers": big.encoder_layers} == vars(big)
    assert preset.encoder_layers == 0
    xlpe = Namespace()
    ARCH_CONFIG_REGISTRY["transformer_xlpe_encoder_free_wmt_en_de_big"](xlpe)
    assert (xlpe.encoder_layers, xlpe.xlpe_mode, xlpe.encoder_embed_dim) == (0, "inxl", 1024)


def test_encoder_free_transformer_hands_embeddings_with_positions_to_the_decoder():
    model, task = build_preset("transformer_encoder_free_iwslt_de_en")
    assert len(model.encoder.layers) == 0 and len(model.decoder.layers) == 6
    batch = make_batch(task.source_dictionary, SOURCES, TARGETS)
    src_tokens = batch["net_input"]["src_tokens"]
    encoder_out = model.encoder(src_tokens, batch["net_input"]["src_lengths"])
    embedded, _ = model.encoder.forward_embedding(src_tokens)
    torch.testing.assert_close(encoder_out["encoder_out"][0], embedded.transpose(0, 1),
                               msg="the decoder must read scaled embeddings + PE, nothing more")
    logits, _ = model(**batch["net_input"])
    assert logits.shape[:2] == batch["target"].shape


def test_encoder_free_inxl_uses_the_reorder_positions_and_trains():
    # random U and V, so that PE_XL reaches the output before any training
    model, task = build_preset("transformer_xlpe_encoder_free_iwslt_de_en", xlpe_init="xavier")
    assert len(model.encoder.layers) == 0 and model.encoder.mode == "inxl"
    model.train()
    monotone = [list(range(len(s.split()))) for s in SOURCES]
    batch = make_batch(task.source_dictionary, SOURCES, TARGETS, REORDER)
    logits, _ = model(**batch["net_input"])
    logits.sum().backward()
    assert model.encoder.pe_in.u.weight.grad.abs().sum() > 0, "InXL's U must get a gradient"
    model.eval()
    with torch.no_grad():
        reordered, _ = model(**batch["net_input"])
        plain, _ = model(**make_batch(task.source_dictionary, SOURCES, TARGETS, monotone)
                         ["net_input"])
    assert not torch.allclose(reordered, plain), "cross-lingual positions must change the output"


@pytest.mark.parametrize("mode", ["headxl", "combination"])
def test_headxl_without_encoder_layers_is_refused(mode):
    with pytest.raises(ValueError, match="an encoder-free model takes --xlpe-mode inxl"):
        build_preset("transformer_xlpe_encoder_free_iwslt_de_en", xlpe_mode=mode, xlpe_heads=1)


def test_lstm_preset_is_xl_pe_table_4s_lstm_and_translates():
    preset = Namespace()
    ARCH_CONFIG_REGISTRY["lstm_6l_wmt_en_de"](preset)
    assert (preset.encoder_layers, preset.decoder_layers, preset.encoder_hidden_size,
            preset.decoder_hidden_size, preset.encoder_embed_dim) == (6, 6, 1024, 1024, 1024)
    small = dict(encoder_embed_dim=16, decoder_embed_dim=16, encoder_hidden_size=16,
                 decoder_hidden_size=16, decoder_out_embed_dim=16, encoder_layers=2,
                 decoder_layers=2)
    # fairseq's LSTM reads the criterion's name (adaptive softmax or not)
    args = Namespace(arch="lstm_6l_wmt_en_de", criterion="label_smoothed_cross_entropy",
                     **small)
    ARCH_CONFIG_REGISTRY["lstm_6l_wmt_en_de"](args)
    task = make_task()
    model = ARCH_MODEL_REGISTRY["lstm_6l_wmt_en_de"].build_model(args, task).eval()
    batch = make_batch(task.source_dictionary, SOURCES, TARGETS)
    logits, _ = model(**batch["net_input"])
    assert logits.shape[:2] == batch["target"].shape
