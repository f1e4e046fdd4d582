"""Transformers whose self-attention carries relative or rotary positions: the position
baselines the XL PE and Reordering Embeddings papers compare against, and the ones modern
models use.

* ``transformer_relpe``: Shaw et al. (2018) relative keys and values clipped at
  ``--max-relative-positions k`` (values off with ``--no-relative-values``);
* ``transformer_rope``: rotary queries and keys (Su et al. 2021);
* ``transformer_alibi``: per-head linear biases (Press et al. 2022);
* ``transformer_t5_bias``: per-head bucketed biases, one table per stack (Raffel et al. 2020).

Each is fairseq's Transformer whose self-attention layers (``--relative-positions-in``:
encoder, decoder, both, none; default both) are
:class:`~xlpe_fairseq.modules.PositionalSelfAttention`; encoder-decoder attention is
fairseq's. fairseq's absolute sinusoids are off by default (all four papers use their scheme
alone) and come back per stack with ``--absolute-positions encoder|decoder|both``.

The XL PE paper's encoder-free rows (Table 4) share this model so that they differ in flags
only: ``transformer_encoder_free_nopos_*`` ("noEnc-noPos": no position on the source, the
decoder keeps fairseq's sinusoids) and ``transformer_relpe_encoder_free_*`` (that, plus Shaw
positions in the decoder's self-attention, "+ Relative PE").
"""
from typing import Callable, Optional

from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import (
    TransformerDecoder,
    TransformerEncoder,
    TransformerModel,
    base_architecture,
    transformer_iwslt_de_en,
    transformer_wmt_en_de,
    transformer_wmt_en_de_big,
)
from fairseq.modules.transformer_layer import (
    TransformerDecoderLayerBase,
    TransformerEncoderLayerBase,
)

from ..modules import (
    ALiBiPositions,
    PositionalSelfAttention,
    RelativePositionScheme,
    RotaryPositions,
    ShawRelativePositions,
    T5RelativeBias,
)
from ..io import Number
from ..plugin_errors import OptionError
from .layer_wrapping import wrap_layer

STACKS = ("encoder", "decoder", "both", "none")

# builds the scheme of one self-attention layer
SchemeFactory = Callable[[], RelativePositionScheme]


class PositionalEncoderLayer(TransformerEncoderLayerBase):
    """fairseq's encoder layer with :class:`PositionalSelfAttention`."""

    def __init__(self, cfg, make_scheme: SchemeFactory, return_fc: bool = False):
        # read by build_self_attention, which the base constructor calls
        self.make_scheme = make_scheme
        super().__init__(cfg, return_fc=return_fc)

    def build_self_attention(self, embed_dim, cfg):
        return PositionalSelfAttention(
            embed_dim, cfg.encoder.attention_heads, dropout=cfg.attention_dropout,
            self_attention=True, q_noise=self.quant_noise,
            qn_block_size=self.quant_noise_block_size, relative_positions=self.make_scheme(),
        )


class PositionalDecoderLayer(TransformerDecoderLayerBase):
    """fairseq's decoder layer with :class:`PositionalSelfAttention` as masked
    self-attention."""

    def __init__(self, cfg, make_scheme: SchemeFactory, no_encoder_attn: bool = False):
        if cfg.cross_self_attention:
            raise OptionError("relative positions need the decoder's plain self-attention: "
                              "drop --cross-self-attention")
        self.make_scheme = make_scheme
        super().__init__(cfg, no_encoder_attn=no_encoder_attn)

    def build_self_attention(self, embed_dim, cfg, add_bias_kv=False, add_zero_attn=False):
        return PositionalSelfAttention(
            embed_dim, cfg.decoder.attention_heads, dropout=cfg.attention_dropout,
            add_bias_kv=add_bias_kv, add_zero_attn=add_zero_attn, self_attention=True,
            q_noise=self.quant_noise, qn_block_size=self.quant_noise_block_size,
            relative_positions=self.make_scheme(),
        )


def _check_no_xformers(cfg, side: str):
    if getattr(cfg, side).xformers_att_config is not None:
        raise OptionError(f"relative positions compute attention themselves: drop "
                          f"--{side}-xformers-att-config")


