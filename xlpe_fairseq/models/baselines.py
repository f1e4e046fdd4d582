"""The papers' baselines as presets, so that every comparison row is one ``--arch`` away.

* Deeper encoders (Zheng et al. 2021, Table 5): Transformer base with 8 ("8E", about the
  parameters DPE adds) and 10 ("10E", twice that) encoder layers, on fairseq's
  ``transformer``: ``transformer_8e_wmt_en_de``, ``transformer_10e_wmt_en_de``.
* Encoder-free Transformers (Ding et al. 2020, §4.4, Table 4, after Tang et al. 2019): no
  encoder layers, the source embeddings with their positions go straight to the decoder.
  ``transformer_encoder_free_*`` is the "+ Absolute PE" row; ``transformer_xlpe_encoder_free_*``
  the "+ InXL PE" row (InXL acts at the embedding, so it needs no encoder layer; HeadXL does).
  ``*_wmt_en_de_big`` is the paper's size ("BIG-noEnc"), ``*_iwslt_de_en`` a small one.

* The LSTM of XL PE Table 4 ("LSTM (6 layers)", hidden size 1024, §4.4), on fairseq's
  ``lstm``: ``lstm_6l_wmt_en_de``. The paper gives no more; the rest is fairseq's
  ``lstm_luong_wmt_en_de`` (unidirectional encoder, attention, no output dropout).
* "noEnc-noPos" and "+ Relative PE" of XL PE Table 4 live with the relative positions, in
  :mod:`.transformer_positions`.

The two-pass Transformer of Zheng et al. (2021, §3.1) is two plain Transformers and data:
``xlpe-reorder-text`` and ``examples/two_pass.sh``.
"""
from fairseq.models import register_model_architecture
from fairseq.models.lstm import lstm_luong_wmt_en_de
from fairseq.models.transformer import (
    transformer_iwslt_de_en,
    transformer_wmt_en_de,
    transformer_wmt_en_de_big,
)

from .transformer_xlpe import transformer_xlpe_iwslt_de_en, transformer_xlpe_wmt_en_de_big


@register_model_architecture("transformer", "transformer_8e_wmt_en_de")
def transformer_8e_wmt_en_de(args):
    """Transformer base with 8 encoder layers (DPE paper, Table 5, "8E")."""
    args.encoder_layers = getattr(args, "encoder_layers", 8)
    transformer_wmt_en_de(args)


@register_model_architecture("transformer", "transformer_10e_wmt_en_de")
def transformer_10e_wmt_en_de(args):
    """Transformer base with 10 encoder layers (DPE paper, Table 5, "10E")."""
    args.encoder_layers = getattr(args, "encoder_layers", 10)
    transformer_wmt_en_de(args)


@register_model_architecture("transformer", "transformer_encoder_free_iwslt_de_en")
def transformer_encoder_free_iwslt_de_en(args):
    """fairseq's ``transformer_iwslt_de_en`` without encoder layers (+ Absolute PE)."""
    args.encoder_layers = getattr(args, "encoder_layers", 0)
    transformer_iwslt_de_en(args)


@register_model_architecture("transformer", "transformer_encoder_free_wmt_en_de_big")
def transformer_encoder_free_wmt_en_de_big(args):
    """Transformer big without encoder layers (XL PE paper, Table 4, "+ Absolute PE")."""
    args.encoder_layers = getattr(args, "encoder_layers", 0)
    transformer_wmt_en_de_big(args)


@register_model_architecture("transformer_xlpe", "transformer_xlpe_encoder_free_iwslt_de_en")
def transformer_xlpe_encoder_free_iwslt_de_en(args):
    """``transformer_xlpe_iwslt_de_en`` without encoder layers, InXL PE."""
    args.encoder_layers = getattr(args, "encoder_layers", 0)
    args.xlpe_mode = getattr(args, "xlpe_mode", "inxl")
    transformer_xlpe_iwslt_de_en(args)


@register_model_architecture("transformer_xlpe", "transformer_xlpe_encoder_free_wmt_en_de_big")
def transformer_xlpe_encoder_free_wmt_en_de_big(args):
    """Transformer big without encoder layers, InXL PE (XL PE paper, Table 4, "+ InXL PE")."""
    args.encoder_layers = getattr(args, "encoder_layers", 0)
    args.xlpe_mode = getattr(args, "xlpe_mode", "inxl")
    transformer_xlpe_wmt_en_de_big(args)


@register_model_architecture("lstm", "lstm_6l_wmt_en_de")
def lstm_6l_wmt_en_de(args):
    """6 encoder and 6 decoder LSTM layers of 1024 units (XL PE paper, Table 4, "LSTM")."""
    for side in ("encoder", "decoder"):
        for name, value in (("embed_dim", 1024), ("hidden_size", 1024), ("layers", 6)):
            setattr(args, f"{side}_{name}", getattr(args, f"{side}_{name}", value))
    args.decoder_out_embed_dim = getattr(args, "decoder_out_embed_dim", 1024)
    lstm_luong_wmt_en_de(args)
