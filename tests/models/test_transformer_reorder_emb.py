"""transformer_reorder_emb: Eq. 6–9 of Chen et al. (2019), variants, decoding, reloads, size."""
import io
from argparse import Namespace

import pytest
import torch
import torch.nn.functional as F
from fairseq.models import ARCH_MODEL_REGISTRY
from fairseq.models.transformer import transformer_iwslt_de_en
from fairseq.sequence_generator import SequenceGenerator
from fairseq.sequence_scorer import SequenceScorer

from xlpe_fairseq.models.transformer_reorder_emb import (
    ReorderingEmbedding,
    TransformerReorderEmbModel,
    transformer_reorder_emb,
    transformer_reorder_emb_iwslt_de_en,
    transformer_reorder_emb_wmt_en_de,
    transformer_reorder_emb_wmt_en_de_big,
)

from models.model_builders import TINY, build_model, make_batch

ARCH = "transformer_reorder_emb_iwslt_de_en"
VARIANTS = [(stack, mode) for stack in ("encoder", "decoder", "both")
            for mode in ("gated", "additional_pe")]
SOURCES = ["w1 w2 w3", "w4 w5 w6 w7 w8", "w9 w3"]
TARGETS = ["w3 w2", "w9 w8 w7 w6", "w1"]


def build(**overrides):
    return build_model(ARCH, **overrides)


def batch_for(task):
    return make_batch(task.source_dictionary, SOURCES, TARGETS)


def n_params(module):
    return sum(p.numel() for p in module.parameters())


def affected_layers(model, stack):
    return (len(model.encoder.layers) * (stack in ("encoder", "both"))
            + len(model.decoder.layers) * (stack in ("decoder", "both")))


def test_registered_without_reorder_positions():
    assert ARCH_MODEL_REGISTRY[ARCH] is TransformerReorderEmbModel
    assert TransformerReorderEmbModel.reorder_positions_role is None


def test_presets():
    iwslt, fairseq_iwslt = Namespace(), Namespace()
    transformer_reorder_emb_iwslt_de_en(iwslt)
    transformer_iwslt_de_en(fairseq_iwslt)
    added = ("reorder_emb", "self_attention_positions")
    assert {k: v for k, v in vars(iwslt).items() if not k.startswith(added)} == \
        vars(fairseq_iwslt)
    base, wmt, big = Namespace(), Namespace(), Namespace()
    transformer_reorder_emb(base)
    transformer_reorder_emb_wmt_en_de(wmt)
    transformer_reorder_emb_wmt_en_de_big(big)
    assert vars(base) == vars(wmt)
    assert (base.encoder_embed_dim, base.encoder_ffn_embed_dim, base.encoder_attention_heads,
            base.encoder_layers, base.decoder_layers) == (512, 2048, 8, 6, 6)
    assert (big.encoder_embed_dim, big.encoder_attention_heads, big.attention_dropout) == \
        (1024, 16, 0.1)
    for args in (iwslt, base, big):
        assert (args.reorder_emb, args.reorder_emb_mode) == ("both", "gated")


@pytest.mark.parametrize("stack,mode", VARIANTS)
def test_shapes_and_gradients(stack, mode):
    model, task = build(reorder_emb=stack, reorder_emb_mode=mode)
    batch = batch_for(task)
    model.train()
    logits, _ = model(**batch["net_input"])
    assert logits.shape == (3, batch["target"].size(1), len(task.target_dictionary))
    F.cross_entropy(logits.transpose(1, 2), batch["target"]).backward()
    re_params = {name: p for name, p in model.named_parameters() if ".reorder_emb." in name}
    assert len(re_params) == affected_layers(model, stack) * (5 if mode == "gated" else 2)
    for name, p in re_params.items():
        assert p.grad is not None and p.grad.abs().sum() > 0, f"{name} gets no gradient"


@pytest.mark.parametrize("stack,mode", VARIANTS)
def test_parameter_count_and_names_against_fairseq_transformer(stack, mode):
    """Each affected layer gains W, W̄, V (3·d², no biases: Eq. 6) and Eq. 8's LN (2·d);
    the control only the LN. Everything fairseq has keeps its name."""
    model, _ = build(reorder_emb=stack, reorder_emb_mode=mode)
    plain, _ = build_model("transformer_iwslt_de_en")
    d = TINY["encoder_embed_dim"]
    per_layer = (3 * d * d if mode == "gated" else 0) + 2 * d
    assert n_params(model) - n_params(plain) == affected_layers(model, stack) * per_layer
    plain_names = {name for name, _ in plain.named_parameters()}
    names = {name for name, _ in model.named_parameters()}
    assert plain_names <= names
    assert all(".reorder_emb." in name for name in names - plain_names)


