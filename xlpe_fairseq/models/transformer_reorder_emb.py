"""Reordering Embeddings (Chen, Wang, Utiyama, Sumita 2019, §4, Eq. 6–9).

Every layer n of the chosen stack(s) (``--reorder-emb``, §5: encoder, decoder or both;
default both, the paper's best system and the only one it scales to Transformer big) runs::

    H̄ⁿ  = LN(SelfAttn(Hⁿ⁻¹) + Hⁿ⁻¹)
    PPⁿ = sigmoid(Vⁿ · tanh(Wⁿ·Hⁿ⁻¹ + W̄ⁿ·H̄ⁿ))        (Eq. 6)
    Cⁿ  = LN(H̄ⁿ + PE ⊙ PPⁿ)                         (Eq. 7, 8)
    Hⁿ  = LN(FFN(Cⁿ) + H̄ⁿ)                          (Eq. 9: the residual is H̄ⁿ, not Cⁿ)

``PE`` is the same sinusoid the embedding layer adds (fairseq's ``embed_positions``, so
left-padded sources keep ``utils.make_positions`` numbering). Choices this module makes:

* No biases in W, W̄, V: Eq. 6 has none, and the paper's parameter counts (Tables 2, 3:
  +4.7M for 6 layers at d=512 = 6·3·512²) leave no room for them. Eq. 8's LN is new, so an
  affected layer gains exactly 3·d² + 2·d parameters.
* Post-norm only: Eq. 9 places every LN after its residual, as fairseq's default does. With
  pre-norm there is no H̄ⁿ to gate and no LN for Eq. 8, so
  ``--{encoder,decoder}-normalize-before`` is rejected for a stack that carries REs.
* No dropout on ``PE ⊙ PP``: Eq. 8 adds it undropped (§6.3's residual dropout is for sublayers).
* Decoder: the block sits between masked self-attention and encoder attention (Fig. 2).
  Following Eq. 9, the RE only shapes the next sublayer's input: encoder attention reads Cⁿ
  and its residual is H̄ⁿ.
* ``--reorder-emb-mode additional_pe`` is the paper's control "Additional PEs" (§6.2, Table 1):
  Cⁿ = LN(H̄ⁿ + PE) in the same place, with no W, W̄, V.
* ``--self-attention-positions relpe|rope|alibi|t5_bias`` adds that scheme
  (:mod:`.transformer_positions`) to every self-attention layer: REs on top of relative or
  rotary positions. PE stays at the input and in Eq. 7, which reads it.
"""
from contextlib import contextmanager
from typing import Callable, Dict, List, Optional, Tuple

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import (
    TransformerDecoder,
    TransformerEncoder,
    TransformerConfig,
    TransformerModel,
    base_architecture,
    transformer_iwslt_de_en,
    transformer_wmt_en_de_big,
)
from fairseq.modules import LayerNorm
from fairseq.modules.transformer_layer import (
    TransformerDecoderLayerBase,
    TransformerEncoderLayerBase,
)
from torch import Tensor, nn

from ..plugin_errors import OptionError
from .layer_wrapping import wrap_layer
from .transformer_positions import (
    add_self_attention_positions,
    add_self_attention_positions_args,
    self_attention_positions_defaults,
)

STACKS = ("encoder", "decoder", "both")
MODES = ("gated", "additional_pe")


class ReorderingEmbedding(nn.Module):
    """``C = LN(H̄ + PE ⊙ PP)`` with ``PP`` from Eq. 6 (``gated``), or ``C = LN(H̄ + PE)``
    (the "Additional PEs" control, no parameters but the LN)."""

    def __init__(self, embed_dim: int, gated: bool, export: bool = False):
        super().__init__()
        self.embed_dim = embed_dim
        if gated:
            self.w = nn.Linear(embed_dim, embed_dim, bias=False)
            self.w_bar = nn.Linear(embed_dim, embed_dim, bias=False)
            self.v = nn.Linear(embed_dim, embed_dim, bias=False)
            for linear in (self.w, self.w_bar, self.v):
                # fairseq's initialisation for its own projections
                nn.init.xavier_uniform_(linear.weight)
        else:
            self.w = self.w_bar = self.v = None
        self.layer_norm = LayerNorm(embed_dim, export=export)

    def forward(self, h_prev: Tensor, h_bar: Tensor, positions: Tensor) -> Tensor:
        """``h_prev`` = Hⁿ⁻¹ and ``h_bar`` = H̄ⁿ, ``(T, B, C)``; ``positions`` = PE,
        ``(T, B, C)`` or broadcastable to it."""
        if self.v is None:
            return self.layer_norm(h_bar + positions)
        # W·Hⁿ⁻¹ + W̄·H̄ⁿ in one GEMM with accumulation (addmm's beta term), instead of a
        # second GEMM plus an add or a copy into a concatenated input
        flat = (-1, self.embed_dim)
        mixed = torch.addmm(self.w_bar(h_bar).view(flat), h_prev.reshape(flat), self.w.weight.t())
        penalty = torch.sigmoid(self.v(torch.tanh(mixed))).view_as(h_bar)  # PPⁿ, Eq. 6
        return self.layer_norm(torch.addcmul(h_bar, positions, penalty))  # Eq. 7, 8


