"""transformer_dpe: the DPE network's place in the encoder, its output, presets, reloads."""
from argparse import Namespace
from types import SimpleNamespace

import pytest
import torch
from fairseq.data import Dictionary
from fairseq.models.transformer import TransformerModel, transformer_iwslt_de_en

from xlpe_fairseq.models.transformer_dpe import (
    TransformerDPEModel,
    transformer_dpe_iwslt_de_en,
    transformer_dpe_wmt_en_de,
    transformer_dpe_wmt_en_de_big,
)

SMALL = dict(encoder_embed_dim=16, decoder_embed_dim=16, encoder_ffn_embed_dim=32,
             decoder_ffn_embed_dim=32, encoder_attention_heads=2, decoder_attention_heads=2,
             encoder_layers=2, decoder_layers=1, dropout=0.0)


def tiny_task():
    vocab = Dictionary()
    for i in range(12):
        vocab.add_symbol(f"w{i}")
    return SimpleNamespace(source_dictionary=vocab, target_dictionary=vocab)


def build(task, architecture=transformer_dpe_iwslt_de_en, model_class=TransformerDPEModel, **overrides):
    torch.manual_seed(1)
    args = Namespace(**{**SMALL, **overrides})
    architecture(args)
    return model_class.build_model(args, task).eval()


def tiny_batch(vocab):
    pad, eos = vocab.pad(), vocab.eos()
    src_tokens = torch.LongTensor([[5, 6, 7, 8, eos], [pad, pad, 9, 10, eos]])
    prev_output_tokens = torch.LongTensor([[eos, 5, 6], [eos, 7, pad]])
    return dict(src_tokens=src_tokens, src_lengths=torch.LongTensor([5, 3]),
                prev_output_tokens=prev_output_tokens)


def test_presets_follow_the_paper():
    args = Namespace()
    transformer_dpe_iwslt_de_en(args)
    assert (args.encoder_embed_dim, args.encoder_ffn_embed_dim, args.encoder_layers,
            args.decoder_layers, args.encoder_attention_heads, args.dpe_layers) == (256, 1024, 2, 2, 2, 2)
    base, big = Namespace(), Namespace()
    transformer_dpe_wmt_en_de(base)
    transformer_dpe_wmt_en_de_big(big)
    assert (base.encoder_embed_dim, base.encoder_layers, base.dpe_layers) == (512, 6, 2)
    assert (big.encoder_embed_dim, big.encoder_attention_heads, big.dpe_layers) == (1024, 16, 2)
    assert base.dpe_encoder_input == "dpe_only"


@pytest.mark.parametrize("output,projection", [("layers", 0), ("residual", 16 * 16 + 16)])
def test_adds_exactly_n_encoder_layers_of_parameters(output, projection):
    task = tiny_task()
    dpe = build(task, dpe_layers=3, dpe_output=output)
    plain = build(task, architecture=transformer_iwslt_de_en, model_class=TransformerModel)
    layer = sum(p.numel() for p in plain.encoder.layers[0].parameters())
    extra = sum(p.numel() for p in dpe.parameters()) - sum(p.numel() for p in plain.parameters())
    assert extra == 3 * layer + projection, (
        f"DPE ({output}) should add 3 encoder layers ({3 * layer} params) and "
        f"{projection} for its output projection, added {extra}")


def test_order_predictions_come_out_with_the_decoder_output():
    task = tiny_task()
    model = build(task)
    batch = tiny_batch(task.source_dictionary)
    logits, extra = model(**batch)
    assert logits.shape == (2, 3, len(task.target_dictionary))
    assert extra["order_predictions"].shape == (2, 5, 16), "r_i: one vector per source token"


@pytest.mark.parametrize("encoder_input", ["position_and_dpe", "dpe_only"])
def test_first_encoder_layer_reads_word_plus_positions(encoder_input):
    """The encoder reads w + r (dpe_only, the default and the public code) or w + p + r."""
    task = tiny_task()
    model = build(task, dpe_encoder_input=encoder_input)
    batch = tiny_batch(task.source_dictionary)
    encoder = model.encoder
    out = encoder(batch["src_tokens"], batch["src_lengths"])
    r = out["order_predictions"][0]
    w = encoder.embed_scale * encoder.embed_tokens(batch["src_tokens"])
    p = encoder.embed_positions(batch["src_tokens"])
    x = w + r + (p if encoder_input == "position_and_dpe" else 0)
    padding = batch["src_tokens"].eq(encoder.padding_idx)
    x = (x * (~padding).unsqueeze(-1)).transpose(0, 1)
    for layer in encoder.layers:
        x = layer(x, encoder_padding_mask=padding)
    assert torch.allclose(out["encoder_out"][0], x, atol=1e-5)


