"""``translation_reorder``: fairseq's translation task plus cross-lingual reorder positions.

Each split may have ``{split}.reorder.{src}-{tgt}.{bin,idx}`` beside fairseq's binarized text
(written by ``xlpe-reorder`` + ``xlpe-binarize``). A model declares what it does with them in
its class attribute ``reorder_positions_role``:

- ``"input"`` (XL PE): every split needs positions, and they go into ``net_input``;
- ``"order_target"`` (DPE): the training split needs them for the order loss; nothing at
  test time;
- ``None`` (Reordering Embeddings, fairseq's ``transformer``): positions are optional.
"""
import logging
import os
from dataclasses import dataclass, field

from fairseq import utils
from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask
from omegaconf import II

from ..data.reorder_dataset import (
    LanguagePairWithReorderDataset,
    ReorderPositionsError,
    load_reorder_positions,
    reorder_prefix,
)

logger = logging.getLogger(__name__)

ROLE_INPUT = "input"
ROLE_ORDER_TARGET = "order_target"


@dataclass
class TranslationReorderConfig(TranslationConfig):
    reorder_noise: float = field(
        default=0.0,
        metadata={
            "help": "noise attack of XL PE (Ding et al. 2020, Fig. 4): in each training "
            "sentence this fraction of tokens exchange their reorder positions; 0 disables"
        },
    )
    seed: int = II("common.seed")


@register_task("translation_reorder", dataclass=TranslationReorderConfig)
class TranslationReorderTask(TranslationTask):
    """Translation whose batches carry ``reorder_positions`` (see module docstring)."""

    cfg: TranslationReorderConfig

    def __init__(self, cfg, src_dict, tgt_dict):
        super().__init__(cfg, src_dict, tgt_dict)
        if not 0.0 <= cfg.reorder_noise <= 1.0:
            raise ValueError(f"--reorder-noise must be in [0, 1], got {cfg.reorder_noise}")
        self.reorder_role = None

    def _data_path(self, split, epoch):
        paths = utils.split_paths(self.cfg.data)
        if split != self.cfg.train_subset:
            paths = paths[:1]
        return paths[(epoch - 1) % len(paths)]

    def load_dataset(self, split, epoch=1, combine=False, **kwargs):
        super().load_dataset(split, epoch=epoch, combine=combine, **kwargs)
        pair = self.datasets[split]
        src, tgt = self.cfg.source_lang, self.cfg.target_lang
        data_path = self._data_path(split, epoch)
        reorder = load_reorder_positions(
            data_path, split, src, tgt, pair.src_sizes, self.cfg.dataset_impl
        )
        if reorder is None:
            self._require_positions(split, data_path)
            return
        if self.cfg.truncate_source:
            raise ReorderPositionsError(
                "--truncate-source cuts source sentences but not their reorder positions; "
                "filter long sentences before xlpe-reorder instead"
            )
        self.datasets[split] = LanguagePairWithReorderDataset(
            pair,
            reorder,
            reorder_prefix(data_path, split, src, tgt),
            positions_as_input=self.reorder_role == ROLE_INPUT,
            noise=self.cfg.reorder_noise if split == self.cfg.train_subset else 0.0,
            seed=self.cfg.seed,
        )

    def _require_positions(self, split, data_path):
        """Fail loudly where fairseq would silently train or decode without positions."""
        needed = self.reorder_role == ROLE_INPUT or (
            self.reorder_role == ROLE_ORDER_TARGET and split == self.cfg.train_subset
        )
        if needed:
            prefix = reorder_prefix(data_path, split, self.cfg.source_lang, self.cfg.target_lang)
            raise FileNotFoundError(
                f"{prefix}.bin/.idx not found: this model needs reorder positions for the "
                f"{split!r} split. Write {split}.reorder with xlpe-reorder and binarize it "
                f"with `xlpe-binarize --split {split} --destdir {data_path}`."
            )

    def build_model(self, cfg, from_checkpoint=False):
        model = super().build_model(cfg, from_checkpoint)
        role = getattr(model, "reorder_positions_role", None)
        if role == ROLE_INPUT or self.reorder_role is None:
            self.reorder_role = role
        # fairseq-train loads the validation splits before the model exists
        for split, dataset in self.datasets.items():
            if isinstance(dataset, LanguagePairWithReorderDataset):
                dataset.positions_as_input = self.reorder_role == ROLE_INPUT
            else:
                self._require_positions(split, self._data_path(split, 1))
        return model

    def build_dataset_for_inference(self, src_tokens, src_lengths, constraints=None):
        if self.reorder_role == ROLE_INPUT:
            raise ReorderPositionsError(
                "this model reads reorder positions, and raw input has none: "
                "translate a binarized split that has {split}.reorder files instead"
            )
        return super().build_dataset_for_inference(src_tokens, src_lengths, constraints)