def test_control_has_no_gate_parameters():
    model, _ = build(reorder_emb_mode="additional_pe")
    names = [name for name, _ in model.named_parameters() if ".reorder_emb." in name]
    assert names and all(".reorder_emb.layer_norm." in name for name in names)


def test_reordering_embedding_follows_eq_6_to_8():
    torch.manual_seed(0)
    block = ReorderingEmbedding(8, gated=True)
    h_prev, h_bar, pe = torch.randn(3, 2, 8), torch.randn(3, 2, 8), torch.randn(3, 2, 8)
    penalty = torch.sigmoid(torch.tanh(h_prev @ block.w.weight.T + h_bar @ block.w_bar.weight.T)
                            @ block.v.weight.T)
    ln = block.layer_norm
    expected = F.layer_norm(h_bar + pe * penalty, (8,), ln.weight, ln.bias)
    torch.testing.assert_close(block(h_prev, h_bar, pe), expected)
    control = ReorderingEmbedding(8, gated=False)
    torch.testing.assert_close(control(h_prev, h_bar, pe), F.layer_norm(h_bar + pe, (8,)))


def test_encoder_layer_follows_eq_9():
    """H̄ = LN(SelfAttn(H) + H), C = RE(H, H̄, PE), output LN(FFN(C) + H̄)."""
    model, _ = build(reorder_emb="encoder")
    layer = model.encoder.layers[0]
    torch.manual_seed(0)
    h, pe = torch.randn(4, 2, 16), torch.randn(4, 2, 16)
    attn, _ = layer.self_attn(query=h, key=h, value=h, key_padding_mask=None)
    h_bar = layer.self_attn_layer_norm(attn + h)
    c = layer.reorder_emb(h, h_bar, pe)
    expected = layer.final_layer_norm(layer.fc2(torch.relu(layer.fc1(c))) + h_bar)
    torch.testing.assert_close(layer(h, None, pe), expected)


def test_decoder_layer_puts_the_block_before_encoder_attention():
    """H̄ from masked self-attention, C = RE(H, H̄, PE); encoder attention reads C and, as
    the FFN of Eq. 9, keeps H̄ as its residual; the FFN sublayer is fairseq's."""
    model, _ = build(reorder_emb="decoder")
    layer = model.decoder.layers[0]
    torch.manual_seed(0)
    h, pe, enc = torch.randn(3, 2, 16), torch.randn(3, 2, 16), torch.randn(5, 2, 16)
    attn, _ = layer.self_attn(query=h, key=h, value=h, key_padding_mask=None)
    h_bar = layer.self_attn_layer_norm(attn + h)
    c = layer.reorder_emb(h, h_bar, pe)
    cross, _ = layer.encoder_attn(query=c, key=enc, value=enc, key_padding_mask=None,
                                  static_kv=True)
    e = layer.encoder_attn_layer_norm(cross + h_bar)
    expected = layer.final_layer_norm(layer.fc2(torch.relu(layer.fc1(e))) + e)
    torch.testing.assert_close(layer(h, pe, encoder_out=enc)[0], expected)


def test_left_padding_keeps_position_numbering():
    """PE follows fairseq's make_positions: a left-padded sentence encodes as it does alone."""
    model, task = build(reorder_emb="encoder")
    batch = batch_for(task)
    padded = model.encoder(batch["net_input"]["src_tokens"])["encoder_out"][0]
    for row, tokens in enumerate(batch["net_input"]["src_tokens"]):
        real = tokens.ne(task.source_dictionary.pad())
        alone = model.encoder(tokens[real][None])["encoder_out"][0]
        torch.testing.assert_close(padded[real, row], alone[:, 0], atol=1e-5, rtol=1e-5)


def forced_scores(model, dictionary, src_tokens, hypothesis):
    """Log-probabilities of ``hypothesis`` under full-sequence teacher forcing."""
    src_tokens = src_tokens[src_tokens.ne(dictionary.pad())][None]
    eos = hypothesis.new_tensor([dictionary.eos()])
    prev_output_tokens = torch.cat([eos, hypothesis[:-1]])[None]
    net_output = model(src_tokens, torch.LongTensor([src_tokens.size(1)]), prev_output_tokens)
    log_probs = model.get_normalized_probs(net_output, log_probs=True)
    return log_probs[0].gather(-1, hypothesis[:, None])[:, 0]


@pytest.mark.parametrize("stack", ["decoder", "both"])
def test_beam_search_scores_match_forced_decoding(stack):
    model, task = build(reorder_emb=stack)
    dictionary = task.target_dictionary
    batch = batch_for(task)
    generator = SequenceGenerator([model], dictionary, beam_size=3, max_len_b=6)
    with torch.no_grad():
        hypotheses = generator.forward(batch)
        for row, beam in enumerate(hypotheses):
            assert len(beam) == 3
            for hypo in beam:
                expected = forced_scores(
                    model, dictionary, batch["net_input"]["src_tokens"][row], hypo["tokens"]
                )
                torch.testing.assert_close(hypo["positional_scores"], expected,
                                           atol=1e-5, rtol=1e-5)