@pytest.mark.parametrize("output,steps", [("layers", 0), ("residual", 1)])
def test_order_loss_gradient_reaches_the_dpe_layers(output, steps):
    """The residual output's projection starts at zero, which holds the layers' gradient back
    for exactly one step: after it the order loss trains the layers too."""
    task = tiny_task()
    model = build(task, dpe_output=output).train()
    batch = tiny_batch(task.source_dictionary)
    targets = model.order_targets(torch.LongTensor([[1, 0, 3, 2, 4], [-1, -1, 1, 0, 2]]))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps + 1):
        optimizer.zero_grad()
        _, extra = model(**batch)
        ((extra["order_predictions"] - targets) ** 2).sum().backward()
        optimizer.step()
    for name, param in model.encoder.dpe_layers.named_parameters():
        assert param.grad is not None and param.grad.abs().sum() > 0, f"no gradient in dpe_layers.{name}"


def test_state_dict_reload_gives_identical_outputs(tmp_path):
    task = tiny_task()
    model = build(task)
    batch = tiny_batch(task.source_dictionary)
    torch.save(model.state_dict(), tmp_path / "model.pt")
    reloaded = build(task)
    torch.manual_seed(99)
    for param in reloaded.parameters():
        torch.nn.init.normal_(param)
    reloaded.load_state_dict(torch.load(tmp_path / "model.pt"))
    assert torch.equal(model(**batch)[0], reloaded(**batch)[0])


def test_learned_positions_are_rejected():
    with pytest.raises(ValueError, match="needs them as the encoder's positions"):
        build(tiny_task(), encoder_learned_pos=True)


def test_residual_output_starts_at_the_own_position_and_the_transformer_input():
    """--dpe-output residual: r = p + W·h with W = 0 at init, so the network begins with the
    own-position answer and, under dpe_only, the encoder reads the Transformer's w + p."""
    task = tiny_task()
    model = build(task, dpe_output="residual", dpe_encoder_input="dpe_only")
    batch = tiny_batch(task.source_dictionary)
    encoder = model.encoder
    out = encoder(batch["src_tokens"], batch["src_lengths"])
    p = encoder.embed_positions(batch["src_tokens"])
    assert torch.equal(out["order_predictions"][0], p), "r_i must start at p_i"
    torch.manual_seed(1)
    plain = build(task, architecture=transformer_iwslt_de_en, model_class=TransformerModel)
    plain.encoder.load_state_dict({k: v for k, v in encoder.state_dict().items()
                                   if not k.startswith(("dpe_", "target_order"))})
    expected = plain.encoder(batch["src_tokens"], batch["src_lengths"])["encoder_out"][0]
    assert torch.allclose(out["encoder_out"][0], expected, atol=1e-6)


def test_residual_output_learns_from_the_order_loss():
    task = tiny_task()
    model = build(task, dpe_output="residual").train()
    batch = tiny_batch(task.source_dictionary)
    _, extra = model(**batch)
    targets = model.order_targets(torch.LongTensor([[1, 0, 3, 2, 4], [-1, -1, 1, 0, 2]]))
    ((extra["order_predictions"] - targets) ** 2).sum().backward()
    assert model.encoder.dpe_projection.weight.grad.abs().sum() > 0, \
        "the zero-initialized projection must receive the order loss's gradient"


def test_dpe_defaults():
    """Chosen by measurement (docs/studies/dpe-bible-he-en.md): with w + p + r the encoder
    reads the position twice and DPE lost 2 BLEU; the residual output beats the own-position
    answer."""
    for preset in (transformer_dpe_iwslt_de_en, transformer_dpe_wmt_en_de,
                   transformer_dpe_wmt_en_de_big):
        args = Namespace()
        preset(args)
        assert (args.dpe_output, args.dpe_encoder_input) == ("residual", "dpe_only"), preset


def test_unknown_output_is_rejected():
    with pytest.raises(ValueError, match="--dpe-output must be one of"):
        build(tiny_task(), dpe_output="other")
