"""``translation_reorder``: fairseq's translation task plus cross-lingual reorder positions.

Each split may have ``{split}.reorder.{src}-{tgt}.{bin,idx}`` beside fairseq's binarized text
(written by ``xlpe-reorder`` + ``xlpe-binarize``). A model declares what it does with them in
its class attribute ``reorder_positions_role``:

- ``"input"`` (XL PE): every split needs positions, and they go into ``net_input``; they must
  be full permutations (a -1 of ``xlpe-reorder --unaligned skip`` is refused, naming the file
  and line, when the item is read);
- ``"order_target"`` (DPE): the training split needs them for the order loss, which leaves
  out tokens marked -1; nothing at test time;
- ``None`` (Reordering Embeddings, fairseq's ``transformer``): positions are optional.

With ``--preorderer`` (a checkpoint of ``xlpe-preorder-train``), a split without reorder files,
and every ``fairseq-interactive`` input, gets positions predicted from the source alone.
Files win where both exist, so a ``fairseq-generate`` run on written ``{split}.reorder``
files is reproducible. ``--preorderer-nbest N`` instead decodes each sentence with each of the
preorderer's N best reorderings (``preordering.btg_kbest``) and keeps one translation.
"""
import logging
import os
from dataclasses import dataclass, field
from typing import Optional

import torch

from fairseq import utils
from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask
from omegaconf import II

from ..data.indexed_files import check_indexed_file, check_language_pair_files
from ..data.prefetch_shutdown import stop_prefetch_threads_at_exit
from ..data.positions_note import positions_note
from ..data.reorder_dataset import (
    LanguagePairWithReorderDataset,
    collate_positions,
    load_reorder_positions,
    reorder_prefix,
)
from ..io import FINITE, Number, positive_int
from ..plugin_errors import (InputError, MissingReorderPositionsError, OptionError,
                             ReorderPositionsError)
from .data_provenance import DataProvenance

logger = logging.getLogger(__name__)

ROLE_INPUT = "input"
ROLE_ORDER_TARGET = "order_target"


@dataclass
class TranslationReorderConfig(TranslationConfig):
    reorder_noise: float = field(
        default=0.0,
        metadata={
            "help": "noise attack of XL PE (Ding et al. 2020, Fig. 4): random swaps of two "
            "reorder positions in each training sentence, so that in expectation this "
            "fraction of its tokens (2 per swap) get a wrong position; the swaps of a "
            "sentence are drawn once, from --seed and its index; 0 disables"
        },
    )
    reorder_noise_redraw: bool = field(
        default=False,
        metadata={"help": "draw the --reorder-noise swaps anew every epoch"},
    )
    preorderer: Optional[str] = field(
        default=None,
        metadata={
            "help": "source-only preorderer checkpoint (xlpe-preorder-train, or an ensemble of "
            "xlpe-preorder-ensemble) that predicts "
            "reorder positions for splits without {split}.reorder files and for "
            "fairseq-interactive input"
        },
    )
    preorderer_nbest: int = field(
        default=1,
        metadata={
            "help": "translate each sentence once for each of the preorderer's N best BTG "
            "reorderings (XL PE models; needs --preorderer, whose candidates replace any "
            "{split}.reorder positions at test time) and keep the translation whose beam "
            "score plus --preorderer-nbest-weight times the reordering's search score is "
            "highest; N times the decoding time"
        },
    )
    preorderer_nbest_weight: float = field(
        default=0.1,
        metadata={"help": "weight of the preorderer's search score in --preorderer-nbest's "
                  "choice (0: the translation model alone chooses)"},
    )
    seed: int = II("common.seed")
    # where fairseq-train restores from, for the resume check of DataProvenance
    save_dir: str = II("checkpoint.save_dir")
    restore_file: str = II("checkpoint.restore_file")
    finetune_from_model: Optional[str] = II("checkpoint.finetune_from_model")


