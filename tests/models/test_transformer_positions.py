"""transformer_relpe, transformer_rope, transformer_alibi, transformer_t5_bias: presets,
positions in both stacks, incremental decoding, padding, reloads; the encoder-free rows."""
import io
from argparse import Namespace

import pytest
import torch
from fairseq.models import ARCH_CONFIG_REGISTRY
from fairseq.models.transformer import transformer_wmt_en_de_big
from fairseq.modules import MultiheadAttention
from fairseq.sequence_generator import SequenceGenerator
from fairseq.sequence_scorer import SequenceScorer

from xlpe_fairseq.modules import PositionalSelfAttention

from models.model_builders import build_model, identity_reorder, make_batch

FAMILIES = ["transformer_relpe", "transformer_rope", "transformer_alibi", "transformer_t5_bias"]
SCHEMES = {"transformer_relpe": "ShawRelativePositions", "transformer_rope": "RotaryPositions",
           "transformer_alibi": "ALiBiPositions", "transformer_t5_bias": "T5RelativeBias"}
SOURCES = ["w1 w2 w3", "w4 w5 w6 w7 w8", "w9 w3"]
TARGETS = ["w3 w2", "w9 w8 w7 w6", "w1"]


def build(family, **overrides):
    return build_model(f"{family}_iwslt_de_en", **overrides)


def batch_for(task):
    return make_batch(task.source_dictionary, SOURCES, TARGETS)


@pytest.mark.parametrize("family", FAMILIES)
def test_presets_are_fairseqs_sizes(family):
    big = Namespace()
    transformer_wmt_en_de_big(big)
    preset = Namespace()
    ARCH_CONFIG_REGISTRY[f"{family}_wmt_en_de_big"](preset)
    assert {k: v for k, v in vars(preset).items() if k in vars(big)} == vars(big)
    assert (preset.relative_positions_in, preset.absolute_positions) == ("both", "none")
    for suffix in ("", "_iwslt_de_en", "_wmt_en_de"):
        assert f"{family}{suffix}" in ARCH_CONFIG_REGISTRY


@pytest.mark.parametrize("family", FAMILIES)
def test_every_self_attention_carries_the_scheme_and_no_sinusoid_is_added(family):
    model, _ = build(family)
    layers = list(model.encoder.layers) + list(model.decoder.layers)
    for layer in layers:
        assert type(layer.self_attn.relative_positions).__name__ == SCHEMES[family]
    for layer in model.decoder.layers:
        assert type(layer.encoder_attn) is MultiheadAttention, "cross-attention stays fairseq's"
    assert model.encoder.embed_positions is None and model.decoder.embed_positions is None


@pytest.mark.parametrize("family", FAMILIES)
def test_positions_make_the_encoder_order_aware(family):
    """Without positions, self-attention is permutation-equivariant; the scheme breaks that."""
    model, task = build(family)
    dictionary = task.source_dictionary
    tokens = dictionary.encode_line("w1 w2 w3 w4", add_if_not_exist=False).long()[None]
    reversed_tokens = torch.cat([tokens[:, :-1].flip(1), tokens[:, -1:]], dim=1)
    with torch.no_grad():
        out = model.encoder(tokens)["encoder_out"][0][:, 0]
        out_reversed = model.encoder(reversed_tokens)["encoder_out"][0][:, 0]
    assert not torch.allclose(out[:-1].flip(0), out_reversed[:-1], atol=1e-4), (
        f"{family}'s encoder ignores word order")


@pytest.mark.parametrize("family", FAMILIES)
def test_left_padded_source_encodes_as_it_does_alone(family):
    model, task = build(family)
    batch = batch_for(task)
    with torch.no_grad():
        padded = model.encoder(batch["net_input"]["src_tokens"])["encoder_out"][0]
        for row, tokens in enumerate(batch["net_input"]["src_tokens"]):
            real = tokens.ne(task.source_dictionary.pad())
            alone = model.encoder(tokens[real][None])["encoder_out"][0]
            torch.testing.assert_close(padded[real, row], alone[:, 0], atol=1e-5, rtol=1e-5,
                                       msg=f"{family}: padding moved a real token's output")


