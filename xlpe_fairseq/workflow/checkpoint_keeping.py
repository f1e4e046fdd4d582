"""What xlpe-train keeps of fairseq-train's checkpoints: each with the model and its records,
and the optimizer's state in ``checkpoint_last.pt`` alone.

fairseq-train writes every checkpoint whole: the model, and Adam's two moments of every
parameter, twice the model again. Of a CHECKPOINT_DIR, evaluation reads the model alone (the
update checkpoints ``checkpoint_EPOCH_UPDATE.pt`` it averages, ``checkpoint_best.pt``) and a
resume reads ``checkpoint_last.pt``, the one file whose optimizer state is used. So once
fairseq has saved a checkpoint, the update checkpoints it will neither write again nor remove
(``--keep-interval-updates``) are rewritten without ``last_optimizer_state``, as fairseq's
``--no-save-optimizer-state`` would have saved them; ``checkpoint_best.pt``, which fairseq may
overwrite at any save, and the newest update checkpoint follow once fairseq-train has ended,
however it ended. Each is about a third of its size then: the two small models of 400 updates
that took 1.1 GB keep about 0.45 GB. The model, the update counts (``optimizer_history``),
the data fingerprint and the settings stay as they were: xlpe-evaluate scores the same
weights and xlpe-train resumes from the same ``checkpoint_last.pt``.
"""
import os
import re

from ..io import InputError, atomic_output, option_value
from ..io.checkpoints import fairseq_checkpoint
from .training_progress import saved_checkpoint

UPDATE_CHECKPOINT = re.compile(r"checkpoint_\d+_(\d+)\.pt")
OPTIMIZER_STATE = "last_optimizer_state"
KEPT_WHOLE = "checkpoint_last.pt"


def without_optimizer_state(path):
    """Rewrite the checkpoint ``path`` (atomically) without its optimizer state; False where
    it has none, is gone or cannot be read (fairseq's own loading says what is wrong with a
    damaged checkpoint when it is used)."""
    import torch

    try:
        # a look at its keys first, its weights mapped, not read
        if OPTIMIZER_STATE not in fairseq_checkpoint(path, mmap=True):
            return False
        state = fairseq_checkpoint(path)
    except InputError:
        return False
    del state[OPTIMIZER_STATE]
    with atomic_output(path, "wb") as out:
        torch.save(state, out)
    return True


def update_checkpoints(save_dir):
    """``{update: path}`` of SAVE_DIR's update checkpoints."""
    found = {}
    for name in os.listdir(save_dir):
        match = UPDATE_CHECKPOINT.fullmatch(name)
        if match:
            found[int(match.group(1))] = os.path.join(save_dir, name)
    return found


class CheckpointKeeping:
    """Reads fairseq-train's report (``read``, a line at a time) and keeps SAVE_DIR's
    checkpoints without the optimizer's state, but ``checkpoint_last.pt`` (``finish`` once
    fairseq-train has ended). ``keep``: fairseq's --keep-interval-updates (0: all)."""

    def __init__(self, save_dir, keep):
        self.save_dir, self.keep = save_dir, keep
        self.done = set()  # update checkpoints are written once: each is looked at once

    @classmethod
    def of_command(cls, save_dir, command):
        """The keeping of a fairseq-train ``command``: its last --keep-interval-updates."""
        value = option_value(command, "--keep-interval-updates")
        try:
            keep = int(value) if value is not None else 0
        except ValueError:  # fairseq-train refuses it
            keep = 0
        return cls(save_dir, keep)

    def read(self, line):
        if saved_checkpoint(line) is None or not os.path.isdir(self.save_dir):
            return
        by_update = update_checkpoints(self.save_dir)
        newest_first = sorted(by_update, reverse=True)
        # the newest may be rewritten no more; those past ``keep`` fairseq is removing now
        settled = newest_first[1:self.keep] if self.keep > 0 else newest_first[1:]
        for update in settled:
            if by_update[update] not in self.done:
                without_optimizer_state(by_update[update])
                self.done.add(by_update[update])

    def finish(self):
        if not os.path.isdir(self.save_dir):
            return
        for path in [*update_checkpoints(self.save_dir).values(),
                     os.path.join(self.save_dir, "checkpoint_best.pt")]:
            without_optimizer_state(path)
