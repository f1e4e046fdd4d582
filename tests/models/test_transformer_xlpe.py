"""transformer_xlpe (Ding et al. 2020): Eq. 7-11 against fairseq's transformer, padding,
generation, errors and reloads."""
from argparse import Namespace

import pytest
import torch
import torch.nn.functional as F
from fairseq.models.transformer import transformer_iwslt_de_en, transformer_wmt_en_de_big
from fairseq.modules import SinusoidalPositionalEmbedding
from fairseq.sequence_generator import SequenceGenerator

from models.model_builders import TINY, build_model, identity_reorder, make_batch
from xlpe_fairseq.plugin_errors import ReorderPositionsError
from xlpe_fairseq.modules.input_xl_positions import SATURATION, UV_LR_SCALE
from xlpe_fairseq.models.transformer_xlpe import (
    TransformerXLPEModel,
    transformer_xlpe,
    transformer_xlpe_iwslt_de_en,
    transformer_xlpe_wmt_en_de,
    transformer_xlpe_wmt_en_de_big,
)

ARCH = "transformer_xlpe_iwslt_de_en"
SOURCES = ["w1 w2 w3 w4 w5", "w6 w7", "w8 w9 w10"]
TARGETS = ["w5 w4 w3", "w7 w6 w1 w2", "w9 w8"]
REORDER = [[4, 0, 3, 1, 2], [1, 0], [2, 0, 1]]
MODES = [("inxl", 0), ("headxl", 2), ("combination", 2)]


def batch_for(task, reorder=REORDER, **kwargs):
    return make_batch(task.source_dictionary, SOURCES, TARGETS, reorder, **kwargs)


def plain_inputs(batch):
    return {k: v for k, v in batch["net_input"].items() if k != "reorder_positions"}


def test_presets():
    args = Namespace()
    transformer_xlpe(args)
    assert (args.xlpe_mode, args.xlpe_heads, args.encoder_embed_dim) == ("combination", 4, 512)
    xlpe_iwslt, fairseq_iwslt = Namespace(), Namespace()
    transformer_xlpe_iwslt_de_en(xlpe_iwslt)
    transformer_iwslt_de_en(fairseq_iwslt)
    added = ("xlpe", "self_attention_positions")
    assert {k: v for k, v in vars(xlpe_iwslt).items() if not k.startswith(added)} == vars(
        fairseq_iwslt
    )
    assert xlpe_iwslt.xlpe_heads == 1, "1 of 4 heads: the paper's share, 4 of 16"
    base, big, fairseq_big = Namespace(), Namespace(), Namespace()
    transformer_xlpe_wmt_en_de(base)
    transformer_xlpe_wmt_en_de_big(big)
    transformer_wmt_en_de_big(fairseq_big)
    assert (base.encoder_embed_dim, base.encoder_attention_heads, base.xlpe_heads) == (512, 8, 4)
    assert {k: v for k, v in vars(big).items() if not k.startswith(added)} == vars(fairseq_big)
    assert (big.encoder_attention_heads, big.xlpe_heads) == (16, 4)


def test_tau_zero_is_exactly_fairseq_transformer():
    model, task = build_model(ARCH, xlpe_mode="headxl", xlpe_heads=0)
    plain, _ = build_model("transformer_iwslt_de_en")
    assert set(model.state_dict()) == set(plain.state_dict()), "HeadXL adds no parameters"
    plain.load_state_dict(model.state_dict())
    batch = batch_for(task)
    assert torch.equal(model(**batch["net_input"])[0], plain(**plain_inputs(batch))[0])


@pytest.mark.parametrize("normalize_before", [False, True])
@pytest.mark.parametrize("tau", [1, 2, 3, 4])
def test_identity_positions_reduce_headxl_to_transformer(tau, normalize_before):
    """PE_XL = PE_abs when pos_XL = pos_abs: a check that positions index fairseq's table
    exactly (left padding included), through the split-projection attention."""
    model, task = build_model(ARCH, xlpe_mode="headxl", xlpe_heads=tau,
                              encoder_normalize_before=normalize_before)
    plain, _ = build_model("transformer_iwslt_de_en", encoder_normalize_before=normalize_before)
    plain.load_state_dict(model.state_dict())
    batch = batch_for(task, reorder=identity_reorder(SOURCES))
    assert torch.allclose(model(**batch["net_input"])[0], plain(**plain_inputs(batch))[0],
                          atol=1e-6)
    # and the positions do matter once they differ from the monotone order
    reordered = batch_for(task)
    assert not torch.allclose(model(**reordered["net_input"])[0],
                              plain(**plain_inputs(reordered))[0], atol=1e-4)


