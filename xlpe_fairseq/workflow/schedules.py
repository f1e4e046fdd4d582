"""The models and schedules of xlpe-train (examples/train.sh, examples/train-*.sh): each
model's architecture and options at each size, each paper's schedule (optimization, batch,
checkpoints, and what xlpe-evaluate decodes with), which data-bin a model reads, and the
fairseq options a checkpoint of a model and schedule was saved with (what tells it from
another's). tests/workflow/test_schedules.py and tests/recipes/test_training_scripts.py hold
them to the papers' values through ``--dry-run``.
"""
from types import SimpleNamespace

MODELS = (
    "transformer", "dpe", "xlpe", "xlpe-combination", "xlpe-inxl", "xlpe-headxl", "re-encoder",
    "re-decoder", "re-both", "transformer-8e", "transformer-10e", "encoder-free",
    "encoder-free-inxl", "encoder-free-nopos", "encoder-free-relpe", "lstm", "relpe", "rope",
    "alibi", "t5-bias",
)
SCHEDULES = ("dpe-iwslt", "dpe", "re", "xlpe")

# (checkpoints averaged, 0 for checkpoint_best.pt; beam; length penalty) of each schedule
# (``schedule`` below gives the papers' sections)
DECODING = {
    "dpe-iwslt": (5, 5, "1.0"),
    "dpe": (5, 5, "0.6"),
    "re": (0, 4, "1.0"),
    "xlpe": (20, 4, "0.6"),
}

# the options xlpe-train gives each schedule that no other schedule shares: checkpoints
# kept (xlpe keeps 20), the best checkpoint chosen by dev BLEU (re), the weight decay (dpe-iwslt)
SCHEDULE_SETTINGS = {
    "dpe-iwslt": {"keep_interval_updates": ["5"], "best_checkpoint_metric": ["loss"],
                  "weight_decay": ["0.0001"]},
    "dpe": {"keep_interval_updates": ["5"], "best_checkpoint_metric": ["loss"],
            "weight_decay": ["0.0"]},
    "re": {"keep_interval_updates": ["5"], "best_checkpoint_metric": ["bleu"],
           "weight_decay": ["0.0"]},
    "xlpe": {"keep_interval_updates": ["20"], "best_checkpoint_metric": ["loss"],
             "weight_decay": ["0.0"]},
}

# the architecture names of the sizes small, base and big
SIZE_SUFFIXES = ("", "_wmt_en_de", "_wmt_en_de_big")


def data_bin_variant(model):
    """The variant of OUT/data-bin a model reads."""
    if model == "dpe":
        return "dpe"
    if model == "xlpe" or model.startswith("xlpe-") or model == "encoder-free-inxl":
        return "xlpe"
    return "text"


def is_xl_pe(model):
    return data_bin_variant(model) == "xlpe"


def model_settings(model):
    """``{fairseq option: [accepted values]}`` that a checkpoint of ``model`` (xlpe-train
    MODEL, at any size) was saved with: its architecture and the options that make the model
    what it is (``model_flags``)."""
    def sizes(arch):
        return [arch + suffix for suffix in SIZE_SUFFIXES]

    if model in ("transformer", "dpe"):
        return {"arch": sizes("transformer" if model == "transformer" else "transformer_dpe")}
    if model == "xlpe" or model.startswith("xlpe-"):
        mode = "combination" if model == "xlpe" else model.removeprefix("xlpe-")
        return {"arch": sizes("transformer_xlpe"), "xlpe_mode": [mode]}
    if model.startswith("re-"):
        return {"arch": sizes("transformer_reorder_emb"), "reorder_emb": [model[3:]]}
    if model in ("transformer-8e", "transformer-10e"):
        layers = model.removeprefix("transformer-")
        return {"arch": ["transformer", f"transformer_{layers}_wmt_en_de",
                         "transformer_wmt_en_de_big"]}
    if model == "encoder-free":
        return {"arch": sizes("transformer"), "encoder_layers": ["0"]}
    if model == "encoder-free-inxl":
        return {"arch": sizes("transformer_xlpe"), "xlpe_mode": ["inxl"], "encoder_layers": ["0"]}
    if model in ("encoder-free-nopos", "encoder-free-relpe"):
        return {"arch": sizes("transformer_relpe"), "encoder_layers": ["0"],
                "relative_positions_in": ["none" if model.endswith("nopos") else "decoder"],
                "absolute_positions": ["decoder"]}
    if model == "lstm":
        return {"arch": ["lstm_6l_wmt_en_de"]}
    if model in ("relpe", "rope", "alibi", "t5-bias"):
        return {"arch": sizes("transformer_" + model.replace("-", "_"))}
    return {}


