"""The models and schedules of examples/train_common.sh, as the workflow commands read them:
which data-bin a model reads, what each schedule decodes with, and the fairseq options a
checkpoint of a model and schedule was saved with (what tells it from another's).

train_common.sh stays the source of the training commands; tests/workflow/test_schedules.py
holds these tables to what its ``--dry-run`` prints.
"""
MODELS = (
    "transformer", "dpe", "xlpe", "xlpe-combination", "xlpe-inxl", "xlpe-headxl", "re-encoder",
    "re-decoder", "re-both", "transformer-8e", "transformer-10e", "encoder-free",
    "encoder-free-inxl", "encoder-free-nopos", "encoder-free-relpe", "lstm", "relpe", "rope",
    "alibi", "t5-bias",
)
SCHEDULES = ("dpe-iwslt", "dpe", "re", "xlpe")

# (checkpoints averaged, 0 for checkpoint_best.pt; beam; length penalty) of each schedule, as
# set_schedule has them (its comments give the papers' sections)
DECODING = {
    "dpe-iwslt": (5, 5, "1.0"),
    "dpe": (5, 5, "0.6"),
    "re": (0, 4, "1.0"),
    "xlpe": (20, 4, "0.6"),
}

# the options train_common.sh gives each schedule that no other schedule shares: checkpoints
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
    """The variant of OUT/data-bin a model reads (model_data_bin in train_common.sh)."""
    if model == "dpe":
        return "dpe"
    if model == "xlpe" or model.startswith("xlpe-") or model == "encoder-free-inxl":
        return "xlpe"
    return "text"


def is_xl_pe(model):
    return data_bin_variant(model) == "xlpe"


def model_settings(model):
    """``{fairseq option: [accepted values]}`` that a checkpoint of ``model`` (examples/train.sh
    MODEL, at any size) was saved with: its architecture and the options that make the model
    what it is (set_model in train_common.sh)."""
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
