"""A node's GPUs shared among a study's runs: each run trained at once gets GPUs of its own.

Every process sees the default device, so runs started side by side would all train on GPU 0.
A run gets a group of ``--gpus-per-run`` GPUs through ``CUDA_VISIBLE_DEVICES`` for its
training and decoding (fairseq-train runs DDP over a group of several); its command records
them. With more runs at once than groups, the groups are shared evenly.
"""
import contextlib
import os
import threading

from ...io import InputError


def visible_gpus():
    """The GPUs CUDA shows, as names for ``CUDA_VISIBLE_DEVICES``: its own entries where it is
    set (so a node's share given by a scheduler is kept), else ``0 .. count-1``."""
    import torch

    count = torch.cuda.device_count()
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return [str(k) for k in range(count)]
    return [name.strip() for name in listed.split(",") if name.strip()][:count]


class GpuPlacement:
    """Groups of ``per_run`` of the ``gpus``; a run takes the group the fewest runs use."""

    def __init__(self, gpus, per_run):
        if per_run > len(gpus):
            raise InputError(f"--gpus-per-run {per_run}: CUDA shows {len(gpus)} GPU"
                             f"{'s' if len(gpus) != 1 else ''} here")
        self.groups = [tuple(gpus[k:k + per_run])
                       for k in range(0, len(gpus) - per_run + 1, per_run)]
        self.users = [0] * len(self.groups)
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def place(self):
        """The GPUs of one run, for as long as it runs."""
        with self.lock:
            group = min(range(len(self.groups)), key=self.users.__getitem__)
            self.users[group] += 1
        try:
            yield self.groups[group]
        finally:
            with self.lock:
                self.users[group] -= 1


def placement(study):
    """The study's GpuPlacement on this machine; None where its runs train on the CPU or CUDA
    shows no GPU (the runs then keep the environment they are given)."""
    per_run = study.gpus_per_run()
    if not per_run:
        return None
    gpus = visible_gpus()
    return GpuPlacement(gpus, per_run) if gpus else None


def device_environment(gpus):
    """The environment entries that give a run ``gpus``: none for none."""
    return {"CUDA_VISIBLE_DEVICES": ",".join(gpus)} if gpus else {}
