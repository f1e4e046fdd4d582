"""Reorder positions next to fairseq's binarized parallel data, collated with the source.

A reorder item holds one 0-based position per source BPE token (EOS excluded): where that
token goes in the target-ordered source, or -1 (NO_ORDER_TARGET) for a token without an order
target (``xlpe-reorder --method dpe --unaligned skip``), which only order targets accept;
EOS still gets ``n``. In a batch, ``reorder_positions`` is a LongTensor
shaped like ``src_tokens``: the item's positions, then EOS at the last position ``n``, and
``-1`` wherever ``src_tokens`` is padding (left or right, as the source is padded).
"""
import os

import numpy as np
import torch
from fairseq.data import BaseWrapperDataset, data_utils, indexed_dataset

from ..plugin_errors import ReorderPositionsError
from .reorder_file import NO_ORDER_TARGET, validate_permutation


def reorder_prefix(data_path, split, src, tgt):
    """``{data}/{split}.reorder.{src}-{tgt}`` (fairseq adds ``.bin`` / ``.idx``)."""
    return os.path.join(data_path, f"{split}.reorder.{src}-{tgt}")


def load_reorder_positions(data_path, split, src, tgt, source_sizes, dataset_impl=None):
    """Load ``{split}.reorder.{src}-{tgt}``, or return None when it does not exist.

    Raises ``ReorderPositionsError`` naming the file and the 1-based line when the number
    of lines or a line's length does not match the source (``source_sizes`` counts EOS,
    reorder lines do not). Sharded splits (``train1``...) are not supported: their
    line count will not match.
    """
    prefix = reorder_prefix(data_path, split, src, tgt)
    if not indexed_dataset.dataset_exists(prefix, impl=dataset_impl or "mmap"):
        return None
    try:
        reorder = data_utils.load_indexed_dataset(prefix, None, dataset_impl)
    except (AssertionError, ValueError, OSError) as err:  # fairseq asserts on a bad header
        raise ReorderPositionsError(
            f"{prefix}.idx: not a fairseq index of reorder positions "
            f"({type(err).__name__}{': ' + str(err) if str(err) else ''}); rebuild it with "
            "xlpe-binarize") from None
    if len(reorder) != len(source_sizes):
        raise ReorderPositionsError(
            f"{prefix}.bin: {len(reorder)} lines, but the source {split} split has "
            f"{len(source_sizes)} sentences; rebuild it with xlpe-reorder and xlpe-binarize "
            "from the same BPE text that fairseq-preprocess binarized"
        )
    expected = np.asarray(source_sizes) - 1
    bad = np.flatnonzero(np.asarray(reorder.sizes) != expected)
    if len(bad):
        line = int(bad[0])
        raise ReorderPositionsError(
            f"{prefix}.bin line {line + 1}: expected {expected[line]} positions (one per "
            f"source BPE token, EOS excluded), found {reorder.sizes[line]} "
            f"({len(bad)} lines differ)"
        )
    return reorder


def collate_positions(src_tokens, padding_idx, positions):
    """Lay per-sentence positions (EOS excluded) over a padded ``src_tokens`` batch.

    Each row gets its sentence's positions, then ``n`` for EOS, in the non-padding slots,
    whichever side the padding is on; padding gets -1.
    """
    collated = src_tokens.new_full(src_tokens.shape, -1)
    with_eos = [torch.cat([p.long(), p.new_tensor([p.numel()]).long()]) for p in positions]
    collated[src_tokens.ne(padding_idx)] = torch.cat(with_eos).to(src_tokens.device)
    return collated