def assert_step_by_step_scores_equal_full_sequence_scores(model, dictionary, batch):
    """``--score-reference`` (whole target at once) agrees with incremental decoding."""
    net_input = batch["net_input"]
    with torch.no_grad():
        scored = SequenceScorer(dictionary).generate([model], batch)
        encoder_out = model.encoder(**{name: value for name, value in net_input.items()
                                       if name != "prev_output_tokens"})
        incremental_state = {}
        steps = []
        for t in range(net_input["prev_output_tokens"].size(1)):
            net_output = model.decoder(net_input["prev_output_tokens"][:, : t + 1],
                                       encoder_out=encoder_out,
                                       incremental_state=incremental_state)
            steps.append(model.get_normalized_probs(net_output, log_probs=True)[:, -1])
        step_log_probs = torch.stack(steps, dim=1).gather(-1, batch["target"][..., None])[..., 0]
    for row, hypos in enumerate(scored):
        real = batch["target"][row].ne(dictionary.pad())
        torch.testing.assert_close(hypos[0]["positional_scores"], step_log_probs[row, real],
                                   atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_step_by_step_scores_equal_full_sequence_scores(family):
    model, task = build(family)
    assert_step_by_step_scores_equal_full_sequence_scores(model, task.target_dictionary,
                                                          batch_for(task))


@pytest.mark.parametrize("family", FAMILIES)
def test_beam_search_scores_match_forced_decoding(family):
    """Beam search reorders the cache between steps; its scores must still be the model's."""
    model, task = build(family)
    dictionary = task.target_dictionary
    batch = batch_for(task)
    with torch.no_grad():
        hypotheses = SequenceGenerator([model], dictionary, beam_size=3,
                                       max_len_b=6).forward(batch)
        for row, beam in enumerate(hypotheses):
            src = batch["net_input"]["src_tokens"][row]
            src = src[src.ne(dictionary.pad())][None]
            for hypo in beam:
                tokens = hypo["tokens"]
                prev = torch.cat([tokens.new_tensor([dictionary.eos()]), tokens[:-1]])[None]
                log_probs = model.get_normalized_probs(
                    model(src, torch.LongTensor([src.size(1)]), prev), log_probs=True)
                expected = log_probs[0].gather(-1, tokens[:, None])[:, 0]
                torch.testing.assert_close(hypo["positional_scores"], expected,
                                           atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_state_dict_reload_gives_identical_outputs(family):
    model, task = build(family)
    fresh, _ = build(family, seed=2)
    batch = batch_for(task)
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict()}, buffer)
    buffer.seek(0)
    fresh.load_state_dict(torch.load(buffer)["model"], strict=True)
    with torch.no_grad():
        torch.testing.assert_close(fresh(**batch["net_input"])[0],
                                   model(**batch["net_input"])[0], atol=0, rtol=0)


def test_relpe_options_shape_its_tables():
    model, _ = build("transformer_relpe", max_relative_positions=3, no_relative_values=True)
    scheme = model.encoder.layers[0].self_attn.relative_positions
    assert scheme.relative_keys.weight.shape == (7, 4) and scheme.relative_values is None


def test_t5_bias_is_one_table_per_stack():
    model, _ = build("transformer_t5_bias")
    encoder = {id(layer.self_attn.relative_positions) for layer in model.encoder.layers}
    decoder = {id(layer.self_attn.relative_positions) for layer in model.decoder.layers}
    assert len(encoder) == 1 and len(decoder) == 1 and encoder != decoder
    assert not model.decoder.layers[0].self_attn.relative_positions.bidirectional


@pytest.mark.parametrize("stacks", ["encoder", "decoder", "none"])
def test_positions_only_where_asked(stacks):
    model, _ = build("transformer_rope", relative_positions_in="none", absolute_positions=stacks)
    assert (model.encoder.embed_positions is not None) == (stacks == "encoder")
    assert (model.decoder.embed_positions is not None) == (stacks == "decoder")
    assert type(model.encoder.layers[0].self_attn) is MultiheadAttention
    model, _ = build("transformer_rope", relative_positions_in=stacks)
    assert isinstance(model.encoder.layers[0].self_attn, PositionalSelfAttention) == (
        stacks == "encoder")
    assert isinstance(model.decoder.layers[0].self_attn, PositionalSelfAttention) == (
        stacks == "decoder")


def test_unknown_stack_is_refused():
    with pytest.raises(ValueError, match="--absolute-positions must be one of"):
        build("transformer_alibi", absolute_positions="source")