class PositionalEncoder(TransformerEncoder):
    """fairseq's encoder; with ``make_scheme`` its layers carry relative positions, and its
    sinusoids stay only if ``--absolute-positions`` names the encoder."""

    def __init__(self, args, dictionary, embed_tokens, make_scheme: Optional[SchemeFactory]):
        self.make_scheme = make_scheme
        super().__init__(args, dictionary, embed_tokens)
        if args.absolute_positions not in ("encoder", "both"):
            self.embed_positions = None

    def build_encoder_layer(self, cfg):
        if self.make_scheme is None:
            return super().build_encoder_layer(cfg)
        _check_no_xformers(cfg, "encoder")
        return wrap_layer(PositionalEncoderLayer(cfg, self.make_scheme, self.return_fc), cfg)


class PositionalDecoder(TransformerDecoder):
    """fairseq's decoder; with ``make_scheme`` its self-attention carries relative positions,
    and its sinusoids stay only if ``--absolute-positions`` names the decoder."""

    def __init__(self, args, dictionary, embed_tokens, make_scheme: Optional[SchemeFactory],
                 no_encoder_attn=False):
        self.make_scheme = make_scheme
        super().__init__(args, dictionary, embed_tokens, no_encoder_attn=no_encoder_attn)
        if args.absolute_positions not in ("decoder", "both"):
            self.embed_positions = None

    def build_decoder_layer(self, cfg, no_encoder_attn=False):
        if self.make_scheme is None:
            return super().build_decoder_layer(cfg, no_encoder_attn)
        _check_no_xformers(cfg, "decoder")
        return wrap_layer(PositionalDecoderLayer(cfg, self.make_scheme, no_encoder_attn), cfg)


class PositionalTransformerModel(TransformerModel):
    """A Transformer whose self-attention carries the scheme :meth:`scheme_factory` builds;
    the registered subclasses below pick the scheme and its options."""

    reorder_positions_role = None

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--relative-positions-in", choices=STACKS,
                            help="self-attention stack(s) that carry the model's positions "
                            "(default both)")
        parser.add_argument("--absolute-positions", choices=STACKS,
                            help="stack(s) that keep fairseq's absolute positions at their "
                            "input (default none: the scheme alone, as its paper)")
        cls.add_scheme_args(parser)

    @staticmethod
    def add_scheme_args(parser):
        """The options of the model's scheme (none by default)."""

    @classmethod
    def scheme_factory(cls, args, num_heads: int, head_dim: int,
                       causal: bool) -> SchemeFactory:
        raise NotImplementedError

    @classmethod
    def build_model(cls, args, task):
        for flag in ("relative_positions_in", "absolute_positions"):
            if getattr(args, flag) not in STACKS:
                raise OptionError(f"--{flag.replace('_', '-')} must be one of {STACKS}, "
                                  f"got {getattr(args, flag)!r}")
        return super().build_model(args, task)

    @classmethod
    def _factory_for(cls, args, side: str) -> Optional[SchemeFactory]:
        if args.relative_positions_in not in (side, "both"):
            return None
        heads = getattr(args, f"{side}_attention_heads")
        return cls.scheme_factory(args, heads, getattr(args, f"{side}_embed_dim") // heads,
                                  causal=side == "decoder")

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return PositionalEncoder(args, src_dict, embed_tokens, cls._factory_for(args, "encoder"))

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        return PositionalDecoder(args, tgt_dict, embed_tokens, cls._factory_for(args, "decoder"),
                                 no_encoder_attn=args.no_cross_attention)


# each table or bucket count is one embedding row per value: beyond these bounds the tables
# outgrow any sentence (and memory) without changing what the model can tell apart
MAX_RELATIVE_POSITIONS = Number(int, minimum=1, maximum=100000)
ROTARY_BASE = Number(float, above=0)
# T5 halves the buckets per direction in the encoder and keeps half of those exact: fewer
# than 4 leave a direction no exact bucket
NUM_BUCKETS = Number(int, minimum=4, maximum=100000)


