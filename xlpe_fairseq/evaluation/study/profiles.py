"""The study's profiles (shared training settings) and each model's fairseq-train flags."""
from ...io import InputError


# Training settings per profile: fairseq-train options without data, languages, architecture,
# seed, budget or device. ``cpu-demo`` is examples/demo_settings.sh (a test keeps them equal).
PROFILES = {
    "cpu-demo": {
        "settings": [
            "--encoder-embed-dim", "128", "--encoder-ffn-embed-dim", "512",
            "--encoder-layers", "2", "--encoder-attention-heads", "4",
            "--decoder-embed-dim", "128", "--decoder-ffn-embed-dim", "512",
            "--decoder-layers", "2", "--decoder-attention-heads", "4",
            "--share-decoder-input-output-embed", "--dropout", "0.2",
            "--criterion", "label_smoothed_cross_entropy_with_order", "--label-smoothing", "0.1",
            "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr", "0.002",
            "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "200", "--max-tokens", "4096",
            "--no-epoch-checkpoints", "--log-format", "simple", "--log-interval", "50",
            "--num-workers", "0",
        ],
        "embed_dim": 128, "encoder_layers": 2, "heads": 4, "order_lambda": 0.5, "updates": 500,
        "validate_every": 100, "device": ["--cpu"], "generate_device": ["--cpu"],
    },
    # fairseq's IWSLT'14 preset (transformer_iwslt_de_en: 512/1024, 6+6 layers, 4 heads), not
    # the smaller model of this project's IWSLT'14 recipes (256/1024, 2+2, 2 heads, lr 5e-4,
    # warmup 4000); on one GPU in fp16, at fairseq's own lr for it (at 1e-3 it stayed on the
    # unigram plateau). 12 runs share an H100 or H200 at 3-4 updates/s each.
    "gpu-iwslt": {
        "settings": [
            "--encoder-embed-dim", "512", "--encoder-ffn-embed-dim", "1024",
            "--encoder-layers", "6", "--encoder-attention-heads", "4",
            "--decoder-embed-dim", "512", "--decoder-ffn-embed-dim", "1024",
            "--decoder-layers", "6", "--decoder-attention-heads", "4",
            "--share-decoder-input-output-embed", "--dropout", "0.3", "--weight-decay", "0.0001",
            "--criterion", "label_smoothed_cross_entropy_with_order", "--label-smoothing", "0.1",
            "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--clip-norm", "0.0",
            "--lr", "0.0005", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "1000",
            "--max-tokens", "8192", "--no-epoch-checkpoints", "--log-format", "simple",
            "--log-interval", "100", "--num-workers", "2",
        ],
        "embed_dim": 512, "encoder_layers": 6, "heads": 4, "order_lambda": 0.3, "updates": 4000,
        "validate_every": 500, "device": ["--fp16"], "generate_device": ["--fp16"],
    },
}


def model_flags(name, profile):
    """fairseq-train options that make ``name`` out of the profile's shared settings.

    Returns ``(options, reads_positions)``; ``reads_positions`` models (XL PE) train and
    decode on the data-bin with reorder positions for every split.
    """
    heads = profile["heads"]
    width = str(profile["embed_dim"])
    xlpe_heads = str(max(1, heads // 4))  # the paper's best share: 4 of 16 heads
    table = {
        "transformer": (["--arch", "transformer"], False),
        "dpe": (["--arch", "transformer_dpe", "--order-lambda", str(profile["order_lambda"])],
                False),
        "re-encoder": (["--arch", "transformer_reorder_emb", "--reorder-emb", "encoder"], False),
        "re-decoder": (["--arch", "transformer_reorder_emb", "--reorder-emb", "decoder"], False),
        "re-both": (["--arch", "transformer_reorder_emb", "--reorder-emb", "both"], False),
        "xlpe-inxl": (["--arch", "transformer_xlpe", "--xlpe-mode", "inxl"], True),
        "xlpe-headxl": (["--arch", "transformer_xlpe", "--xlpe-mode", "headxl",
                         "--xlpe-heads", xlpe_heads], True),
        "xlpe-combination": (["--arch", "transformer_xlpe", "--xlpe-mode", "combination",
                              "--xlpe-heads", xlpe_heads], True),
        # as many encoder layers as DPE's network plus its encoder (DPE Table 5's 8E at base)
        "transformer-deep": (["--arch", "transformer", "--encoder-layers",
                              str(profile["encoder_layers"] + 2)], False),
        "encoder-free": (["--arch", "transformer", "--encoder-layers", "0"], False),
        "encoder-free-inxl": (["--arch", "transformer_xlpe", "--xlpe-mode", "inxl",
                               "--encoder-layers", "0"], True),
        # XL PE Table 4: no source positions, then Shaw positions in the decoder
        "encoder-free-nopos": (["--arch", "transformer_relpe", "--encoder-layers", "0",
                                "--relative-positions-in", "none",
                                "--absolute-positions", "decoder"], False),
        "encoder-free-relpe": (["--arch", "transformer_relpe", "--encoder-layers", "0",
                                "--relative-positions-in", "decoder",
                                "--absolute-positions", "decoder"], False),
        "relpe": (["--arch", "transformer_relpe"], False),
        "rope": (["--arch", "transformer_rope"], False),
        "alibi": (["--arch", "transformer_alibi"], False),
        "t5-bias": (["--arch", "transformer_t5_bias"], False),
        # XL PE Table 4's LSTM at the profile's width and depth (see profile_settings)
        "lstm": (["--arch", "lstm_6l_wmt_en_de", *[option for side in ("encoder", "decoder")
                                                    for option in (f"--{side}-hidden-size", width)],
                  "--decoder-out-embed-dim", width], False),
    }
    if name not in table:
        raise InputError(f"unknown model {name!r}; known: {', '.join(table)}")
    return table[name]


MODEL_NAMES = ("transformer", "dpe", "re-encoder", "re-decoder", "re-both", "xlpe-inxl",
               "xlpe-headxl", "xlpe-combination", "transformer-deep", "encoder-free",
               "encoder-free-inxl", "encoder-free-nopos", "encoder-free-relpe", "relpe", "rope",
               "alibi", "t5-bias", "lstm")


# fairseq's lstm has neither feed-forward blocks nor attention heads, and refuses their options
TRANSFORMER_ONLY_OPTIONS = ("--encoder-ffn-embed-dim", "--encoder-attention-heads",
                            "--decoder-ffn-embed-dim", "--decoder-attention-heads")


def profile_settings(name, profile):
    """The profile's shared settings that model ``name`` accepts."""
    settings = profile["settings"]
    if name != "lstm":
        return list(settings)
    kept, k = [], 0
    while k < len(settings):
        if settings[k] in TRANSFORMER_ONLY_OPTIONS:
            k += 2  # the option and its value
        else:
            kept.append(settings[k])
            k += 1
    return kept


def learns_order(flags):
    """Whether a model's fairseq-train flags make a DPE model, which trains on order targets."""
    return flags[flags.index("--arch") + 1] == "transformer_dpe"