class LanguagePairWithReorderDataset(BaseWrapperDataset):
    """A ``LanguagePairDataset`` whose batches also carry ``reorder_positions``.

    Positions are always in ``sample["reorder_positions"]`` (targets for the order loss) and,
    when ``positions_as_input`` is set by the task for models that read them (XL PE), also in
    ``sample["net_input"]``, which is what ``fairseq-generate`` hands to the encoder.

    Items are validated when read: a permutation of 0..n-1 when the model reads positions as
    input, otherwise (order targets) -1 is allowed and the others must be a permutation of
    0..m-1.

    ``noise`` > 0 is the XL PE paper's noise attack (Ding et al. 2020, §4.5, Fig. 4): in
    expectation a fraction ``noise`` of each sentence's tokens get another token's position,
    by swaps of two positions (see ``_swap``). A sentence's corruption is drawn once from
    ``seed`` and its index and is the same in every epoch; ``noise_redraw`` draws it anew
    each epoch instead.
    """

    def __init__(self, dataset, reorder, reorder_path, positions_as_input=False,
                 noise=0.0, seed=1, noise_redraw=False):
        super().__init__(dataset)
        self.reorder = reorder
        self.reorder_path = reorder_path
        self.positions_as_input = positions_as_input
        self.noise = noise
        self.noise_redraw = noise_redraw
        self.seed = seed
        self.epoch = 1

    def set_epoch(self, epoch):
        self.epoch = epoch
        super().set_epoch(epoch)

    def num_tokens_vec(self, indices):
        return self.dataset.num_tokens_vec(indices)

    def __getitem__(self, index):
        example = self.dataset[index]
        positions = self.reorder[index].long()
        self._validate(positions, index)
        if self.noise > 0 and positions.numel() > 1:
            positions = self._swap(positions, index)
        example["reorder_positions"] = positions
        return example

    def _validate(self, positions, index):
        n = positions.numel()
        if not n:
            return
        where = f"{self.reorder_path}.bin line {index + 1}"
        ranked = positions[positions.ne(NO_ORDER_TARGET)]
        m = ranked.numel()
        if m < n and self.positions_as_input:
            raise ReorderPositionsError(
                f"{where}: token {int(positions.eq(NO_ORDER_TARGET).nonzero()[0])} has no "
                f"position ({NO_ORDER_TARGET}, written by `xlpe-reorder --method dpe --unaligned "
                "skip`), but this model reads positions as input and needs a full permutation "
                "of the source: extract them with --method btg (XL PE) or --unaligned keep"
            )
        if m and (ranked.min() < 0 or ranked.max() >= m
                  or torch.bincount(ranked, minlength=m).max() > 1):
            validate_permutation(positions.tolist(), n, where, allow_no_target=True)

    def _swap(self, positions, index):
        """XL PE's footnote 4, "we randomly swap two reordered positional indexes": disjoint
        pairs of tokens exchange their positions, so the result stays a permutation and each
        swap corrupts exactly two tokens. A sentence of n tokens gets ``noise·n/2`` swaps,
        rounded down or up at random so that the expected number of corrupted tokens is
        exactly ``noise·n`` (5% of 27 tokens is 0.675 swaps: one swap in 67.5% of such
        sentences, none in the others), at most ``n // 2``."""
        n = positions.numel()
        # a generator of its own: fairseq collates in a background thread, and numpy's global
        # state is shared with the main thread
        key = (self.seed, self.epoch, index) if self.noise_redraw else (self.seed, index)
        rng = np.random.default_rng(key)
        expected_swaps = self.noise * n / 2
        swaps = min(int(expected_swaps) + int(rng.random() < expected_swaps % 1), n // 2)
        if swaps == 0:
            return positions
        chosen = torch.from_numpy(rng.choice(n, size=2 * swaps, replace=False))
        first, second = chosen[:swaps], chosen[swaps:]
        noisy = positions.clone()
        noisy[first] = positions[second]
        noisy[second] = positions[first]
        return noisy

    def collater(self, samples, pad_to_length=None):
        batch = self.dataset.collater(samples, pad_to_length=pad_to_length)
        if not batch:
            return batch
        by_id = {s["id"]: s["reorder_positions"] for s in samples}
        reorder_positions = collate_positions(
            batch["net_input"]["src_tokens"], self.dataset.src_dict.pad(),
            [by_id[sample_id] for sample_id in batch["id"].tolist()],
        )
        batch["reorder_positions"] = reorder_positions
        if self.positions_as_input:
            batch["net_input"]["reorder_positions"] = reorder_positions
        return batch