def _reject_pre_norm(normalize_before: bool, side: str):
    if normalize_before:
        raise OptionError(
            f"transformer_reorder_emb follows Eq. 9 of Chen et al. (2019), which is post-norm: "
            f"drop --{side}-normalize-before, or keep REs off the {side} (--reorder-emb)"
        )


def _reject_unsupported_positions(cfg, side: str, learned_pos: bool):
    if learned_pos or cfg.no_token_positional_embeddings:
        raise OptionError(
            f"Reordering Embeddings gate the sinusoidal PE (Eq. 7): the {side} needs them as "
            f"its positions (drop --{side}-learned-pos and --no-token-positional-embeddings)"
        )


def _add_and_norm(layer: nn.Module, x: Tensor, residual: Tensor, layer_norm: nn.Module) -> Tensor:
    """fairseq's post-norm sublayer ending: dropout, residual add, LN."""
    return layer_norm(layer.residual_connection(layer.dropout_module(x), residual))


@contextmanager
def _layer_calls_rewritten(
    layers: nn.ModuleList, rewrite: Callable[[tuple, dict], Tuple[tuple, dict]]
):
    """Until exit, every call of an entry of ``layers`` (fairseq's layer loop) goes through
    ``rewrite(args, kwargs) -> (args, kwargs)``: how PE reaches the RE layers while fairseq's
    own ``forward_scriptable``/``extract_features_scriptable`` run the stack.

    PE becomes an argument of the call rather than state left on the layer because
    ``checkpoint_wrapper`` re-runs a layer's forward in the backward pass, after this context
    has closed, with the arguments it saved. The hooks sit on the entries of ``layers``, which
    hand their arguments on unchanged: the layer itself (``checkpoint_wrapper`` patches its
    ``forward`` in place; ``fsdp_wrap`` returns it as is outside FSDP) or FSDP's wrapper."""
    handles = [
        layer.register_forward_pre_hook(
            lambda _layer, args, kwargs: rewrite(args, kwargs), with_kwargs=True
        )
        for layer in layers
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


class ReorderEmbEncoderLayer(TransformerEncoderLayerBase):
    """fairseq's encoder layer with the RE block between self-attention and FFN (Eq. 9)."""

    def __init__(self, cfg, gated: bool, return_fc: bool = False):
        _reject_pre_norm(cfg.encoder.normalize_before, "encoder")
        super().__init__(cfg, return_fc=return_fc)
        self.reorder_emb = ReorderingEmbedding(self.embed_dim, gated, export=cfg.export)

    def forward(self, x, encoder_padding_mask: Optional[Tensor], positions: Tensor):
        """``x`` = Hⁿ⁻¹ and ``positions`` = PE, both ``(T, B, C)``; in a model,
        ``ReorderEmbEncoder`` adds ``positions`` to fairseq's call."""
        residual = x
        x, _ = self.self_attn(
            query=x, key=x, value=x, key_padding_mask=encoder_padding_mask, need_weights=False
        )
        h_bar = _add_and_norm(self, x, residual, self.self_attn_layer_norm)
        x = self.reorder_emb(residual, h_bar, positions)
        x = self.fc2(self.activation_dropout_module(self.activation_fn(self.fc1(x))))
        fc_result = x
        x = _add_and_norm(self, x, h_bar, self.final_layer_norm)
        if self.return_fc:
            return x, fc_result
        return x


class ReorderEmbDecoderLayer(TransformerDecoderLayerBase):
    """fairseq's decoder layer with the RE block between masked self-attention and encoder
    attention; encoder attention reads Cⁿ, its residual is H̄ⁿ (see the module docstring)."""

    def __init__(self, cfg, gated: bool, no_encoder_attn: bool = False):
        _reject_pre_norm(cfg.decoder.normalize_before, "decoder")
        unsupported = [
            name for name in ("cross_self_attention", "scale_attn", "scale_heads", "scale_fc",
                              "scale_resids")
            if getattr(cfg, name, False)
        ]
        if unsupported:
            raise OptionError(f"transformer_reorder_emb's decoder does not support {unsupported}")
        super().__init__(cfg, no_encoder_attn=no_encoder_attn)
        self.reorder_emb = ReorderingEmbedding(self.embed_dim, gated, export=cfg.export)

    def forward(
        self,
        x,
        positions: Tensor,
        encoder_out: Optional[Tensor] = None,
        encoder_padding_mask: Optional[Tensor] = None,
        incremental_state: Optional[Dict[str, Dict[str, Optional[Tensor]]]] = None,
        self_attn_mask: Optional[Tensor] = None,
        self_attn_padding_mask: Optional[Tensor] = None,
        need_attn: bool = False,
        need_head_weights: bool = False,
    ):
        """``x`` = Hⁿ⁻¹ and ``positions`` = PE of the same target steps, ``(T, B, C)``; in a
        model, ``ReorderEmbDecoder`` inserts ``positions`` into fairseq's call, whose other
        arguments keep their order. Returns ``(x, attn, None)`` like fairseq's layer."""
        if need_head_weights:
            need_attn = True
        residual = x
        x, _ = self.self_attn(
            query=x, key=x, value=x, key_padding_mask=self_attn_padding_mask,
            incremental_state=incremental_state, need_weights=False, attn_mask=self_attn_mask,
        )
        h_bar = _add_and_norm(self, x, residual, self.self_attn_layer_norm)
        x = self.reorder_emb(residual, h_bar, positions)

        attn: Optional[Tensor] = None
        residual = h_bar
        if self.encoder_attn is not None and encoder_out is not None:
            x, attn = self.encoder_attn(
                query=x, key=encoder_out, value=encoder_out, key_padding_mask=encoder_padding_mask,
                incremental_state=incremental_state, static_kv=True,
                need_weights=need_attn or (not self.training and self.need_attn),
                need_head_weights=need_head_weights,
            )
            x = _add_and_norm(self, x, residual, self.encoder_attn_layer_norm)
            residual = x

        x = self.fc2(self.activation_dropout_module(self.activation_fn(self.fc1(x))))
        x = _add_and_norm(self, x, residual, self.final_layer_norm)
        return x, attn, None


class ReorderEmbEncoder(TransformerEncoder):
    """fairseq's encoder whose layers all carry REs; each forward looks PE up as fairseq's
    embedding does and passes it to every layer."""

    def __init__(self, args, dictionary, embed_tokens):
        cfg = TransformerConfig.from_namespace(args)
        _reject_unsupported_positions(cfg, "encoder", cfg.encoder.learned_pos)
        super().__init__(args, dictionary, embed_tokens)

    def build_encoder_layer(self, cfg):
        layer = ReorderEmbEncoderLayer(
            cfg, gated=self.args.reorder_emb_mode == "gated", return_fc=self.return_fc
        )
        return wrap_layer(layer, cfg)

    def forward_scriptable(
        self,
        src_tokens,
        src_lengths: Optional[Tensor] = None,
        return_all_hiddens: bool = False,
        token_embeddings: Optional[Tensor] = None,
    ):
        """fairseq's encoder forward, with PE passed to every layer as ``positions``."""
        # the lookup fairseq's forward_embedding repeats: an index_select, far cheaper than
        # copying fairseq's forward to share one
        positions = self.embed_positions(src_tokens).transpose(0, 1)
        with _layer_calls_rewritten(
            self.layers, lambda args, kwargs: (args, {**kwargs, "positions": positions})
        ):
            return super().forward_scriptable(
                src_tokens, src_lengths, return_all_hiddens, token_embeddings
            )


class ReorderEmbDecoder(TransformerDecoder):
    """fairseq's decoder whose layers all carry REs. In incremental decoding, PE is the
    current step's only (as fairseq's ``SinusoidalPositionalEmbedding`` reads it), so past
    positions are never recomputed."""

    def __init__(self, args, dictionary, embed_tokens, no_encoder_attn=False):
        cfg = TransformerConfig.from_namespace(args)
        _reject_unsupported_positions(cfg, "decoder", cfg.decoder.learned_pos)
        if cfg.base_layers:
            raise OptionError("transformer_reorder_emb's decoder does not support --base-layers")
        super().__init__(args, dictionary, embed_tokens, no_encoder_attn=no_encoder_attn)

    def build_decoder_layer(self, cfg, no_encoder_attn=False):
        layer = ReorderEmbDecoderLayer(
            cfg, gated=self.args.reorder_emb_mode == "gated", no_encoder_attn=no_encoder_attn
        )
        return wrap_layer(layer, cfg)

    def extract_features_scriptable(
        self,
        prev_output_tokens,
        encoder_out: Optional[Dict[str, List[Tensor]]],
        incremental_state: Optional[Dict[str, Dict[str, Optional[Tensor]]]] = None,
        full_context_alignment: bool = False,
        alignment_layer: Optional[int] = None,
        alignment_heads: Optional[int] = None,
    ):
        """fairseq's decoder features, with PE of the steps being decoded passed to every
        layer as its second argument."""
        # as fairseq's extract_features_scriptable looks PE up for the embedding
        positions = self.embed_positions(prev_output_tokens, incremental_state=incremental_state)
        if incremental_state is not None:
            positions = positions[:, -1:]
        positions = positions.transpose(0, 1)
        with _layer_calls_rewritten(
            self.layers, lambda args, kwargs: ((args[0], positions) + args[1:], kwargs)
        ):
            return super().extract_features_scriptable(
                prev_output_tokens, encoder_out, incremental_state, full_context_alignment,
                alignment_layer, alignment_heads,
            )


@register_model("transformer_reorder_emb")
class TransformerReorderEmbModel(TransformerModel):
    """Transformer with Reordering Embeddings; see the module docstring."""

    reorder_positions_role = None

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--reorder-emb", choices=STACKS,
                            help="stack(s) whose every layer carries REs (§5: Encoder REs, "
                            "Decoder REs, Both REs; default both)")
        parser.add_argument("--reorder-emb-mode", choices=MODES,
                            help="gated: the paper's REs, C = LN(H̄ + PE ⊙ PP) (Eq. 6-9, "
                            "default); additional_pe: the control 'Additional PEs', "
                            "C = LN(H̄ + PE) with no gate parameters (§6.2)")
        add_self_attention_positions_args(parser)

    @classmethod
    def build_model(cls, args, task):
        transformer_reorder_emb(args)
        if args.reorder_emb not in STACKS:
            raise OptionError(f"--reorder-emb must be one of {STACKS}")
        if args.reorder_emb_mode not in MODES:
            raise OptionError(f"--reorder-emb-mode must be one of {MODES}")
        model = super().build_model(args, task)
        add_self_attention_positions(model, args)
        return model

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        if args.reorder_emb in ("encoder", "both"):
            return ReorderEmbEncoder(args, src_dict, embed_tokens)
        return super().build_encoder(args, src_dict, embed_tokens)

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        if args.reorder_emb in ("decoder", "both"):
            return ReorderEmbDecoder(
                args, tgt_dict, embed_tokens, no_encoder_attn=args.no_cross_attention
            )
        return super().build_decoder(args, tgt_dict, embed_tokens)