def test_score_reference_matches_step_by_step_decoding():
    """``--score-reference`` (full sequence) agrees with incremental decoding of the reference."""
    model, task = build()
    dictionary = task.target_dictionary
    batch = batch_for(task)
    net_input = batch["net_input"]
    with torch.no_grad():
        scored = SequenceScorer(dictionary).generate([model], batch)
        encoder_out = model.encoder(net_input["src_tokens"], net_input["src_lengths"])
        incremental_state = {}
        steps = []
        for t in range(net_input["prev_output_tokens"].size(1)):
            net_output = model.decoder(net_input["prev_output_tokens"][:, : t + 1],
                                       encoder_out=encoder_out, incremental_state=incremental_state)
            steps.append(model.get_normalized_probs(net_output, log_probs=True)[:, -1])
        step_log_probs = torch.stack(steps, dim=1).gather(-1, batch["target"][..., None])[..., 0]
    for row, hypos in enumerate(scored):
        target = batch["target"][row]
        real = target.ne(dictionary.pad())
        torch.testing.assert_close(hypos[0]["positional_scores"], step_log_probs[row, real],
                                   atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("mode", ["gated", "additional_pe"])
def test_state_dict_reload_gives_identical_outputs(mode):
    model, task = build(reorder_emb_mode=mode)
    fresh, _ = build(reorder_emb_mode=mode, seed=2)
    batch = batch_for(task)
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict()}, buffer)
    buffer.seek(0)
    fresh.load_state_dict(torch.load(buffer)["model"], strict=True)
    with torch.no_grad():
        torch.testing.assert_close(fresh(**batch["net_input"])[0], model(**batch["net_input"])[0],
                                   atol=0, rtol=0)


@pytest.mark.parametrize("option,stack", [("encoder_normalize_before", "encoder"),
                                          ("decoder_normalize_before", "decoder"),
                                          ("encoder_learned_pos", "both"),
                                          ("no_token_positional_embeddings", "both")])
def test_rejects_what_eq_9_cannot_mean(option, stack):
    with pytest.raises(ValueError, match=option.split("_", 1)[1].replace("_", "-")):
        build(reorder_emb=stack, **{option: True})


def test_pre_norm_allowed_on_the_stack_without_res():
    model, task = build(reorder_emb="encoder", decoder_normalize_before=True)
    logits, _ = model(**batch_for(task)["net_input"])
    assert torch.isfinite(logits).all()


def test_positions_reach_layers_only_during_their_stacks_forward():
    """PE is handed to the layers for one forward of their stack and no longer, even when
    that forward fails: called on its own afterwards, a layer still has to be given PE."""
    model, task = build()
    net_input = batch_for(task)["net_input"]
    encoder_layer, decoder_layer = model.encoder.layers[0], model.decoder.layers[0]
    h = torch.randn(4, 2, 16)
    with torch.no_grad():
        model(**net_input)
        with pytest.raises(RuntimeError):  # token embeddings of the wrong width
            model.encoder(net_input["src_tokens"], token_embeddings=torch.zeros(3, 5, 7))
        with pytest.raises(RuntimeError):  # encoder states of the wrong width
            model.decoder(net_input["prev_output_tokens"],
                          encoder_out={"encoder_out": [torch.zeros(5, 3, 7)],
                                       "encoder_padding_mask": []})
        with pytest.raises(TypeError, match="positions"):
            encoder_layer(h, None)
        with pytest.raises(TypeError, match="positions"):
            decoder_layer(h)


def test_activation_checkpointing_gives_identical_outputs_and_gradients():
    """checkpoint_wrapper re-runs each layer in the backward pass, after its stack's forward
    has returned; PE must still be there."""
    def loss_and_grads(model, batch):
        model.train()
        logits, _ = model(**batch["net_input"])
        F.cross_entropy(logits.transpose(1, 2), batch["target"]).backward()
        return logits, {name: p.grad for name, p in model.named_parameters()}

    plain, task = build()
    checkpointed, _ = build(checkpoint_activations=True)
    assert hasattr(checkpointed.encoder.layers[0], "precheckpoint_forward")
    assert hasattr(checkpointed.decoder.layers[0], "precheckpoint_forward")
    batch = batch_for(task)
    expected_logits, expected_grads = loss_and_grads(plain, batch)
    logits, grads = loss_and_grads(checkpointed, batch)
    torch.testing.assert_close(logits, expected_logits, atol=0, rtol=0)
    torch.testing.assert_close(grads, expected_grads, atol=0, rtol=0)