@pytest.mark.parametrize("tau", [1, 3])
def test_first_tau_heads_read_z_xl_and_the_rest_z_abs(tau):
    """Eq. 10-11: with W_O = I the output's channel blocks are the heads' outputs."""
    model, _ = build_model(ARCH, xlpe_mode="headxl", xlpe_heads=tau)
    attention = model.encoder.layers[0].self_attn
    with torch.no_grad():
        attention.out_proj.weight.copy_(torch.eye(16))
        attention.out_proj.bias.zero_()
    z_abs, z_xl = torch.randn(5, 2, 16), torch.randn(5, 2, 16)
    padding = torch.tensor([[False] * 5, [True, True, False, False, False]])
    out, _ = attention(z_abs, z_abs, z_abs, key_padding_mask=padding, need_weights=False,
                       query_xl=z_xl)
    xl_only, _ = attention(z_xl, z_xl, z_xl, key_padding_mask=padding, need_weights=False)
    abs_only, _ = attention(z_abs, z_abs, z_abs, key_padding_mask=padding, need_weights=False)
    split = tau * attention.head_dim
    assert torch.allclose(out[..., :split], xl_only[..., :split], atol=1e-6)
    assert torch.allclose(out[..., split:], abs_only[..., split:], atol=1e-6)


def sinusoid_at(positions, dim, padding_idx):
    """PE at 0-based ``positions`` straight from fairseq's table (-1 -> zero row)."""
    table = SinusoidalPositionalEmbedding.get_embedding(64, dim, padding_idx)
    return table[positions + padding_idx + 1]


def expected_encoder_out(encoder, batch, z, z_xl=None):
    padding = batch["net_input"]["src_tokens"].eq(encoder.padding_idx)
    x = (z * (~padding).unsqueeze(-1)).transpose(0, 1)
    for index, layer in enumerate(encoder.layers):
        if index == 0 and z_xl is not None:
            z_xl = (z_xl * (~padding).unsqueeze(-1)).transpose(0, 1)
            x = layer(x, encoder_padding_mask=padding, x_xl=z_xl)
        else:
            x = layer(x, encoder_padding_mask=padding)
    return x


@pytest.mark.parametrize("mode", ["inxl", "combination"])
def test_pe_in_is_tanh_of_pe_abs_u_plus_pe_xl_v(mode):
    """Eq. 7-8 (InXL: Z = X + PE_IN) and footnote 2 (Combination: the XL heads read it)."""
    model, task = build_model(ARCH, xlpe_mode=mode, xlpe_heads=2)
    encoder = model.encoder
    batch = batch_for(task)
    src_tokens = batch["net_input"]["src_tokens"]
    x = encoder.embed_scale * encoder.embed_tokens(src_tokens)
    pe_abs = encoder.embed_positions(src_tokens)
    pe_xl = sinusoid_at(batch["net_input"]["reorder_positions"], 16, encoder.padding_idx)
    pe_in = torch.tanh(pe_abs @ encoder.pe_in.u.weight.T + pe_xl @ encoder.pe_in.v.weight.T)
    if mode == "inxl":
        expected = expected_encoder_out(encoder, batch, x + pe_in)
    else:
        expected = expected_encoder_out(encoder, batch, x + pe_abs, z_xl=x + pe_in)
    net_input = batch["net_input"]
    out = encoder(net_input["src_tokens"], net_input["src_lengths"],
                  reorder_positions=net_input["reorder_positions"])
    assert torch.allclose(out["encoder_out"][0], expected, atol=1e-6)


@pytest.mark.parametrize("mode,tau", MODES)
def test_parameter_count(mode, tau):
    """HeadXL adds nothing; PE_IN adds U and V (d x d each, no bias)."""
    model, _ = build_model(ARCH, xlpe_mode=mode, xlpe_heads=tau)
    plain, _ = build_model("transformer_iwslt_de_en")
    extra = sum(p.numel() for p in model.parameters()) - sum(p.numel() for p in plain.parameters())
    assert extra == (0 if mode == "headxl" else 2 * 16 * 16)