@register_model("transformer_relpe")
class TransformerRelPEModel(PositionalTransformerModel):
    """Shaw et al. (2018) relative position representations; see the module docstring."""

    @staticmethod
    def add_scheme_args(parser):
        parser.add_argument("--max-relative-positions", type=int, metavar="K",
                            help="clipping distance k: distances beyond ±k share a "
                            "representation (Shaw et al. 2018, Eq. 6; default 16)")
        parser.add_argument("--no-relative-values", action="store_true",
                            help="relative keys a^K only, no a^V (Shaw et al.'s Eq. 3 "
                            "without its a^V term)")

    @classmethod
    def build_model(cls, args, task):
        transformer_relpe(args)
        return super().build_model(args, task)

    @classmethod
    def scheme_factory(cls, args, num_heads, head_dim, causal):
        MAX_RELATIVE_POSITIONS.check("--max-relative-positions", args.max_relative_positions)
        return lambda: ShawRelativePositions(head_dim, args.max_relative_positions,
                                             values=not args.no_relative_values)


@register_model("transformer_rope")
class TransformerRoPEModel(PositionalTransformerModel):
    """Rotary position embedding (Su et al. 2021); see the module docstring."""

    @staticmethod
    def add_scheme_args(parser):
        parser.add_argument("--rotary-base", type=float, metavar="B",
                            help="theta_p = B^(-2p/d) (Su et al. 2021, Eq. 15; default 10000)")

    @classmethod
    def build_model(cls, args, task):
        transformer_rope(args)
        return super().build_model(args, task)

    @classmethod
    def scheme_factory(cls, args, num_heads, head_dim, causal):
        ROTARY_BASE.check("--rotary-base", args.rotary_base)
        return lambda: RotaryPositions(head_dim, args.rotary_base)


@register_model("transformer_alibi")
class TransformerALiBiModel(PositionalTransformerModel):
    """Attention with linear biases (Press et al. 2022); see the module docstring."""

    @classmethod
    def build_model(cls, args, task):
        transformer_alibi(args)
        return super().build_model(args, task)

    @classmethod
    def scheme_factory(cls, args, num_heads, head_dim, causal):
        return lambda: ALiBiPositions(num_heads)


@register_model("transformer_t5_bias")
class TransformerT5BiasModel(PositionalTransformerModel):
    """T5's bucketed relative attention bias (Raffel et al. 2020); see the module
    docstring."""

    @staticmethod
    def add_scheme_args(parser):
        parser.add_argument("--relative-attention-num-buckets", type=int, metavar="N",
                            help="distance buckets per stack, both directions together in "
                            "the encoder (default 32, as T5)")
        parser.add_argument("--relative-attention-max-distance", type=int, metavar="D",
                            help="distances from D on share the last bucket (default 128)")

    @classmethod
    def build_model(cls, args, task):
        transformer_t5_bias(args)
        return super().build_model(args, task)

    @classmethod
    def scheme_factory(cls, args, num_heads, head_dim, causal):
        buckets = NUM_BUCKETS.check("--relative-attention-num-buckets",
                                    args.relative_attention_num_buckets)
        # the log-spaced buckets start at half the buckets and end at the distance
        Number(int, minimum=buckets // 2 + 1).check("--relative-attention-max-distance",
                                                    args.relative_attention_max_distance)
        # one bias table for all layers of a stack, as T5
        shared = T5RelativeBias(num_heads, bidirectional=not causal,
                                num_buckets=args.relative_attention_num_buckets,
                                max_distance=args.relative_attention_max_distance)
        return lambda: shared


POSITION_MODELS = {
    "relpe": TransformerRelPEModel,
    "rope": TransformerRoPEModel,
    "alibi": TransformerALiBiModel,
    "t5_bias": TransformerT5BiasModel,
}


def add_self_attention_positions_args(parser):
    """``--self-attention-positions`` and every scheme's options, for a model of another
    method (XL PE, REs) that may take a scheme on top."""
    parser.add_argument("--self-attention-positions", choices=("none",) + tuple(POSITION_MODELS),
                        help="add this model's positions to every self-attention layer "
                        "(transformer_relpe, _rope, _alibi, _t5_bias), changing nothing else "
                        "(default none)")
    for model in POSITION_MODELS.values():
        model.add_scheme_args(parser)


def self_attention_positions_defaults(args):
    args.self_attention_positions = getattr(args, "self_attention_positions", "none")