def test_encoder_free_rows_of_xl_pe_table_4():
    """noEnc-noPos: no position on the source, the decoder keeps its sinusoids; + Relative PE:
    that, plus Shaw positions in the decoder's self-attention."""
    for arch, relative in [("transformer_encoder_free_nopos_iwslt_de_en", False),
                           ("transformer_relpe_encoder_free_iwslt_de_en", True)]:
        preset = Namespace()
        ARCH_CONFIG_REGISTRY[arch](preset)
        model, task = build_model(arch, encoder_layers=preset.encoder_layers)
        assert len(model.encoder.layers) == 0
        assert model.encoder.embed_positions is None
        assert model.decoder.embed_positions is not None
        assert isinstance(model.decoder.layers[0].self_attn, PositionalSelfAttention) == relative
        batch = batch_for(task)
        src_tokens = batch["net_input"]["src_tokens"]
        with torch.no_grad():
            encoded = model.encoder(src_tokens)["encoder_out"][0]
        embedded = model.encoder.embed_scale * model.encoder.embed_tokens(src_tokens)
        torch.testing.assert_close(encoded, embedded.transpose(0, 1),
                                   msg=f"{arch}: the source must reach the decoder unpositioned")
    big = Namespace()
    ARCH_CONFIG_REGISTRY["transformer_relpe_encoder_free_wmt_en_de_big"](big)
    assert (big.encoder_layers, big.encoder_embed_dim, big.relative_positions_in) == (
        0, 1024, "decoder")


@pytest.mark.parametrize("scheme", ["relpe", "rope", "alibi", "t5_bias"])
def test_xlpe_inxl_on_top_of_each_scheme(scheme):
    """InXL only changes the encoder input (Eq. 8): the scheme goes into every self-attention,
    the input stays X + PE_IN, and the model decodes step by step as it scores."""
    # random U and V, so that PE_XL reaches the encoder before any training
    model, task = build_model("transformer_xlpe_iwslt_de_en", xlpe_mode="inxl",
                              self_attention_positions=scheme, xlpe_init="xavier")
    layers = list(model.encoder.layers) + list(model.decoder.layers)
    assert all(isinstance(layer.self_attn, PositionalSelfAttention) for layer in layers)
    plain, _ = build_model("transformer_xlpe_iwslt_de_en", xlpe_mode="inxl")
    assert set(plain.state_dict()) <= set(model.state_dict()), "fairseq's names must stay"
    reorder = [[2, 0, 1], [4, 3, 2, 1, 0], [1, 0]]
    batch = make_batch(task.source_dictionary, SOURCES, TARGETS, reorder)
    assert_step_by_step_scores_equal_full_sequence_scores(model, task.target_dictionary, batch)
    with torch.no_grad():
        monotone = make_batch(task.source_dictionary, SOURCES, TARGETS,
                              identity_reorder(SOURCES))
        assert not torch.allclose(model(**batch["net_input"])[0],
                                  model(**monotone["net_input"])[0]), "PE_XL must still count"


@pytest.mark.parametrize("mode", ["headxl", "combination"])
def test_headxl_with_a_scheme_is_refused(mode):
    with pytest.raises(ValueError, match="takes --xlpe-mode inxl"):
        build_model("transformer_xlpe_iwslt_de_en", xlpe_mode=mode, xlpe_heads=1,
                    self_attention_positions="rope")


@pytest.mark.parametrize("scheme", ["relpe", "rope"])
def test_reordering_embeddings_on_top_of_a_scheme(scheme):
    model, task = build_model("transformer_reorder_emb_iwslt_de_en",
                              self_attention_positions=scheme)
    plain, _ = build_model("transformer_reorder_emb_iwslt_de_en")
    assert set(plain.state_dict()) <= set(model.state_dict()), "fairseq's names must stay"
    assert all(isinstance(layer.self_attn, PositionalSelfAttention)
               for layer in list(model.encoder.layers) + list(model.decoder.layers))
    assert_step_by_step_scores_equal_full_sequence_scores(model, task.target_dictionary,
                                                          batch_for(task))
    with torch.no_grad():
        assert not torch.allclose(model(**batch_for(task)["net_input"])[0],
                                  plain(**batch_for(task)["net_input"])[0])


def test_activation_checkpointing_gives_identical_outputs_and_gradients():
    def loss_and_grads(model, batch):
        model.train()
        logits, _ = model(**batch["net_input"])
        torch.nn.functional.cross_entropy(logits.transpose(1, 2), batch["target"]).backward()
        return logits, {name: p.grad for name, p in model.named_parameters()}

    plain, task = build("transformer_relpe")
    checkpointed, _ = build("transformer_relpe", checkpoint_activations=True)
    assert hasattr(checkpointed.encoder.layers[0], "precheckpoint_forward")
    batch = batch_for(task)
    expected_logits, expected_grads = loss_and_grads(plain, batch)
    logits, grads = loss_and_grads(checkpointed, batch)
    torch.testing.assert_close(logits, expected_logits, atol=0, rtol=0)
    torch.testing.assert_close(grads, expected_grads, atol=0, rtol=0)
