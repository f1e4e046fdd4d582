"""What a fairseq checkpoint saves of its training, without weights."""
import argparse


def fairseq_state(arch, keep=5, metric="loss", weight_decay=0.0001, **model):
    """A checkpoint's saved settings as fairseq 0.12 saves them (``cfg`` with the model's
    Namespace), without weights."""
    return {"model": {}, "cfg": {
        "model": argparse.Namespace(arch=arch, **model),
        "checkpoint": {"keep_interval_updates": keep, "best_checkpoint_metric": metric},
        "optimizer": {"weight_decay": weight_decay}}}