def add_self_attention_positions(model, args):
    """Make every self-attention layer of ``model`` (built by its own method) carry
    ``--self-attention-positions``' scheme; its weights stay the layer's own."""
    if args.self_attention_positions == "none":
        return
    if args.self_attention_positions not in POSITION_MODELS:
        raise OptionError(f"--self-attention-positions must be none or one of "
                          f"{tuple(POSITION_MODELS)}, got {args.self_attention_positions!r}")
    for scheme_defaults in (_relpe_defaults, _rope_defaults, _t5_defaults):
        scheme_defaults(args, stacks=False)
    position_model = POSITION_MODELS[args.self_attention_positions]
    for side, stack in (("encoder", model.encoder), ("decoder", model.decoder)):
        heads = getattr(args, f"{side}_attention_heads")
        make_scheme = position_model.scheme_factory(
            args, heads, getattr(args, f"{side}_embed_dim") // heads, causal=side == "decoder")
        for layer in stack.layers:
            layer.self_attn = PositionalSelfAttention.sharing(layer.self_attn, make_scheme())


def _defaults(args, stacks=True, **defaults):
    if stacks:
        defaults = {"relative_positions_in": "both", "absolute_positions": "none", **defaults}
    for name, value in defaults.items():
        setattr(args, name, getattr(args, name, value))


def _relpe_defaults(args, stacks=True):
    _defaults(args, stacks, max_relative_positions=16, no_relative_values=False)


def _rope_defaults(args, stacks=True):
    _defaults(args, stacks, rotary_base=10000.0)


def _t5_defaults(args, stacks=True):
    _defaults(args, stacks, relative_attention_num_buckets=32,
              relative_attention_max_distance=128)


SIZES = {
    "": base_architecture,
    "_iwslt_de_en": transformer_iwslt_de_en,
    "_wmt_en_de": transformer_wmt_en_de,
    "_wmt_en_de_big": transformer_wmt_en_de_big,
}


def _register_presets(model: str, defaults: Callable) -> Callable:
    """``model`` and ``model_iwslt_de_en``, ``model_wmt_en_de``, ``model_wmt_en_de_big``:
    fairseq's sizes of those names with ``defaults``; returns the plain preset."""
    presets = {}
    for suffix, size in SIZES.items():
        def preset(args, size=size):
            defaults(args)
            size(args)
        preset.__doc__ = f"fairseq's {size.__name__} sizes with {model}'s defaults."
        presets[suffix] = register_model_architecture(model, model + suffix)(preset)
    return presets[""]


transformer_relpe = _register_presets("transformer_relpe", _relpe_defaults)
transformer_rope = _register_presets("transformer_rope", _rope_defaults)
transformer_alibi = _register_presets("transformer_alibi", _defaults)
transformer_t5_bias = _register_presets("transformer_t5_bias", _t5_defaults)


def _encoder_free(args, relative_positions_in: str, size: Callable):
    args.encoder_layers = getattr(args, "encoder_layers", 0)
    _defaults(args, relative_positions_in=relative_positions_in, absolute_positions="decoder")
    _relpe_defaults(args)
    size(args)


@register_model_architecture("transformer_relpe", "transformer_encoder_free_nopos_iwslt_de_en")
def transformer_encoder_free_nopos_iwslt_de_en(args):
    """``transformer_iwslt_de_en`` without encoder layers or source positions."""
    _encoder_free(args, "none", transformer_iwslt_de_en)


@register_model_architecture("transformer_relpe",
                             "transformer_encoder_free_nopos_wmt_en_de_big")
def transformer_encoder_free_nopos_wmt_en_de_big(args):
    """Transformer big without encoder layers or source positions (XL PE paper, Table 4,
    "BIG-noEnc-noPos"); the decoder keeps its absolute positions."""
    _encoder_free(args, "none", transformer_wmt_en_de_big)


@register_model_architecture("transformer_relpe", "transformer_relpe_encoder_free_iwslt_de_en")
def transformer_relpe_encoder_free_iwslt_de_en(args):
    """``transformer_encoder_free_nopos_iwslt_de_en`` with Shaw positions in the decoder."""
    _encoder_free(args, "decoder", transformer_iwslt_de_en)


@register_model_architecture("transformer_relpe",
                             "transformer_relpe_encoder_free_wmt_en_de_big")
def transformer_relpe_encoder_free_wmt_en_de_big(args):
    """BIG-noEnc-noPos with Shaw positions in the decoder's self-attention (XL PE paper,
    Table 4, "+ Relative PE")."""
    _encoder_free(args, "decoder", transformer_wmt_en_de_big)
