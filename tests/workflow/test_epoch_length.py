"""An epoch counted as fairseq batches it, and the numbered checkpoints a training keeps: none
at an epoch's end, so none at all where every update ends one (a tiny corpus)."""
import numpy as np
import pytest
import torch
from fairseq.data import data_utils
from fairseq.data.indexed_dataset import MMapIndexedDatasetBuilder

from xlpe_fairseq.workflow.epoch_length import (
    batches_per_epoch,
    numbered_checkpoints,
    updates_per_epoch,
)


def binarized(folder, sources, targets):
    """A train split of sentences of these lengths (EOS included), as fairseq-preprocess
    writes one."""
    for lang, sizes in (("xx", sources), ("yy", targets)):
        builder = MMapIndexedDatasetBuilder(str(folder / f"train.xx-yy.{lang}.bin"),
                                            dtype=np.int32)
        for size in sizes:
            builder.add_item(torch.ones(int(size), dtype=torch.int32))
        builder.finalize(str(folder / f"train.xx-yy.{lang}.idx"))


def fairseqs_batches(sources, targets, max_tokens):
    """fairseq's own count: LanguagePairDataset's order, data_utils.batch_by_size."""
    order = np.arange(len(sources))
    order = order[np.argsort(targets[order], kind="mergesort")]
    order = order[np.argsort(sources[order], kind="mergesort")]
    tokens = np.maximum(sources, targets)
    return len(data_utils.batch_by_size(order, lambda i: tokens[i], max_tokens=max_tokens,
                                        num_tokens_vec=tokens[order]))


@pytest.mark.parametrize("seed", range(6))
def test_the_batches_are_fairseqs(tmp_path, seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 2000))
    sources, targets = rng.integers(1, 150, count), rng.integers(1, 150, count)
    binarized(tmp_path, sources, targets)
    max_tokens = int(rng.integers(150, 5000))
    assert batches_per_epoch(str(tmp_path), "xx", "yy", max_tokens, 10 ** 9) == (
        fairseqs_batches(sources, targets, max_tokens))


def test_updates_per_epoch_count_processes_and_accumulation(tmp_path):
    binarized(tmp_path, [10] * 100, [10] * 100)  # 10 sentences a batch of 100 tokens: 10
    assert updates_per_epoch(str(tmp_path), "xx", "yy", 100, 1, 1, 50) == 10
    assert updates_per_epoch(str(tmp_path), "xx", "yy", 100, 2, 2, 50) == 3
    # an epoch longer than the training ends nowhere in it
    assert updates_per_epoch(str(tmp_path), "xx", "yy", 100, 1, 1, 9) is None
    assert updates_per_epoch(str(tmp_path / "none"), "xx", "yy", 100, 1, 1, 50) is None


@pytest.mark.parametrize("max_update, interval, keep, per_epoch, saved", [
    (15000, 1000, 5, None, 5),
    (300, 20, 5, 1, 0),  # every update ends an epoch
    (300, 20, 5, 40, 5),  # every second interval ends one
    (60, 20, 5, 40, 2),
    (60, 20, 5, 7, 3),
])
def test_no_numbered_checkpoint_where_an_epoch_ends(max_update, interval, keep, per_epoch,
                                                    saved):
    assert numbered_checkpoints(max_update, interval, keep, per_epoch) == saved
