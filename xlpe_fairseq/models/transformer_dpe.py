"""Dynamic Position Encoding (Zheng, Rezagholizadeh, Passban 2021, §3.2, Fig. 4).

``N`` Transformer encoder layers (``--dpe-layers``, 2 in the paper) read the enriched
embeddings ``w_i + p_i`` and output ``r_i``. The order loss (Eq. 1, in the criterion
``label_smoothed_cross_entropy_with_order``) pulls ``r_i`` towards ``p_j``, the sinusoid at
token i's position j in the target-ordered source. The translation encoder then reads
``w_i + r_i`` (``--dpe-encoder-input dpe_only``, the default, as the public code does), or
``w_i + p_i + r_i`` (``position_and_dpe``: the word keeps its own position and gains the
predicted one, one reading of §3.2). Measured on Hebrew→English at the demo's size (seed 1,
500 updates, docs/studies/dpe-bible-he-en.md): ``position_and_dpe`` 3.78 BLEU, ``dpe_only`` 5.74, the
Transformer 5.55; the DPE output converges towards ``p_i``, so ``position_and_dpe`` reads
the position twice. Nothing but the source is needed at test time.

``--dpe-output`` says what ``r_i`` is: ``residual`` (the default), ``r_i = p_i + W·h_i`` with
``h_i`` the DPE layers' output and ``W`` a projection initialized to zero, so that the network
starts from the "own position" answer (the encoder then reads exactly the Transformer's input
under ``dpe_only``) and learns only the move ``p_j − p_i`` that the order loss asks for; or
``layers`` (the paper), the last DPE layer's output, a layer-normed vector as large as the
word embedding that starts as noise in the encoder's input and, on moved tokens, stays further
from the target than the own position would be. Measured as above: ``residual`` 6.08 BLEU
and an order loss below the own-position baseline's (0.0478 against 0.0508 on valid),
``layers`` 5.74 and above it (0.0586).
"""
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import (
    TransformerEncoder,
    TransformerModel,
    base_architecture,
    transformer_wmt_en_de_big,
)
from fairseq.modules import transformer_layer
from torch import nn

from ..modules import SinusoidalPositionsAt
from ..io import Number
from ..plugin_errors import OptionError

ENCODER_INPUTS = ("position_and_dpe", "dpe_only")
OUTPUTS = ("layers", "residual")

# the paper's network has 2 layers; as many as a deep encoder's is the most that makes sense
DPE_LAYERS = Number(int, minimum=1, maximum=64)


class DynamicPositionEncoder(TransformerEncoder):
    """fairseq's encoder with the DPE network between the embeddings and the first layer."""

    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        if args.encoder_learned_pos or args.no_token_positional_embeddings:
            raise OptionError(
                "transformer_dpe supervises r_i with sinusoidal positions: it needs them as "
                "the encoder's positions too (drop --encoder-learned-pos and "
                "--no-token-positional-embeddings)"
            )
        DPE_LAYERS.check("--dpe-layers", args.dpe_layers)
        if args.dpe_encoder_input not in ENCODER_INPUTS:
            raise OptionError(f"--dpe-encoder-input must be one of {ENCODER_INPUTS}")
        if args.dpe_output not in OUTPUTS:
            raise OptionError(f"--dpe-output must be one of {OUTPUTS}")
        self.keep_input_position = args.dpe_encoder_input == "position_and_dpe"
        self.dpe_layers = nn.ModuleList(
            [transformer_layer.TransformerEncoderLayerBase(self.cfg) for _ in range(args.dpe_layers)]
        )
        self.dpe_projection = None
        if args.dpe_output == "residual":
            dim = embed_tokens.embedding_dim
            self.dpe_projection = nn.Linear(dim, dim)
            nn.init.zeros_(self.dpe_projection.weight)
            nn.init.zeros_(self.dpe_projection.bias)
        self.target_order_positions = SinusoidalPositionsAt(
            embed_tokens.embedding_dim, self.padding_idx
        )

    def dynamic_positions(self, src_tokens, token_embeddings):
        """``r = DPE(w + p)`` (or ``p + W·DPE(w + p)``), shape ``(B, T, C)``."""
        enriched, _ = self.forward_embedding(src_tokens, token_embeddings)
        padding_mask = src_tokens.eq(self.padding_idx)
        r = enriched.transpose(0, 1)
        for layer in self.dpe_layers:
            r = layer(r, encoder_padding_mask=padding_mask if padding_mask.any() else None)
        r = r.transpose(0, 1)
        if self.dpe_projection is not None:
            r = self.embed_positions(src_tokens) + self.dpe_projection(r)
        return r

    def forward(self, src_tokens, src_lengths=None, return_all_hiddens=False,
                token_embeddings=None):
        if token_embeddings is None:
            token_embeddings = self.embed_tokens(src_tokens)
        r = self.dynamic_positions(src_tokens, token_embeddings)
        # fairseq's encoder adds embed_scale * token_embeddings + PE; folding r into the token
        # embedding lets it build w + p + r (or w + r) without copying its layer loop.
        shift = r if self.keep_input_position else r - self.embed_positions(src_tokens)
        encoder_out = super().forward(
            src_tokens, src_lengths, return_all_hiddens, token_embeddings + shift / self.embed_scale
        )
        encoder_out["order_predictions"] = [r]
        return encoder_out