def trained_settings(model, schedule, command=None):
    """``model_settings`` and ``SCHEDULE_SETTINGS`` of a training; where its fairseq-train
    ``command`` is known (the training's record), the value it gave each option, so that
    options passed on after ``--`` count as given."""
    expected = {**model_settings(model), **SCHEDULE_SETTINGS.get(schedule, {})}
    words = list(command or [])
    for name in expected:
        flag = "--" + name.replace("_", "-")
        given = [words[i + 1] for i, word in enumerate(words[:-1]) if word == flag]
        if given:
            expected[name] = [given[-1]]
    return expected


SIZES = ("small", "base", "big")
# The DPE paper's IWSLT'14 size for every model (§4.2: dim 256, FFN 1024, 2+2 layers,
# 2 heads), so that all models compare at one size.
SMALL_DIMS = (
    "--encoder-embed-dim", "256", "--encoder-ffn-embed-dim", "1024", "--encoder-layers", "2",
    "--encoder-attention-heads", "2", "--decoder-embed-dim", "256", "--decoder-ffn-embed-dim",
    "1024", "--decoder-layers", "2", "--decoder-attention-heads", "2",
)
# the model size's own learning rate and dropout where a paper gives none: fairseq's IWSLT'14
# settings (small), Transformer base/big (Vaswani et al. 2017; fairseq's WMT runs)
SIZE_LR_DROPOUT = {"small": ("5e-4", "0.3"), "base": ("7e-4", "0.1"), "big": ("5e-4", "0.3")}


def default_schedule(size, model):
    """The schedule of the paper a model comes from. The small size is IWSLT-sized data, which
    only the DPE paper trained on: every model takes its IWSLT setup there. The plain
    transformer is every paper's baseline: DPE's at base, XL PE's Transformer big at big
    (--schedule re for the Reordering Embeddings paper's baselines)."""
    if size == "small":
        return "dpe-iwslt"
    if model.startswith("re-"):
        return "re"
    if model == "xlpe" or model.startswith(("xlpe-", "encoder-free")) or model == "lstm":
        return "xlpe"
    # the position baselines compare with the Transformer on its schedule
    if model in ("transformer", "relpe", "rope", "alibi", "t5-bias"):
        return "xlpe" if size == "big" else "dpe"
    return "dpe"


def schedule(name, size, tgt):
    """A schedule's numbers at a size: warmup, max_update, batch_gpus (the paper's GPUs of
    max_tokens each), max_tokens, lr, dropout, weight_decay, interval (validation and
    checkpoint), keep (checkpoints kept), extra (further fairseq-train flags; ``tgt`` is the
    target language, for BLEU's detokenizer) and source (where the numbers come from)."""
    lr, dropout = SIZE_LR_DROPOUT[size]
    values = SimpleNamespace(max_tokens=4096, lr=lr, dropout=dropout, weight_decay="0.0",
                             extra=[])
    if name == "dpe-iwslt":
        # DPE §4.2: 15k updates, a validation every 1000 updates, the last 5 checkpoints
        # averaged. Silent on warmup, batch and beam: fairseq's IWSLT'14 settings (warmup
        # 4000, 4096 tokens on 1 GPU) and DPE's WMT beam 5.
        values.__dict__.update(source="DPE (Zheng et al. 2021) §4.2, IWSLT'14", warmup=4000,
                               max_update=15000, batch_gpus=1, interval=1000, keep=5,
                               weight_decay="0.0001")
    elif name == "dpe":
        # DPE §4.2: 8 V100, 300k updates, a validation every 2k, the last 5 checkpoints
        # averaged, beam 5. Silent on warmup, learning rate and length penalty: the authors'
        # published command (github.com/jy6zheng/DynamicPositionEncodingModule:
        # --warmup-updates 8000 --lr 0.0007 --max-tokens 4096 on 8 GPUs, --lenpen 0.6; it
        # stops at 288k updates, the paper says 300k).
        values.__dict__.update(source="DPE (Zheng et al. 2021) §4.2 and the authors' command",
                               warmup=8000, max_update=300000, batch_gpus=8, interval=2000,
                               keep=5)
    elif name == "re":
        # Reordering Embeddings (Chen et al. 2019) §6.3: 4096 x 4 tokens a batch, warmup 8000,
        # 200k updates, a validation every 1000, the checkpoint with the best dev BLEU, beam
        # 4, residual and attention dropout 0.1 (said for base; big keeps 0.3). Silent on the
        # learning rate: the size's.
        values.__dict__.update(
            source="Reordering Embeddings (Chen et al. 2019) §6.3", warmup=8000,
            max_update=200000, batch_gpus=4, interval=1000, keep=5,
            extra=["--attention-dropout", "0.1", "--eval-bleu", "--eval-bleu-args",
                   '{"beam": 4}', "--eval-bleu-detok", "moses", "--eval-bleu-detok-args",
                   f'{{"target_lang": "{tgt}"}}', "--eval-bleu-remove-bpe",
                   "--best-checkpoint-metric", "bleu", "--maximize-best-checkpoint-metric"])
    elif name == "xlpe":
        # XL PE (Ding et al. 2020) §4 says only Transformer big on four V100 (OpenNMT). The
        # rest is its Table 1 baseline's, Transformer big of Vaswani et al. (2017) §5.3, §6.1:
        # warmup 4000, 300k updates, the last 20 checkpoints averaged, beam 4, length penalty
        # 0.6; 4096 tokens on each of the 4 GPUs. 20 big checkpoints with their optimizer
        # state take about 70 GB.
        values.__dict__.update(
            source="XL PE (Ding et al. 2020) §4, else Transformer big (Vaswani et al. 2017)",
            warmup=4000, max_update=300000, batch_gpus=4, interval=1000, keep=20)
    else:
        raise ValueError(f"unknown schedule {name!r}")
    values.average, values.beam, values.lenpen = DECODING[name]
    return values


