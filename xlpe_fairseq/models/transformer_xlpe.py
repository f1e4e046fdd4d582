"""Self-attention with cross-lingual position representation, XL PE (Ding, Wang, Tao 2020).

Each source token carries ``pos_XL``, its 0-based position in the target-ordered source (from
the batch's ``reorder_positions``), encoded with the same sinusoid table as the absolute
positions: ``PE_XL = f(pos_XL)`` (Eq. 6). Three ways to use it (``--xlpe-mode``), all in the
encoder only; the decoder is fairseq's (§4, "we keep the Transformer decoder unchanged"):

- ``inxl`` (Eq. 7-8): ``PE_IN = tanh(PE_abs U + PE_XL V)``, ``Z = X + PE_IN`` replaces
  ``X + PE_abs`` as the encoder input. ``U`` and ``V`` are ``d x d`` without bias (Eq. 7 has
  none).
- ``headxl`` (Eq. 9-11): ``Z_abs = X + PE_abs``, ``Z_XL = X + PE_XL``. Eq. 9 builds the two
  inputs at the embedding level, so they meet the first encoder layer's self-attention:
  there the first ``τ`` heads (``--xlpe-heads``) take Q, K, V from ``Z_XL`` and the others
  from ``Z_abs``, then Eq. 11 concatenates all heads and applies ``W_O``. That layer's
  residual is ``Z_abs``, so ``τ = 0`` is exactly fairseq's ``transformer`` (the paper: "τ = 0
  refers to the original Transformer") and every later layer is unchanged.
- ``combination`` (Tab. 1 #11, footnote 2): HeadXL with ``PE_XL`` replaced by ``PE_IN``, i.e.
  the XL heads read ``X + PE_IN``. The default, as the best system in Tab. 1-3.

``--self-attention-positions relpe|rope|alibi|t5_bias`` (with ``inxl`` only) adds that scheme
(:mod:`.transformer_positions`) to every self-attention layer, encoder and decoder: InXL on top
of relative or rotary positions. HeadXL's first layer has its own attention (Eq. 9-11), so
``headxl`` and ``combination`` refuse it.
"""
from typing import Dict, List, Optional

import torch
import torch.nn.functional as F
from fairseq import utils
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import (
    TransformerConfig,
    TransformerEncoder,
    TransformerModel,
    base_architecture,
    transformer_iwslt_de_en,
    transformer_wmt_en_de,
    transformer_wmt_en_de_big,
)
from fairseq.modules import MultiheadAttention
from fairseq.modules.transformer_layer import TransformerEncoderLayerBase
from torch import Tensor, nn

from ..modules import SinusoidalPositionsAt
from ..modules.input_xl_positions import (UV_LR_SCALE, XLPE_INIT, XLPE_INITS, InputXLPositions,
                                           input_statistics)
from ..plugin_errors import OptionError, ReorderPositionsError
from .layer_wrapping import wrap_layer
from .transformer_positions import (
    add_self_attention_positions,
    add_self_attention_positions_args,
    self_attention_positions_defaults,
)

XLPE_MODES = ("inxl", "headxl", "combination")


