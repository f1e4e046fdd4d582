"""The data a checkpoint learned from, carried in the checkpoint and checked where it is used.

fairseq saves ``task.state_dict()`` into every checkpoint (``task_state``) and hands it back
to ``task.load_state_dict`` when fairseq-generate, fairseq-interactive or the hub interface
load a model, before the weights. ``DataProvenance`` puts the fingerprint of the data-bin
(``io.digests.data_fingerprint``: its dictionaries and its training split) there, and:

- refuses a checkpoint on a data-bin with other dictionaries, in one line instead of
  fairseq's size-mismatch traceback or, where the sizes agree, translations of other token
  ids. Another training split with the same dictionaries is fine for decoding (a new test set
  binarized with the model's dictionaries); ``xlpe-evaluate`` and ``xlpe-translate --corpus``
  also hold the training split to the corpus's (``io.provenance.verify_checkpoint``);
- refuses to resume (fairseq-train into a ``--save-dir`` that holds ``checkpoint_last.pt``)
  from a checkpoint of another model or of another training split: fairseq would load it and
  go on, or fail with a traceback. Fine-tuning (``--restore-file`` of another folder, or
  ``--finetune-from-model``) needs only the same dictionaries.
"""
import os

from ..io import InputError
from ..io.digests import (
    CHECKPOINT_KEY,
    data_fingerprint,
    describe_mismatch,
    fingerprint_mismatch,
)

START_AFRESH = ("train into another --save-dir, or start afresh in this one "
                "(xlpe-train --restart keeps the old checkpoints in a subfolder)")


class DataProvenance:
    """A mixin for fairseq translation tasks; the config needs ``data``, ``train_subset``,
    ``save_dir``, ``restore_file`` and ``finetune_from_model``."""

    _data_fingerprint = None

    def data_fingerprint(self):
        """The data-bin's fingerprint, computed once (it reads the training split)."""
        if self._data_fingerprint is None:
            from fairseq import utils

            self._data_fingerprint = data_fingerprint(utils.split_paths(self.cfg.data),
                                                      self.cfg.train_subset)
        return self._data_fingerprint

    def state_dict(self):
        return {**super().state_dict(), CHECKPOINT_KEY: self.data_fingerprint()}

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        recorded = state_dict.pop(CHECKPOINT_KEY, None)
        if recorded:
            # decoding compares the dictionaries only: the training split is not read
            from fairseq import utils

            current = data_fingerprint(utils.split_paths(self.cfg.data), train=False)
            mismatch = fingerprint_mismatch(recorded, current)
            if mismatch and mismatch[0] == "dictionaries":
                raise InputError(
                    f"{describe_mismatch(recorded, current, 'the checkpoint')}, so its token "
                    "ids mean other words here: decode with the data-bin it was trained on")
        super().load_state_dict(state_dict)

    def resumed_checkpoint(self):
        """The checkpoint fairseq-train will restore, and whether it resumes this save-dir's
        own run (not a fine-tuning); ``(None, False)`` if it starts afresh."""
        restore, save_dir = self._setting("restore_file"), self._setting("save_dir")
        if restore == "checkpoint_last.pt" and save_dir:
            path = os.path.join(save_dir, restore)
            if os.path.exists(path):
                return path, True
            restore = self._setting("finetune_from_model")
        if restore and os.path.exists(restore):
            return restore, False
        return None, False

    def _setting(self, name):
        """A checkpoint setting of the task's config; ``None`` where the config stands alone
        (built outside fairseq-train, its interpolation unresolved)."""
        try:
            value = getattr(self.cfg, name, None)
        except Exception:  # omegaconf's unresolved interpolation
            return None
        return None if isinstance(value, str) and value.startswith("${") else value

    def check_resume(self, model):
        """Refuse to restore a checkpoint that ``model`` cannot continue (see module)."""
        from ..io.checkpoints import fairseq_checkpoint

        path, resumes = self.resumed_checkpoint()
        if path is None:
            return
        state = fairseq_checkpoint(path, mmap=True)
        if resumes:
            saved_arch, arch = _saved_arch(state), self.model_arch
            saved = state["model"]
            # parameters the checkpoint lacks or holds in another shape (buffers and extra
            # keys are fairseq's upgrade_state_dict's business)
            differ = [(name, tuple(parameter.shape)) for name, parameter in
                      model.named_parameters()
                      if name not in saved
                      or tuple(getattr(saved[name], "shape", ())) != tuple(parameter.shape)]
            if saved_arch and arch and saved_arch != arch:
                raise InputError(f"{path}: cannot resume: it holds a {saved_arch} model, this "
                                 f"run trains {arch}: {START_AFRESH}")
            if differ:
                name, shape = differ[0]
                held = (f"of shape {tuple(saved[name].shape)}, here {shape}" if name in saved
                        else "not in it")
                raise InputError(f"{path}: cannot resume: its model has other parameters than "
                                 f"this run's ({name} {held}): {START_AFRESH}")
        recorded = (state.get("task_state") or {}).get(CHECKPOINT_KEY)
        if not recorded:
            return
        current = self.data_fingerprint()
        mismatch = fingerprint_mismatch(recorded, current)
        if mismatch and (resumes or mismatch[0] == "dictionaries"):
            what = "resume" if resumes else "fine-tune"
            raise InputError(f"{path}: cannot {what}: "
                             f"{describe_mismatch(recorded, current, 'it')}: {START_AFRESH}")


def _saved_arch(state):
    cfg = state.get("cfg")
    model_cfg = cfg.get("model") if cfg is not None else None
    name = getattr(model_cfg, "_name", None) or getattr(model_cfg, "arch", None)
    if name is None and state.get("args") is not None:
        name = getattr(state["args"], "arch", None)
    return name