@pytest.mark.parametrize("mode,tau", MODES)
def test_forward_backward_reaches_every_parameter(mode, tau):
    model, task = build_model(ARCH, xlpe_mode=mode, xlpe_heads=tau, dropout=0.1,
                              attention_dropout=0.1)
    model.train()
    batch = batch_for(task)
    logits, _ = model(**batch["net_input"])
    loss = F.cross_entropy(logits.flatten(0, 1), batch["target"].flatten(),
                           ignore_index=task.target_dictionary.pad())
    loss.backward()
    for name, param in model.named_parameters():
        assert param.grad is not None, f"no gradient for {name}"
        assert torch.isfinite(param.grad).all(), f"non-finite gradient for {name}"
    watched = [f"encoder.layers.0.self_attn.{proj}.{w}" for proj in
               ("q_proj", "k_proj", "v_proj", "out_proj") for w in ("weight", "bias")]
    if mode != "headxl":
        watched += ["encoder.pe_in.u.weight", "encoder.pe_in.v.weight"]
    grads = dict(model.named_parameters())
    for name in watched:
        assert grads[name].grad.abs().sum() > 0, f"zero gradient for {name}"


@pytest.mark.parametrize("mode,tau", MODES + [("headxl", 4)])
def test_left_and_right_padding_agree(mode, tau):
    model, task = build_model(ARCH, xlpe_mode=mode, xlpe_heads=tau)
    left = batch_for(task, left_pad_source=True)
    right = batch_for(task, left_pad_source=False)
    assert torch.equal(left["id"], right["id"])
    assert not torch.equal(left["net_input"]["src_tokens"], right["net_input"]["src_tokens"])
    target_padding = left["target"].eq(task.target_dictionary.pad())
    out_left = model(**left["net_input"])[0][~target_padding]
    out_right = model(**right["net_input"])[0][~target_padding]
    assert torch.allclose(out_left, out_right, atol=1e-5)


@pytest.mark.parametrize("overrides,message", [
    (dict(xlpe_mode="headxl", xlpe_heads=5), r"between 0 and --encoder-attention-heads \(4\)"),
    (dict(xlpe_mode="combination", xlpe_heads=-1), "between 0 and"),
    (dict(xlpe_mode="combination", xlpe_heads=0), "never uses PE_IN"),
    (dict(encoder_learned_pos=True), "sinusoid table"),
])
def test_bad_configurations_are_rejected(overrides, message):
    with pytest.raises(ValueError, match=message):
        build_model(ARCH, **overrides)


def test_missing_or_misshaped_positions_are_rejected():
    model, task = build_model(ARCH)
    batch = batch_for(task)
    with pytest.raises(ReorderPositionsError, match=r"\{split\}.reorder files"):
        model(**plain_inputs(batch))
    wrong = batch["net_input"]["reorder_positions"][:, 1:]
    with pytest.raises(ReorderPositionsError, match="shaped like src_tokens"):
        model(**plain_inputs(batch), reorder_positions=wrong)


def generate(model, task, batch):
    generator = SequenceGenerator([model], task.target_dictionary, beam_size=2, max_len_b=6)
    return generator.generate([model], batch)


@pytest.mark.parametrize("mode,tau", MODES)
def test_beam_search_reads_positions_from_net_input(mode, tau):
    # random U and V, so that PE_XL reaches the encoder before any training
    model, task = build_model(ARCH, xlpe_mode=mode, xlpe_heads=tau, xlpe_init="xavier")
    hypotheses = generate(model, task, batch_for(task))
    assert len(hypotheses) == len(SOURCES) and all(len(h) == 2 for h in hypotheses)
    assert all(torch.isfinite(h["score"]) for beam in hypotheses for h in beam)
    monotone = generate(model, task, batch_for(task, reorder=identity_reorder(SOURCES)))
    assert any(not torch.isclose(a[0]["score"], b[0]["score"])
               for a, b in zip(hypotheses, monotone)), "positions must reach the encoder"
    without = batch_for(task)
    del without["net_input"]["reorder_positions"]
    with pytest.raises(ReorderPositionsError):
        generate(model, task, without)


@pytest.mark.parametrize("mode,tau", MODES)
def test_state_dict_round_trip(tmp_path, mode, tau):
    model, task = build_model(ARCH, xlpe_mode=mode, xlpe_heads=tau)
    torch.save(model.state_dict(), tmp_path / "model.pt")
    reloaded, _ = build_model(ARCH, seed=99, xlpe_mode=mode, xlpe_heads=tau)
    batch = batch_for(task)
    assert not torch.equal(model(**batch["net_input"])[0], reloaded(**batch["net_input"])[0])
    reloaded.load_state_dict(torch.load(tmp_path / "model.pt"))
    assert torch.equal(model(**batch["net_input"])[0], reloaded(**batch["net_input"])[0])


def test_model_declares_positions_as_input():
    assert TransformerXLPEModel.reorder_positions_role == "input"