class HeadXLMultiheadAttention(MultiheadAttention):
    """Self-attention whose first ``xl_heads`` heads read a second input (Eq. 9-11).

    ``W_Q, W_K, W_V`` are split by rows into ``[W^XL; W^abs]`` (the first ``τ·d_head`` output
    features belong to the XL heads), so the parameters and their names are fairseq's and a
    checkpoint loads into either model. Without ``query_xl`` this is fairseq's attention.
    """

    def __init__(self, *args, xl_heads: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        self.xl_heads = xl_heads

    def forward(self, query: Tensor, key: Optional[Tensor], value: Optional[Tensor],
                key_padding_mask: Optional[Tensor] = None,
                incremental_state: Optional[Dict[str, Dict[str, Optional[Tensor]]]] = None,
                need_weights: bool = True, static_kv: bool = False,
                attn_mask: Optional[Tensor] = None, before_softmax: bool = False,
                need_head_weights: bool = False, query_xl: Optional[Tensor] = None):
        """``query`` is ``Z_abs`` and ``query_xl`` is ``Z_XL``, both ``(T, B, C)``; with
        ``query_xl`` only encoder self-attention is supported (no weights, no cache)."""
        if query_xl is None:
            return super().forward(query, key, value, key_padding_mask, incremental_state,
                                   need_weights, static_kv, attn_mask, before_softmax,
                                   need_head_weights)
        if (incremental_state is not None or need_weights or need_head_weights or before_softmax
                or self.bias_k is not None or self.add_zero_attn):
            raise NotImplementedError(
                "HeadXL attention supports plain encoder self-attention only"
            )
        tgt_len, bsz, embed_dim = query.size()
        q = self._project(self.q_proj, query_xl, query)
        k = self._project(self.k_proj, query_xl, query)
        v = self._project(self.v_proj, query_xl, query)
        # (T, B, C) -> (B, H, T, d_head): the same layout F.multi_head_attention_forward gives
        # fairseq's attention, so that tau = 0 reproduces it
        q, k, v = (t.view(tgt_len, bsz, self.num_heads, self.head_dim).permute(1, 2, 0, 3)
                   for t in (q, k, v))
        mask = self._additive_mask(key_padding_mask, attn_mask, q.dtype)
        dropout_p = (self.dropout_module.p
                     if self.training or self.dropout_module.apply_during_inference else 0.0)
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        attn = attn.permute(2, 0, 1, 3).reshape(tgt_len * bsz, embed_dim)
        attn = F.linear(attn, self.out_proj.weight, self.out_proj.bias)
        return attn.view(tgt_len, bsz, embed_dim), None

    def _project(self, proj: nn.Linear, z_xl: Tensor, z_abs: Tensor) -> Tensor:
        """``[Z_XL W^XL, Z_abs W^abs]``: one projection's FLOPs, no per-head loop."""
        split = self.xl_heads * self.head_dim
        weight, bias = proj.weight, proj.bias
        if split == 0:
            return F.linear(z_abs, weight, bias)
        if split == self.embed_dim:
            return F.linear(z_xl, weight, bias)
        return torch.cat([
            F.linear(z_xl, weight[:split], None if bias is None else bias[:split]),
            F.linear(z_abs, weight[split:], None if bias is None else bias[split:]),
        ], dim=-1)

    @staticmethod
    def _additive_mask(key_padding_mask: Optional[Tensor], attn_mask: Optional[Tensor],
                       dtype: torch.dtype) -> Optional[Tensor]:
        """Float mask ``(B, 1, T|1, S)`` with -inf at padded keys, as torch's MHA builds it."""
        mask = None
        if key_padding_mask is not None:
            mask = torch.zeros(key_padding_mask.shape, dtype=dtype,
                               device=key_padding_mask.device)
            mask = mask.masked_fill_(key_padding_mask.bool(), float("-inf"))[:, None, None, :]
        if attn_mask is not None:
            attn_mask = attn_mask.to(dtype)
            mask = attn_mask if mask is None else mask + attn_mask
        return mask


class HeadXLEncoderLayer(TransformerEncoderLayerBase):
    """fairseq's encoder layer whose self-attention may also read ``Z_XL`` (Eq. 9-11).

    With ``x_xl`` the first ``xl_heads`` heads read it (after the same pre-norm, if any) and
    the residual stays ``x`` = ``Z_abs``; without it the layer is fairseq's.
    """

    def __init__(self, cfg, xl_heads: int, return_fc: bool = False):
        # read by build_self_attention, which the base constructor calls
        self.xl_heads = xl_heads
        super().__init__(cfg, return_fc=return_fc)

    def build_self_attention(self, embed_dim, cfg):
        return HeadXLMultiheadAttention(
            embed_dim,
            cfg.encoder.attention_heads,
            dropout=cfg.attention_dropout,
            self_attention=True,
            q_noise=self.quant_noise,
            qn_block_size=self.quant_noise_block_size,
            xformers_att_config=cfg.encoder.xformers_att_config,
            xl_heads=self.xl_heads,
        )

    def forward(self, x, encoder_padding_mask: Optional[Tensor],
                attn_mask: Optional[Tensor] = None, x_xl: Optional[Tensor] = None):
        if x_xl is None:
            return super().forward(x, encoder_padding_mask, attn_mask)
        if attn_mask is not None:
            # as fairseq's layer: a finite fill keeps fully masked padded queries NaN-free
            attn_mask = attn_mask.masked_fill(
                attn_mask.to(torch.bool), -1e8 if x.dtype == torch.float32 else -1e4
            )
        residual = x
        if self.normalize_before:
            x = self.self_attn_layer_norm(x)
            x_xl = self.self_attn_layer_norm(x_xl)
        x, _ = self.self_attn(query=x, key=x, value=x, key_padding_mask=encoder_padding_mask,
                              need_weights=False, attn_mask=attn_mask, query_xl=x_xl)
        x = self.dropout_module(x)
        x = self.residual_connection(x, residual)
        if not self.normalize_before:
            x = self.self_attn_layer_norm(x)

        residual = x
        if self.normalize_before:
            x = self.final_layer_norm(x)
        x = self.activation_fn(self.fc1(x))
        x = self.activation_dropout_module(x)
        x = self.fc2(x)
        fc_result = x
        x = self.dropout_module(x)
        x = self.residual_connection(x, residual)
        if not self.normalize_before:
            x = self.final_layer_norm(x)
        if self.return_fc and not torch.jit.is_scripting():
            return x, fc_result
        return x


def validate_xlpe_args(args):
    """Fail at build time, naming the flag, rather than deep inside a forward pass."""
    if args.xlpe_mode not in XLPE_MODES:
        raise OptionError(f"--xlpe-mode must be one of {XLPE_MODES}, got {args.xlpe_mode!r}")
    heads = args.encoder_attention_heads
    if args.xlpe_mode != "inxl" and not 0 <= args.xlpe_heads <= heads:
        raise OptionError(
            f"--xlpe-heads (tau) must be between 0 and --encoder-attention-heads ({heads}), "
            f"got {args.xlpe_heads}"
        )
    if args.xlpe_mode != "inxl" and args.encoder_layers < 1:
        raise OptionError(
            f"--xlpe-mode {args.xlpe_mode} puts PE_XL into the first encoder layer's "
            "self-attention, and --encoder-layers is 0; an encoder-free model takes "
            "--xlpe-mode inxl"
        )
    if args.xlpe_mode == "combination" and args.xlpe_heads == 0:
        raise OptionError(
            "--xlpe-mode combination with --xlpe-heads 0 never uses PE_IN (U and V would get "
            "no gradient); use --xlpe-mode headxl for the plain Transformer"
        )
    if args.encoder_learned_pos or args.no_token_positional_embeddings:
        raise OptionError(
            "transformer_xlpe reads PE_XL from the sinusoid table of the encoder's absolute "
            "positions (Ding et al. 2020, Eq. 6): drop --encoder-learned-pos and "
            "--no-token-positional-embeddings"
        )


class XLPEEncoder(TransformerEncoder):
    """fairseq's encoder with cross-lingual positions at its input; see the module docstring."""

    def __init__(self, args, dictionary, embed_tokens):
        validate_xlpe_args(args)
        self.mode = args.xlpe_mode
        self.xl_heads = 0 if self.mode == "inxl" else args.xlpe_heads
        super().__init__(args, dictionary, embed_tokens)
        embed_dim = embed_tokens.embedding_dim
        self.xl_positions = SinusoidalPositionsAt(embed_dim, self.padding_idx)
        self.pe_in = (InputXLPositions(embed_dim, args.xlpe_init, args.xlpe_uv_lr_scale,
                                       args.xlpe_xl_warmup_updates)
                      if self.mode != "headxl" else None)

    def build_encoder_layer(self, args):
        """Layers as fairseq builds them, but able to take the XL stream (Eq. 9-11); only the
        first one gets it. Same parameters, names and initialisation order as fairseq's."""
        if self.mode == "inxl":
            return super().build_encoder_layer(args)
        cfg = TransformerConfig.from_namespace(args)
        return wrap_layer(HeadXLEncoderLayer(cfg, self.xl_heads, return_fc=self.return_fc), cfg)

    def forward_xl_embedding(self, src_tokens: Tensor, reorder_positions: Tensor,
                             token_embedding: Optional[Tensor] = None):
        """``(Z, Z_XL or None, X, PE_abs U + PE_XL V or None)``: the encoder input, the XL
        heads' input, the embedding and what Eq. 7's tanh reads."""
        if token_embedding is None:
            token_embedding = self.embed_tokens(src_tokens)
        embed = self.embed_scale * token_embedding
        pre_activation = pe_in = None
        if self.pe_in is not None:
            pre_activation = self.pe_in.pre_activation(
                *self.position_sinusoids(src_tokens, reorder_positions))
            pe_in = torch.tanh(pre_activation).to(embed)
        if self.mode == "inxl":
            return self._finish_embedding(embed + pe_in), None, embed, pre_activation
        z_abs = self._finish_embedding(embed + self.embed_positions(src_tokens))
        if self.xl_heads == 0:
            return z_abs, None, embed, pre_activation
        pe_xl = pe_in if self.mode == "combination" else self.xl_positions(reorder_positions)
        return z_abs, self._finish_embedding(embed + pe_xl.to(embed)), embed, pre_activation

    def position_sinusoids(self, src_tokens: Tensor, reorder_positions: Tensor):
        """``(PE_abs, PE_XL)``, each ``(B, T, C)`` from the one sinusoid table (Eq. 6); the zero
        row at padding. ``PE_abs`` numbers tokens as fairseq does (left padding skipped)."""
        abs_positions = (utils.make_positions(src_tokens, self.padding_idx)
                         - self.padding_idx - 1)
        return self.xl_positions(abs_positions), self.xl_positions(reorder_positions)

    def _finish_embedding(self, x: Tensor) -> Tensor:
        """What fairseq's ``forward_embedding`` does after adding positions."""
        if self.layernorm_embedding is not None:
            x = self.layernorm_embedding(x)
        x = self.dropout_module(x)
        if self.quant_noise is not None:
            x = self.quant_noise(x)
        return x

    def forward(self, src_tokens, src_lengths: Optional[Tensor] = None,
                return_all_hiddens: bool = False, token_embeddings: Optional[Tensor] = None,
                reorder_positions: Optional[Tensor] = None, with_statistics: bool = False):
        """fairseq's encoder forward plus ``reorder_positions`` (B x T, -1 at padding); with
        ``with_statistics`` (the model's forward, whose output the criterion logs; not beam
        search) also ``PE_IN``'s statistics."""
        if reorder_positions is None:
            raise ReorderPositionsError(
                "transformer_xlpe needs reorder positions (pos_XL) for every source sentence, "
                "in training and in decoding: use --task translation_reorder with "
                "{split}.reorder files binarized beside each split (xlpe-reorder, "
                "xlpe-binarize), written for test sets by a source-only preorderer"
            )
        if reorder_positions.shape != src_tokens.shape:
            raise ReorderPositionsError(
                f"reorder_positions {tuple(reorder_positions.shape)} must be shaped like "
                f"src_tokens {tuple(src_tokens.shape)}"
            )
        padding_mask = src_tokens.eq(self.padding_idx)
        has_pads = padding_mask.any()
        x, x_xl, encoder_embedding, pre_activation = self.forward_xl_embedding(
            src_tokens, reorder_positions, token_embeddings
        )
        # as fairseq: zero the padded rows (this product form keeps results bit-identical)
        keep = 1 - padding_mask.unsqueeze(-1).type_as(x) * has_pads.type_as(x)
        x = (x * keep).transpose(0, 1)
        if x_xl is not None:
            x_xl = (x_xl * keep).transpose(0, 1)

        encoder_states: List[Tensor] = [x] if return_all_hiddens else []
        fc_results: List[Optional[Tensor]] = []
        layer_mask = padding_mask if has_pads else None
        # Z_XL goes to the first layer that runs (LayerDrop may skip layer 0; every layer of
        # headxl / combination can take it)
        for index, layer in enumerate(self.layers):
            if index == 0 and x_xl is not None:
                lr = layer(x, encoder_padding_mask=layer_mask, x_xl=x_xl)
            else:
                lr = layer(x, encoder_padding_mask=layer_mask)
            x, fc_result = lr if isinstance(lr, tuple) and len(lr) == 2 else (lr, None)
            if return_all_hiddens:
                encoder_states.append(x)
                fc_results.append(fc_result)
        if self.layer_norm is not None:
            x = self.layer_norm(x)

        src_lengths = src_tokens.ne(self.padding_idx).sum(dim=1, dtype=torch.int32)
        statistics = ([input_statistics(pre_activation, encoder_embedding, padding_mask)]
                      if with_statistics and pre_activation is not None else [])
        return {
            "encoder_out": [x],  # T x B x C
            "encoder_padding_mask": [padding_mask],  # B x T
            "encoder_embedding": [encoder_embedding],  # B x T x C
            "encoder_states": encoder_states,  # List[T x B x C]
            "fc_results": fc_results,  # List[T x B x C]
            "src_tokens": [],
            "src_lengths": [src_lengths.reshape(-1, 1).contiguous()],
            "xlpe_input_statistics": statistics,
        }


@register_model("transformer_xlpe")
class TransformerXLPEModel(TransformerModel):
    """Transformer with cross-lingual position encoding; see the module docstring."""

    reorder_positions_role = "input"

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--xlpe-mode", choices=XLPE_MODES,
                            help="how PE_XL enters the encoder (Ding et al. 2020 §3.2): "
                            "inxl (Eq. 7-8), headxl (Eq. 9-11) or combination (both, Tab. 1 "
                            "#11, the paper's best; default)")
        parser.add_argument("--xlpe-heads", type=int, metavar="TAU",
                            help="tau, the number of first-layer encoder heads that read the "
                            "XL input in headxl and combination modes, 0 <= tau <= heads "
                            "(paper's best: 4 of 16, Fig. 3; default 4)")
        parser.add_argument("--xlpe-init", choices=XLPE_INITS,
                            help="initialisation of InXL's U and V (Eq. 7), which the paper "
                            "does not give: xavier (both random: PE_IN starts as a mix of "
                            "both sinusoids; default) or identity (U = I, V = 0: PE_IN starts "
                            "as tanh(PE_abs), the Transformer's input; the default before)")
        # the default lives on the command line, not in _xlpe_defaults: a checkpoint trained
        # before the option existed has no value saved and was trained at 1
        parser.add_argument("--xlpe-uv-lr-scale", type=float, metavar="S",
                            default=UV_LR_SCALE,
                            help="U and V (Eq. 7) take Adam steps S times as large as the "
                            f"other weights, 0 < S <= 1 (default {UV_LR_SCALE}: kept pace "
                            "with the Transformer at 512 wide, 6+6, and was level with 1 at "
                            "128 wide, 2+2; 1: as the paper, which lagged at 512; 0.1: the "
                            "default before; docs/models.md)")
        parser.add_argument("--xlpe-xl-warmup-updates", type=int, metavar="N",
                            help="bring Eq. 7's PE_XL V term in linearly over the first N "
                            "updates (default 0: from the start, as the paper)")
        add_self_attention_positions_args(parser)

    @classmethod
    def build_model(cls, args, task):
        transformer_xlpe(args)
        if args.self_attention_positions != "none" and args.xlpe_mode != "inxl":
            raise OptionError(
                f"--self-attention-positions {args.self_attention_positions} takes "
                f"--xlpe-mode inxl: {args.xlpe_mode} splits the first encoder layer's heads "
                "between two inputs in its own attention (Eq. 9-11), which has no place for "
                "relative positions; InXL only changes the encoder input (Eq. 8)")
        model = super().build_model(args, task)
        add_self_attention_positions(model, args)
        return model

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return XLPEEncoder(args, src_dict, embed_tokens)

    def forward(self, src_tokens, src_lengths, prev_output_tokens, return_all_hiddens: bool = True,
                features_only: bool = False, alignment_layer=None, alignment_heads=None,
                reorder_positions=None):
        encoder_out = self.encoder(
            src_tokens, src_lengths=src_lengths, return_all_hiddens=return_all_hiddens,
            reorder_positions=reorder_positions, with_statistics=True,
        )
        x, extra = self.decoder(
            prev_output_tokens,
            encoder_out=encoder_out,
            features_only=features_only,
            alignment_layer=alignment_layer,
            alignment_heads=alignment_heads,
            src_lengths=src_lengths,
            return_all_hiddens=return_all_hiddens,
        )
        # the decoder's extra output is what the criterion sees
        if encoder_out["xlpe_input_statistics"]:
            extra["xlpe_input_statistics"] = encoder_out["xlpe_input_statistics"][0]
        return x, extra