def model_flags(size, model):
    """The fairseq-train flags of a model at a size (its architecture and options); None for
    an unknown model."""
    suffix = dict(zip(SIZES, SIZE_SUFFIXES))[size]
    dims = list(SMALL_DIMS) if size == "small" else []
    if model == "transformer":
        # fairseq's own architectures: transformer (small dims given), transformer_wmt_en_de*
        flags = ["--arch", f"transformer{suffix}"]
    elif model == "dpe":
        # --order-lambda is the weight of the order loss, (1 - lambda) CE + lambda L_order, as
        # the DPE paper's text ("the weight of the reordering loss", "position loss weight")
        # and the authors' code have it; its Eq. 2 prints the weights the other way round.
        # The paper's values: 0.3 on IWSLT'14 (§4.5), 0.5 on WMT'14 (§4.4, Table 4). Other
        # data take the value of their size: 0.3 for the IWSLT-sized (small: LibreOffice),
        # 0.5 for the WMT-sized (base/big: ASPEC, WMT'17).
        flags = ["--arch", f"transformer_dpe{suffix}", "--order-lambda",
                 "0.3" if size == "small" else "0.5"]
    elif model in ("xlpe", "xlpe-combination", "xlpe-inxl", "xlpe-headxl"):
        # XL PE §3.2: InXL, HeadXL or both (Combination, the paper's best and xlpe's); tau = 4
        # heads read PE_XL (§4, Fig. 3), at the small size 1 of 2
        mode = "combination" if model == "xlpe" else model.removeprefix("xlpe-")
        flags = ["--arch", f"transformer_xlpe{suffix}", "--xlpe-mode", mode]
        if size == "small":
            flags += ["--xlpe-heads", "1"]
    elif model in ("re-encoder", "re-decoder", "re-both"):
        flags = ["--arch", f"transformer_reorder_emb{suffix}", "--reorder-emb", model[3:]]
    elif model in ("transformer-8e", "transformer-10e"):
        # DPE Table 5: 2 (8E) or 4 (10E) encoder layers more than the model's own
        layers = int(model.removeprefix("transformer-").removesuffix("e"))
        flags = {"small": ["--arch", "transformer", "--encoder-layers", str(layers - 4)],
                 "base": ["--arch", f"transformer_{layers}e_wmt_en_de"],
                 "big": ["--arch", "transformer_wmt_en_de_big", "--encoder-layers",
                         str(layers)]}[size]
    elif model == "encoder-free":
        # XL PE Table 4: no encoder layers, embeddings with absolute PE to the decoder
        flags = ["--arch", f"transformer{suffix}", "--encoder-layers", "0"]
    elif model == "encoder-free-inxl":
        # XL PE Table 4: the same with InXL PE
        flags = ["--arch", f"transformer_xlpe{suffix}", "--xlpe-mode", "inxl",
                 "--encoder-layers", "0"]
    elif model in ("encoder-free-nopos", "encoder-free-relpe"):
        # XL PE Table 4: no source positions (noEnc-noPos), then + Shaw relative PE in the
        # decoder's self-attention; the decoder keeps its absolute PE in both
        relative = "decoder" if model == "encoder-free-relpe" else "none"
        flags = ["--arch", f"transformer_relpe{suffix}", "--encoder-layers", "0",
                 "--relative-positions-in", relative, "--absolute-positions", "decoder"]
    elif model in ("relpe", "rope", "alibi", "t5-bias"):
        flags = ["--arch", f"transformer_{model.replace('-', '_')}{suffix}"]
    elif model == "lstm":
        # XL PE Table 4's LSTM (6 layers of 1024) at base and big; at the small size the small
        # Transformer's width and depth. fairseq's lstm has no FFN or head options.
        dims = []
        flags = ["--arch", "lstm_6l_wmt_en_de"]
        if size == "small":
            for side in ("encoder", "decoder"):
                flags += [f"--{side}-embed-dim", "256", f"--{side}-hidden-size", "256",
                          f"--{side}-layers", "2"]
            flags += ["--decoder-out-embed-dim", "256"]
    else:
        return None
    # the size first, so that a model's own layer count (the baselines') wins
    return dims + flags
