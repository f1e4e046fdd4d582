"""The schedules of xlpe-train (examples/train.sh, examples/train-*.sh): each paper's
schedule (optimization, batch, checkpoints, and what xlpe-evaluate decodes with) and the
demo's, and the fairseq options a checkpoint of a model and schedule was saved with (what
tells it from another's). The models and their sizes are xlpe_fairseq/model_registry.py's.
tests/workflow/test_schedules.py and tests/recipes/test_training_scripts.py hold them to the
papers' values through ``--dry-run``.
"""
from types import SimpleNamespace

from ..model_registry import checkpoint_settings

SCHEDULES = ("dpe-iwslt", "dpe", "re", "xlpe", "demo")

# (checkpoints averaged, 0 for checkpoint_best.pt; beam; length penalty) of each schedule
# (``schedule`` below gives the papers' sections)
DECODING = {
    "dpe-iwslt": (5, 5, "1.0"),
    "dpe": (5, 5, "0.6"),
    "re": (0, 4, "1.0"),
    "xlpe": (20, 4, "0.6"),
    "demo": (0, 5, "1.0"),
}

# the options xlpe-train gives each schedule that no other schedule shares: checkpoints
# kept (xlpe keeps 20, the demo 1), the best checkpoint chosen by dev BLEU (re), the weight
# decay (dpe-iwslt)
SCHEDULE_SETTINGS = {
    "dpe-iwslt": {"keep_interval_updates": ["5"], "best_checkpoint_metric": ["loss"],
                  "weight_decay": ["0.0001"]},
    "dpe": {"keep_interval_updates": ["5"], "best_checkpoint_metric": ["loss"],
            "weight_decay": ["0.0"]},
    "re": {"keep_interval_updates": ["5"], "best_checkpoint_metric": ["bleu"],
           "weight_decay": ["0.0"]},
    "xlpe": {"keep_interval_updates": ["20"], "best_checkpoint_metric": ["loss"],
             "weight_decay": ["0.0"]},
    "demo": {"keep_interval_updates": ["1"], "best_checkpoint_metric": ["loss"],
             "weight_decay": ["0.0"]},
}


def trained_settings(model, schedule, command=None):
    """The model's ``checkpoint_settings`` and the schedule's ``SCHEDULE_SETTINGS``; where the
    training's fairseq-train ``command`` is known (its record), the value it gave each option,
    so that options passed on after ``--`` count as given."""
    expected = {**checkpoint_settings(model), **SCHEDULE_SETTINGS.get(schedule, {})}
    words = list(command or [])
    for name in expected:
        flag = "--" + name.replace("_", "-")
        given = [words[i + 1] for i, word in enumerate(words[:-1]) if word == flag]
        if given:
            expected[name] = [given[-1]]
    return expected


# the model size's own learning rate and dropout where a paper gives none: fairseq's IWSLT'14
# settings (small), Transformer base/big (Vaswani et al. 2017; fairseq's WMT runs), the demo's
SIZE_LR_DROPOUT = {"small": ("5e-4", "0.3"), "base": ("7e-4", "0.1"), "big": ("5e-4", "0.3"),
                   "demo": ("0.002", "0.2")}


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
    elif name == "demo":
        # The README's demo (examples/demo.sh), minutes on 2 CPU cores: 500 updates of 4096
        # tokens, warm-up 200, the size's learning rate and dropout (the demo size's: 0.002,
        # 0.2); a validation and a checkpoint every 100 updates, the best decoded, beam 5
        values.__dict__.update(source="the README's demo, examples/demo.sh", warmup=200,
                               max_update=500, batch_gpus=1, interval=100, keep=1)
    else:
        raise ValueError(f"unknown schedule {name!r}")
    values.average, values.beam, values.lenpen = DECODING[name]
    return values