@register_task("translation_reorder", dataclass=TranslationReorderConfig)
class TranslationReorderTask(DataProvenance, TranslationTask):
    """Translation whose batches carry ``reorder_positions`` (see module docstring)."""

    cfg: TranslationReorderConfig
    # choices of decoding only: they do not change what a run trains, so a study does not
    # hold them against the seeds of one row (evaluation.study.runs.trained_options)
    decoding_options = ("preorderer_nbest", "preorderer_nbest_weight")

    def __init__(self, cfg, src_dict, tgt_dict):
        super().__init__(cfg, src_dict, tgt_dict)
        Number(float, minimum=0, maximum=1).check("--reorder-noise", cfg.reorder_noise)
        positive_int.check("--preorderer-nbest", cfg.preorderer_nbest)
        FINITE.check("--preorderer-nbest-weight", cfg.preorderer_nbest_weight)
        if cfg.preorderer_nbest > 1 and not cfg.preorderer:
            raise OptionError("--preorderer-nbest chooses among the preorderer's reorderings: "
                              "pass --preorderer PREORDERER.pt")
        self.reorder_role = None
        self.preorderer = None
        if cfg.preorderer:
            from ..preordering.preorderer import Preorderer  # torch-only; loaded on demand

            # loaded now, so that a wrong path fails even where every split has reorder
            # files and the preorderer would never be asked
            self.preorderer = Preorderer.load(cfg.preorderer)
        # fairseq leaves its prefetch threads collating at exit, which can abort the process
        stop_prefetch_threads_at_exit()

    def _data_path(self, split, epoch):
        paths = utils.split_paths(self.cfg.data)
        if split != self.cfg.train_subset:
            paths = paths[:1]
        return paths[(epoch - 1) % len(paths)]

    def load_dataset(self, split, epoch=1, combine=False, **kwargs):
        src, tgt = self.cfg.source_lang, self.cfg.target_lang
        data_path = self._data_path(split, epoch)
        reorder_path = reorder_prefix(data_path, split, src, tgt)
        # a truncated or foreign file as one line naming it, before fairseq maps it
        check_language_pair_files(data_path, split, (src, tgt), (self.src_dict, self.tgt_dict),
                                  combine)
        if os.path.exists(reorder_path + ".idx"):
            check_indexed_file(reorder_path)
        super().load_dataset(split, epoch=epoch, combine=combine, **kwargs)
        pair = self.datasets[split]
        if self.cfg.truncate_source and os.path.exists(reorder_path + ".idx"):
            raise ReorderPositionsError(
                "--truncate-source cuts source sentences but not their reorder positions; "
                "filter long sentences before xlpe-reorder instead"
            )
        reorder = load_reorder_positions(
            data_path, split, src, tgt, pair.src_sizes, self.cfg.dataset_impl
        )
        if reorder is None and self.cfg.preorderer:
            reorder = self.predict_positions(pair.src[i] for i in range(len(pair.src)))
            reorder_path = f"{self.cfg.preorderer} predictions for {split}"
        if reorder is None:
            self._require_positions(split, data_path)
            return
        self.datasets[split] = LanguagePairWithReorderDataset(
            pair,
            reorder,
            reorder_path,
            positions_as_input=self.reorder_role == ROLE_INPUT,
            noise=self.cfg.reorder_noise if split == self.cfg.train_subset else 0.0,
            seed=self.cfg.seed,
            noise_redraw=self.cfg.reorder_noise_redraw,
        )

    def predict_positions(self, source_token_ids):
        """Preorderer positions for binarized source sentences (EOS-terminated id tensors)."""
        return [torch.IntTensor(p)
                for p in self.preorderer.predict(self.source_tokens(source_token_ids))]

    def source_tokens(self, source_token_ids):
        """The preorderer's input: the source tokens of each id tensor, EOS left out."""
        eos = self.src_dict.eos()
        return [[self.src_dict[i] for i in ids.tolist() if i != eos] for ids in source_token_ids]

    def _require_positions(self, split, data_path):
        """Fail loudly where fairseq would silently train or decode without positions."""
        needed = self.reorder_role == ROLE_INPUT or (
            self.reorder_role == ROLE_ORDER_TARGET and split == self.cfg.train_subset
        )
        if not needed:
            return
        src, tgt = self.cfg.source_lang, self.cfg.target_lang
        prefix = reorder_prefix(data_path, split, src, tgt)
        # a data-bin made without them on purpose says why, and what makes them
        note = positions_note(data_path, split)
        if note:
            raise MissingReorderPositionsError(note)
        model = self.model_arch
        if self.reorder_role == ROLE_INPUT:
            model = f"{model} --xlpe-mode {getattr(self.model_cfg, 'xlpe_mode', 'combination')}"
        raise MissingReorderPositionsError(
            f"{prefix}.bin/.idx not found: the model is {model}, which reads reorder "
            f"positions for the {split!r} split, and {data_path} has none; binarize them "
            "beside fairseq's files (docs/pipeline.md: file formats) or pass --preorderer"
        )

    def build_model(self, cfg, from_checkpoint=False):
        if getattr(cfg, "share_all_embeddings", False) and self.src_dict != self.tgt_dict:
            # fairseq's ValueError, a traceback, does not say which files differ
            data = utils.split_paths(self.cfg.data)[0]
            raise InputError(
                f"{data}: dict.{self.cfg.source_lang}.txt and dict.{self.cfg.target_lang}.txt "
                "differ, but the model shares all embeddings (--share-all-embeddings, a joined "
                "dictionary): use the data-bin binarized with --joined-dictionary")
        model = super().build_model(cfg, from_checkpoint)
        # named in the errors about a data-bin that does not fit the model
        self.model_cfg = cfg
        self.model_arch = getattr(cfg, "arch", None) or getattr(cfg, "_name", "the model")
        if not from_checkpoint:  # fairseq-train: is the checkpoint it restores this run's?
            self.check_resume(model)
        if from_checkpoint:
            self._name_dictionary_mismatch(model)
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

    def _name_dictionary_mismatch(self, model):
        """Refuse, naming the dictionary, weights whose embeddings do not fit this data-bin's
        dictionaries: fairseq's own error lists every tensor of another size. (A checkpoint
        that records the data it was trained on is refused before, by DataProvenance.)"""
        load = model.load_state_dict
        sides = {"encoder": (self.src_dict, self.cfg.source_lang),
                 "decoder": (self.tgt_dict, self.cfg.target_lang)}

        def load_state_dict(state_dict, *args, **kwargs):
            for side, (dictionary, lang) in sides.items():
                weight = state_dict.get(f"{side}.embed_tokens.weight")
                if weight is not None and weight.shape[0] != len(dictionary):
                    data = utils.split_paths(self.cfg.data)[0]
                    raise InputError(
                        f"{os.path.join(data, f'dict.{lang}.txt')}: {len(dictionary)} entries, "
                        f"but the checkpoint's {side} embeddings hold {weight.shape[0]}: it was "
                        "trained with another dictionary; decode with the data-bin it was "
                        "trained on")
            return load(state_dict, *args, **kwargs)

        model.load_state_dict = load_state_dict

    def get_batch_iterator(self, dataset, epoch=1, disable_iterator_cache=False,
                           update_epoch_batch_itr=False, **kwargs):
        """Batch a resumed run as the uninterrupted run batched.

        fairseq sorts a dataset into batches once, shuffling ties with ``seed + epoch`` of the
        epoch that creates the iterator, and reuses those batches in every later epoch. A run
        resumed at epoch E would break ties with ``seed + E`` and train on other batches from
        then on, so it would not end where the same run without the interruption ends. The
        first iterator of a resumed run is therefore built as at epoch 1 and moved to E.
        """
        reusable = (
            not disable_iterator_cache
            and not update_epoch_batch_itr
            and not getattr(self.cfg, "rebuild_batches", False)
            and self.can_reuse_epoch_itr(dataset)
        )
        resumed = reusable and epoch > 1 and dataset not in self.dataset_to_epoch_iter
        iterator = super().get_batch_iterator(
            dataset,
            epoch=1 if resumed else epoch,
            disable_iterator_cache=disable_iterator_cache,
            update_epoch_batch_itr=update_epoch_batch_itr,
            **kwargs,
        )
        if resumed:
            iterator.epoch = epoch
        return iterator

    def inference_step(self, generator, models, sample, prefix_tokens=None, constraints=None):
        if self.reorder_role == ROLE_INPUT and self.cfg.preorderer_nbest > 1:
            return self._nbest_inference_step(generator, models, sample, prefix_tokens,
                                              constraints)
        # fairseq-interactive rebuilds net_input from src_tokens alone, so positions for raw
        # input are predicted here, where every generation path passes through
        net_input = sample["net_input"]
        if self.reorder_role == ROLE_INPUT and "reorder_positions" not in net_input:
            if not self.cfg.preorderer:
                raise ReorderPositionsError(
                    "this model reads reorder positions and the input has none: pass "
                    "--preorderer PREORDERER.pt (trained with xlpe-preorder-train)"
                )
            src_tokens = net_input["src_tokens"]
            pad = self.src_dict.pad()
            sentences = [row[row.ne(pad)] for row in src_tokens.cpu()]
            positions = collate_positions(src_tokens, pad, self.predict_positions(sentences))
            sample = {**sample, "net_input": {**net_input, "reorder_positions": positions}}
        return super().inference_step(generator, models, sample, prefix_tokens, constraints)

    def _nbest_inference_step(self, generator, models, sample, prefix_tokens, constraints):
        """``--preorderer-nbest N``: decode the batch once for each rank of the preorderer's N
        best reorderings and keep, per sentence, the rank whose best translation scores
        highest (``nbest_choice_score``); a sentence with fewer distinct reorderings is
        decoded on its best one where it has no candidate of a rank."""
        if not hasattr(generator, "beam_size"):
            raise OptionError("--preorderer-nbest chooses among translations; --score-reference "
                              "scores one given translation: use --preorderer-nbest 1")
        net_input = sample["net_input"]
        src_tokens = net_input["src_tokens"]
        pad = self.src_dict.pad()
        sentences = self.source_tokens(row[row.ne(pad)] for row in src_tokens.cpu())
        candidates = [found or [(0.0, [])] for found in
                      self.preorderer.predict_kbest(sentences, self.cfg.preorderer_nbest)]
        chosen, best = [None] * len(sentences), [None] * len(sentences)
        for rank in range(max(len(found) for found in candidates)):
            positions = [torch.IntTensor(found[rank if rank < len(found) else 0][1])
                         for found in candidates]
            ranked = {**sample, "net_input": {
                **net_input, "reorder_positions": collate_positions(src_tokens, pad, positions)}}
            hypotheses = super().inference_step(generator, models, ranked, prefix_tokens,
                                                constraints)
            for k, (found, beam) in enumerate(zip(candidates, hypotheses)):
                if rank < len(found):
                    value = nbest_choice_score(beam[0], found[rank][0],
                                               self.cfg.preorderer_nbest_weight)
                    if best[k] is None or value > best[k]:
                        chosen[k], best[k] = beam, value
        return chosen


def nbest_choice_score(hypothesis, search_score, weight):
    """What ``--preorderer-nbest`` maximizes over a sentence's reorderings: the translation's
    score in the beam (its log-probability over its length to the power ``--lenpen``) plus
    ``weight`` times the reordering's BTG search score (``btg_kbest``: the preorderer's scores
    of the pairs it inverts). The summed log-probability would prefer the reordering with the
    shortest translation (it lost 0.5 BLEU on Tr→En's validation set where this gained 0.3)."""
    return float(hypothesis["score"]) + weight * search_score
