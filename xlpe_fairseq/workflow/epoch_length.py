"""How many updates an epoch of fairseq-train takes on a data-bin, and so how many numbered
checkpoints a training keeps for xlpe-evaluate to average.

fairseq saves ``checkpoint_E_U.pt`` every ``--save-interval-updates`` updates, but not at the
last update of an epoch (``checkpoint_utils.save_checkpoint``: only ``checkpoint_best.pt`` and
``checkpoint_last.pt`` are saved there, and epoch checkpoints are off). On a tiny corpus every
update can end an epoch: no numbered checkpoint is ever written, and xlpe-evaluate scores
``checkpoint_best.pt``. The epoch is counted as fairseq batches it: the training split's
sentences ordered by source, then target length, cut greedily into batches of at most
``--max-tokens`` tokens, a batch's tokens its longest side times its sentences.
"""
import math
import os

import numpy as np

from ..data.indexed_files import HEADER, MMAP_MAGIC


def sentence_sizes(index):
    """The sentence lengths (EOS included) of a fairseq ``.idx`` file, None where it cannot
    be read as fairseq's mmap format."""
    try:
        with open(index, "rb") as stream:
            header = stream.read(HEADER.size)
        if len(header) < HEADER.size or not header.startswith(MMAP_MAGIC):
            return None
        count = HEADER.unpack(header)[3]
        sizes = np.fromfile(index, dtype=np.int32, count=count, offset=HEADER.size)
    except (OSError, ValueError):
        return None
    return sizes if len(sizes) == count else None


def batches_per_epoch(data_bin, src, tgt, max_tokens, most):
    """The batches of an epoch over ``data_bin``'s train split, counted up to ``most``; None
    where its sizes cannot be read."""
    prefix = os.path.join(data_bin, f"train.{src}-{tgt}.")
    sources, targets = (sentence_sizes(prefix + f"{lang}.idx") for lang in (src, tgt))
    if sources is None or targets is None or len(sources) != len(targets):
        return None
    # LanguagePairDataset.ordered_indices (its ties cut differently, the same lengths)
    order = np.lexsort((targets, sources))
    batches, longest, count = 0, 0, 0
    for tokens in np.maximum(sources, targets)[order].tolist():
        if count and max(longest, tokens) * (count + 1) > max_tokens:
            batches, longest, count = batches + 1, 0, 0
            if batches >= most:
                return most
        longest, count = max(longest, tokens), count + 1
    return batches + (count > 0)


def updates_per_epoch(data_bin, src, tgt, max_tokens, processes, update_freq, max_update):
    """The updates of an epoch of ``processes`` each accumulating ``update_freq`` batches,
    where one ends within ``max_update`` updates; None where none does, or the sizes cannot
    be read."""
    most = max_update * update_freq * processes + 1
    batches = batches_per_epoch(data_bin, src, tgt, max_tokens, most)
    if batches is None or batches >= most:
        return None
    return math.ceil(math.ceil(batches / processes) / update_freq)


def numbered_checkpoints(max_update, interval, keep, per_epoch=None):
    """The numbered checkpoints a training of ``max_update`` updates keeps: one every
    ``interval`` updates, but not where an epoch of ``per_epoch`` updates ends, the last
    ``keep``."""
    saved = max_update // interval
    if per_epoch:
        saved -= max_update // math.lcm(interval, per_epoch)
    return min(saved, keep)
