"""fairseq-train with PyTorch's DistributedDataParallel (``--ddp-backend c10d``) on the CPU.

fairseq always hands DDP ``device_ids=[device_id]``, which PyTorch accepts only for GPU
modules; without them DDP runs CPU modules over gloo with the same gradient bucketing and
unused-parameter checks as on GPUs. Where ``XLPE_TEST_PARAMETERS`` names a folder, each rank
writes its parameters there after training (``rank{R}.pt``), so that a test can see that the
ranks trained one model. Test helper only: the plugin never patches fairseq.
"""
import os

import fairseq.models.distributed_fairseq_model as distributed_fairseq_model
import fairseq_cli.train
import torch
import torch.distributed as dist
from fairseq_cli.train import cli_main

_DistributedDataParallel = distributed_fairseq_model.DistributedDataParallel


def _without_device_ids(module, device_ids=None, output_device=None, **kwargs):
    return _DistributedDataParallel(module, **kwargs)


class _RecordedTrainer(fairseq_cli.train.Trainer):
    """fairseq's Trainer, remembered so that its model's parameters can be written."""

    made = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.made.append(self)


if __name__ == "__main__":
    distributed_fairseq_model.DistributedDataParallel = _without_device_ids
    fairseq_cli.train.Trainer = _RecordedTrainer
    cli_main()
    folder = os.environ.get("XLPE_TEST_PARAMETERS")
    if folder:
        rank = dist.get_rank() if dist.is_initialized() else 0
        torch.save({name: value.detach() for name, value
                    in _RecordedTrainer.made[0].get_model().state_dict().items()},
                   os.path.join(folder, f"rank{rank}.pt"))
    # fairseq leaves the process group to interpreter shutdown, where a gloo thread can
    # outlive its owner: rank 1 then aborted now and then ("terminate called without an
    # active exception") after training had finished. Take it down while both ranks live.
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