@register_model("transformer_dpe")
class TransformerDPEModel(TransformerModel):
    """Transformer with Dynamic Position Encoding; see the module docstring."""

    reorder_positions_role = "order_target"

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--dpe-layers", type=int, metavar="N",
                            help="Transformer layers in the DPE network (paper: 2)")
        parser.add_argument("--dpe-encoder-input", choices=ENCODER_INPUTS,
                            help="what the first encoder layer reads: w+r (dpe_only, the "
                            "public code, default: measured 2 BLEU better) or w+p+r "
                            "(position_and_dpe, one reading of §3.2)")
        parser.add_argument("--dpe-output", choices=OUTPUTS,
                            help="r_i: p_i + a zero-initialized projection of the DPE layers' "
                            "output (residual, default: starts at the own-position answer and "
                            "learns the move) or that output itself (layers, the paper)")

    @classmethod
    def build_model(cls, args, task):
        transformer_dpe(args)
        return super().build_model(args, task)

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return DynamicPositionEncoder(args, src_dict, embed_tokens)

    def forward(self, src_tokens, src_lengths, prev_output_tokens, return_all_hiddens: bool = True,
                features_only: bool = False, alignment_layer=None, alignment_heads=None):
        encoder_out = self.encoder(
            src_tokens, src_lengths=src_lengths, return_all_hiddens=return_all_hiddens
        )
        decoder_out = self.decoder(
            prev_output_tokens,
            encoder_out=encoder_out,
            features_only=features_only,
            alignment_layer=alignment_layer,
            alignment_heads=alignment_heads,
            src_lengths=src_lengths,
            return_all_hiddens=return_all_hiddens,
        )
        decoder_out[1]["order_predictions"] = encoder_out["order_predictions"][0]
        return decoder_out

    def order_targets(self, reorder_positions):
        """``p_j``: the sinusoid at each token's target-ordered position, ``(B, T, C)``; zeros
        where the position is -1 (padding, or no order target), which the criterion masks."""
        return self.encoder.target_order_positions(reorder_positions)


@register_model_architecture("transformer_dpe", "transformer_dpe")
def transformer_dpe(args):
    args.dpe_layers = getattr(args, "dpe_layers", 2)
    args.dpe_encoder_input = getattr(args, "dpe_encoder_input", "dpe_only")
    args.dpe_output = getattr(args, "dpe_output", "residual")
    base_architecture(args)


@register_model_architecture("transformer_dpe", "transformer_dpe_iwslt_de_en")
def transformer_dpe_iwslt_de_en(args):
    """The paper's IWSLT'14 size (§4.2): dim 256, FFN 1024, 2+2 layers, 2 heads."""
    args.encoder_embed_dim = getattr(args, "encoder_embed_dim", 256)
    args.encoder_ffn_embed_dim = getattr(args, "encoder_ffn_embed_dim", 1024)
    args.encoder_attention_heads = getattr(args, "encoder_attention_heads", 2)
    args.encoder_layers = getattr(args, "encoder_layers", 2)
    args.decoder_embed_dim = getattr(args, "decoder_embed_dim", 256)
    args.decoder_ffn_embed_dim = getattr(args, "decoder_ffn_embed_dim", 1024)
    args.decoder_attention_heads = getattr(args, "decoder_attention_heads", 2)
    args.decoder_layers = getattr(args, "decoder_layers", 2)
    transformer_dpe(args)


@register_model_architecture("transformer_dpe", "transformer_dpe_wmt_en_de")
def transformer_dpe_wmt_en_de(args):
    """Transformer base (Vaswani et al. 2017), as in the paper's WMT'14 runs."""
    transformer_dpe(args)


@register_model_architecture("transformer_dpe", "transformer_dpe_wmt_en_de_big")
def transformer_dpe_wmt_en_de_big(args):
    args.dpe_layers = getattr(args, "dpe_layers", 2)
    args.dpe_encoder_input = getattr(args, "dpe_encoder_input", "dpe_only")
    args.dpe_output = getattr(args, "dpe_output", "residual")
    transformer_wmt_en_de_big(args)