def _xlpe_defaults(args, xlpe_heads=4):
    args.xlpe_mode = getattr(args, "xlpe_mode", "combination")
    args.xlpe_heads = getattr(args, "xlpe_heads", xlpe_heads)
    args.xlpe_init = getattr(args, "xlpe_init", XLPE_INIT)
    # 1, not UV_LR_SCALE: only saved options from before the option lack it (see add_args)
    args.xlpe_uv_lr_scale = getattr(args, "xlpe_uv_lr_scale", 1.0)
    args.xlpe_xl_warmup_updates = getattr(args, "xlpe_xl_warmup_updates", 0)
    self_attention_positions_defaults(args)


@register_model_architecture("transformer_xlpe", "transformer_xlpe")
def transformer_xlpe(args):
    _xlpe_defaults(args)
    base_architecture(args)


@register_model_architecture("transformer_xlpe", "transformer_xlpe_iwslt_de_en")
def transformer_xlpe_iwslt_de_en(args):
    """fairseq's ``transformer_iwslt_de_en``. It has 4 heads, so tau defaults to 1: the
    paper's best share, 4 of 16 heads (Fig. 3); tau = 4 would leave no APE head."""
    _xlpe_defaults(args, xlpe_heads=1)
    transformer_iwslt_de_en(args)


@register_model_architecture("transformer_xlpe", "transformer_xlpe_wmt_en_de")
def transformer_xlpe_wmt_en_de(args):
    """Transformer base (fairseq's ``transformer_wmt_en_de``)."""
    _xlpe_defaults(args)
    transformer_wmt_en_de(args)


@register_model_architecture("transformer_xlpe", "transformer_xlpe_wmt_en_de_big")
def transformer_xlpe_wmt_en_de_big(args):
    """Transformer big, the paper's setting (§4: 16 heads, tau = 4)."""
    _xlpe_defaults(args)
    transformer_wmt_en_de_big(args)