@pytest.mark.parametrize("mode", ["inxl", "combination"])
def test_identity_init_starts_as_the_transformer_input_and_learns_v(mode):
    """--xlpe-init identity, U = I, V = 0: PE_IN = tanh(PE_abs), whatever the reorder
    positions, and V still gets a gradient, so PE_XL enters as training goes."""
    model, task = build_model(ARCH, xlpe_mode=mode, xlpe_heads=2, xlpe_init="identity")
    pe_in = model.encoder.pe_in
    assert torch.equal(pe_in.u.weight, torch.eye(16)), "U must start as the identity"
    assert not pe_in.v.weight.any(), "V must start at zero"
    batch = batch_for(task)
    src_tokens = batch["net_input"]["src_tokens"]
    expected = torch.tanh(model.encoder.embed_positions(src_tokens))
    got = pe_in(*model.encoder.position_sinusoids(src_tokens,
                                                 batch["net_input"]["reorder_positions"]))
    assert torch.allclose(got, expected, atol=1e-6), "PE_IN must start as tanh(PE_abs)"
    monotone = batch_for(task, reorder=identity_reorder(SOURCES))
    with torch.no_grad():
        reordered, _ = model(**batch["net_input"])
        plain, _ = model(**monotone["net_input"])
    assert torch.allclose(reordered, plain, atol=1e-6), "PE_XL must not act before V learns"
    model.train()
    logits, _ = model(**batch["net_input"])
    F.cross_entropy(logits.flatten(0, 1), batch["target"].flatten()).backward()
    assert pe_in.v.weight.grad.abs().sum() > 0, "V must get a gradient from zero"


@pytest.mark.parametrize("mode", ["inxl", "combination"])
def test_default_xavier_init_reads_the_xl_position_from_the_first_update(mode):
    """The default draws U and V Xavier-uniform: PE_IN = tanh(PE_abs U + PE_XL V) depends on
    the reorder positions before any training step, with the tanh's inputs mostly unsaturated."""
    args = Namespace()
    transformer_xlpe_iwslt_de_en(args)
    assert args.xlpe_init == "xavier", "the presets default to the xavier init"
    model, task = build_model(ARCH, xlpe_mode=mode, xlpe_heads=2)
    bound = (6 / 32) ** 0.5
    for weight in (model.encoder.pe_in.u.weight, model.encoder.pe_in.v.weight):
        assert weight.abs().max() <= bound and weight.std() > bound / 4, \
            "the default must draw U and V Xavier-uniform"
    batch = batch_for(task)
    monotone = batch_for(task, reorder=identity_reorder(SOURCES))
    with torch.no_grad():
        reordered, _ = model(**batch["net_input"])
        plain, _ = model(**monotone["net_input"])
    assert not torch.allclose(reordered, plain, atol=1e-4), \
        "with random V the reordered positions must change the output from the start"
    pre = model.encoder.pe_in.pre_activation(*model.encoder.position_sinusoids(
        batch["net_input"]["src_tokens"], batch["net_input"]["reorder_positions"]))
    assert float((pre.abs() > SATURATION).double().mean()) < 0.2, \
        "Xavier U and V must start PE_IN mostly unsaturated"


def test_uv_lr_scale_reaches_pe_in_and_keeps_the_identity_start():
    model, task = build_model(ARCH, xlpe_mode="inxl", xlpe_uv_lr_scale=0.25, xlpe_init="identity")
    pe_in = model.encoder.pe_in
    assert pe_in.lr_scale == 0.25, "--xlpe-uv-lr-scale must reach InXL's U and V"
    assert torch.allclose(pe_in.u.weight * 0.25, torch.eye(pe_in.u.weight.size(0))), \
        "U is stored divided by the scale, so that U = I at the start"


@pytest.mark.parametrize("flags, scale", [([], UV_LR_SCALE), (["--xlpe-uv-lr-scale", "1"], 1.0)])
def test_fairseq_train_slows_u_and_v_by_default_and_1_restores_the_paper(flags, scale):
    from fairseq import options

    args = options.parse_args_and_arch(options.get_training_parser(), [
        "data-bin", "--task", "translation_reorder", "--arch", ARCH, *flags])
    assert args.xlpe_uv_lr_scale == scale, \
        f"fairseq-train {' '.join(flags) or 'without --xlpe-uv-lr-scale'} must train at {scale}"


@pytest.mark.parametrize("saved, trained_at", [({}, 1.0), ({"xlpe_uv_lr_scale": 0.1}, 0.1)],
                         ids=["before-the-option", "at-the-old-default"])
