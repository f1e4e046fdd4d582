"""The study's profiles (shared training settings) and each model's fairseq-train flags (the
model registry's at the profile's size)."""
from ...io import InputError
from ...model_registry import MODELS, STUDY_MODELS, flags, reads_positions


# Training settings per profile: fairseq-train options without data, languages, architecture,
# seed, budget or device. ``cpu-demo`` is the demo size's dimensions and the demo schedule's
# optimization (a test keeps them equal), as the demo trained before it went through xlpe-train.
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
        "size": "cpu-demo", "updates": 500, "validate_every": 100, "device": ["--cpu"], "generate_device": ["--cpu"],
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
        "size": "gpu-iwslt", "updates": 4000, "validate_every": 500, "device": ["--fp16"],
        "generate_device": ["--fp16"],
    },
}


def model_flags(name, profile):
    """fairseq-train options that make ``name`` out of the profile's shared settings (the
    model registry's flags at the profile's size).

    Returns ``(options, reads_positions)``; ``reads_positions`` models (XL PE) train and
    decode on the data-bin with reorder positions for every split.
    """
    if name not in STUDY_MODELS:
        raise InputError(f"unknown model {name!r}; known: {', '.join(STUDY_MODELS)}")
    return flags(name, profile["size"]), reads_positions(name)


MODEL_NAMES = STUDY_MODELS


# fairseq's lstm (the one model not sized as a Transformer) has neither feed-forward blocks
# nor attention heads, and refuses their options
TRANSFORMER_ONLY_OPTIONS = ("--encoder-ffn-embed-dim", "--encoder-attention-heads",
                            "--decoder-ffn-embed-dim", "--decoder-attention-heads")


def profile_settings(name, profile):
    """The profile's shared settings that model ``name`` accepts."""
    settings = profile["settings"]
    if MODELS[name].sized:
        return list(settings)
    kept, k = [], 0
    while k < len(settings):
        if settings[k] in TRANSFORMER_ONLY_OPTIONS:
            k += 2  # the option and its value
        else:
            kept.append(settings[k])
            k += 1
    return kept
