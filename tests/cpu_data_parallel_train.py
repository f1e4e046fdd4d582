"""fairseq-train with PyTorch's DistributedDataParallel (``--ddp-backend c10d``) on the CPU.

fairseq always hands DDP ``device_ids=[device_id]``, which PyTorch accepts only for GPU
modules; without them DDP runs CPU modules over gloo with the same gradient bucketing and
unused-parameter checks as on GPUs. Test helper only: the plugin never patches fairseq.
"""
import fairseq.models.distributed_fairseq_model as distributed_fairseq_model
import torch.distributed as dist
from fairseq_cli.train import cli_main

_DistributedDataParallel = distributed_fairseq_model.DistributedDataParallel


def _without_device_ids(module, device_ids=None, output_device=None, **kwargs):
    return _DistributedDataParallel(module, **kwargs)


if __name__ == "__main__":
    distributed_fairseq_model.DistributedDataParallel = _without_device_ids
    cli_main()
    # fairseq leaves the process group to interpreter shutdown, where a gloo thread can
    # outlive its owner: rank 1 then aborted now and then ("terminate called without an
    # active exception") after training had finished. Take it down while both ranks live.
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