@register_model_architecture("transformer_reorder_emb", "transformer_reorder_emb")
def transformer_reorder_emb(args):
    args.reorder_emb = getattr(args, "reorder_emb", "both")
    args.reorder_emb_mode = getattr(args, "reorder_emb_mode", "gated")
    self_attention_positions_defaults(args)
    base_architecture(args)


@register_model_architecture("transformer_reorder_emb", "transformer_reorder_emb_iwslt_de_en")
def transformer_reorder_emb_iwslt_de_en(args):
    """fairseq's ``transformer_iwslt_de_en`` (the paper has no IWSLT runs)."""
    args.reorder_emb = getattr(args, "reorder_emb", "both")
    args.reorder_emb_mode = getattr(args, "reorder_emb_mode", "gated")
    self_attention_positions_defaults(args)
    transformer_iwslt_de_en(args)


@register_model_architecture("transformer_reorder_emb", "transformer_reorder_emb_wmt_en_de")
def transformer_reorder_emb_wmt_en_de(args):
    """Transformer base (§6.3: d=512, FFN 2048, 8 heads, 6+6 layers), Table 1."""
    transformer_reorder_emb(args)


@register_model_architecture("transformer_reorder_emb", "transformer_reorder_emb_wmt_en_de_big")
def transformer_reorder_emb_wmt_en_de_big(args):
    """Transformer big + Both REs, Table 1's last row."""
    args.reorder_emb = getattr(args, "reorder_emb", "both")
    args.reorder_emb_mode = getattr(args, "reorder_emb_mode", "gated")
    self_attention_positions_defaults(args)
    transformer_wmt_en_de_big(args)