def test_a_checkpoint_reloads_at_the_scale_it_was_trained_at(saved, trained_at):
    """A checkpoint from before the option holds no --xlpe-uv-lr-scale (its U and V were
    stored undivided); one trained at the default before 0.25 holds 0.1."""
    trained, task = build_model(ARCH, xlpe_mode="inxl", xlpe_uv_lr_scale=trained_at)
    with torch.no_grad():
        trained.encoder.pe_in.v.weight.normal_()
    saved_options = Namespace(arch=ARCH, **TINY, xlpe_mode="inxl", **saved)
    transformer_xlpe_iwslt_de_en(saved_options)
    reloaded = TransformerXLPEModel.build_model(saved_options, task).eval()
    reloaded.load_state_dict(trained.state_dict())
    batch = batch_for(task)
    assert torch.equal(reloaded(**batch["net_input"])[0], trained(**batch["net_input"])[0]), \
        f"a checkpoint trained at {trained_at} must decode as it did, not at today's default"


def test_xl_warmup_reaches_pe_in_through_fairseq_s_update_hook():
    model, _ = build_model(ARCH, xlpe_mode="inxl", xlpe_xl_warmup_updates=100)
    pe_in = model.encoder.pe_in
    assert pe_in.xl_weight == 0.0, "with --xlpe-xl-warmup-updates InXL starts without PE_XL V"
    model.set_num_updates(40)
    assert pe_in.xl_weight == 0.4, \
        "fairseq's model.set_num_updates (train steps, checkpoint loads) must reach PE_IN"
    args = Namespace()
    transformer_xlpe_iwslt_de_en(args)
    assert args.xlpe_xl_warmup_updates == 0, "the presets keep Eq. 7 from the first update"


@pytest.mark.parametrize("mode", ["inxl", "combination"])
@pytest.mark.parametrize("init", ["identity", "xavier"])
def test_same_seed_starts_every_shared_weight_where_the_transformer_does(mode, init):
    """U and V draw nothing from the global stream, so a same-seed comparison with the
    Transformer differs in the input position alone (the decoder is built after them)."""
    transformer, _ = build_model("transformer_iwslt_de_en", seed=3)
    xlpe, _ = build_model(ARCH, seed=3, xlpe_mode=mode, xlpe_heads=2, xlpe_init=init)
    ours = xlpe.state_dict()
    differing = [name for name, weight in transformer.state_dict().items()
                 if not torch.equal(weight, ours[name])]
    assert not differing, f"{mode} ({init}) starts these weights elsewhere: {differing[:4]}"
    again, _ = build_model(ARCH, seed=3, xlpe_mode=mode, xlpe_heads=2, xlpe_init=init)
    other, _ = build_model(ARCH, seed=4, xlpe_mode=mode, xlpe_heads=2, xlpe_init=init)
    u = xlpe.encoder.pe_in.u.weight
    assert torch.equal(u, again.encoder.pe_in.u.weight), "U must repeat with the seed"
    assert init == "identity" or not torch.equal(u, other.encoder.pe_in.u.weight), \
        "Xavier U must change with the seed"


def test_unknown_init_is_refused():
    with pytest.raises(Exception, match="--xlpe-init"):
        build_model(ARCH, xlpe_mode="inxl", xlpe_init="orthogonal")


@pytest.mark.parametrize("mode,tau", MODES)
def test_forward_reports_input_statistics_where_pe_in_exists(mode, tau):
    model, task = build_model(ARCH, xlpe_mode=mode, xlpe_heads=tau, xlpe_init="identity")
    batch = batch_for(task)
    _, extra = model(**batch["net_input"])
    if mode == "headxl":
        assert "xlpe_input_statistics" not in extra, "HeadXL has no PE_IN to report"
        return
    net_input = batch["net_input"]
    alone = model.encoder(net_input["src_tokens"], net_input["src_lengths"],
                          reorder_positions=net_input["reorder_positions"])
    assert alone["xlpe_input_statistics"] == [], "beam search's encoder calls compute none"
    in_norm, embed_norm, saturated, tokens, units = extra["xlpe_input_statistics"].tolist()
    real = batch["net_input"]["src_tokens"].ne(model.encoder.padding_idx)
    assert tokens == real.sum() and units == tokens * 16
    pe_in = model.encoder.pe_in(*model.encoder.position_sinusoids(
        batch["net_input"]["src_tokens"], batch["net_input"]["reorder_positions"]))
    assert in_norm == pytest.approx(float(pe_in[real].norm(dim=-1).sum()), rel=1e-5)
    assert saturated == 0, "tanh(PE_abs) has inputs within [-1, 1]: nothing saturated"
    assert embed_norm > 0

