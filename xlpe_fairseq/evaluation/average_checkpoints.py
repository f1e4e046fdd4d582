"""``xlpe-average-checkpoints``: average the parameters of the last N fairseq checkpoints.

What fairseq's ``scripts/average_checkpoints.py`` does (that script is not part of the
fairseq wheels): the DPE paper averages the last 5 checkpoints (Zheng et al. 2021, §4.2).
Update checkpoints (``checkpoint_EPOCH_UPDATES.pt``, from ``--save-interval-updates``) are
preferred when the folder has any, else epoch checkpoints (``checkpointEPOCH.pt``); an update
of the series that ended an epoch, for which fairseq writes no update checkpoint, is taken from
``checkpointEPOCH.pt`` or ``checkpoint_last.pt`` when one of them holds it, and named when
neither does. The
averaged file keeps the newest checkpoint's configuration, so fairseq-generate loads it as is.
"""
import argparse
import collections
import os
import re
import sys

import torch

from ..help_format import HelpFormatter
from ..io import (
    InputError,
    atomic_output,
    check_outputs,
    fairseq_checkpoint,
    positive_int,
    run_command,
)
from ..io.digests import CHECKPOINT_KEY, fingerprint_mismatch

UPDATE_CHECKPOINT = re.compile(r"checkpoint_\d+_(\d+)\.pt$")
EPOCH_CHECKPOINT = re.compile(r"checkpoint(\d+)\.pt$")
LAST_CHECKPOINT = "checkpoint_last.pt"


def numbered(names, pattern):
    """{number: name} of the checkpoint names that ``pattern`` numbers."""
    return {int(m.group(1)): name for name in names if (m := pattern.fullmatch(name))}


def update_and_interval(state):
    """The update a fairseq checkpoint was saved at and its --save-interval-updates (None
    when the checkpoint does not say)."""
    history = state.get("optimizer_history") or [{}]
    cfg = state.get("cfg") or {}
    interval = ((cfg.get("checkpoint") or {}).get("save_interval_updates") if cfg
                else getattr(state.get("args"), "save_interval_updates", None))
    return history[-1].get("num_updates"), interval


def last_checkpoints(directory, count):
    """Paths of the ``count`` newest checkpoints in ``directory``, newest first, and notes on
    what was chosen beyond the numbered update checkpoints.

    fairseq writes ``checkpoint_EPOCH_UPDATES.pt`` every --save-interval-updates updates but
    not for an update that ends an epoch: that one goes to ``checkpointEPOCH.pt`` (none under
    --no-epoch-checkpoints, as xlpe-train trains) and, if it is the latest, to
    ``checkpoint_last.pt``. Such a file stands in for the missing update checkpoint; an update
    of the series saved nowhere is skipped and named in the notes."""
    if not os.path.isdir(directory):
        raise InputError(f"{directory}: no such checkpoint folder")
    names = os.listdir(directory)
    by_update = numbered(names, UPDATE_CHECKPOINT)
    notes, interval = [], None
    if by_update:
        oldest_wanted = sorted(by_update, reverse=True)[min(count, len(by_update)) - 1]
        epochs = numbered(names, EPOCH_CHECKPOINT)
        ends = ([LAST_CHECKPOINT] if LAST_CHECKPOINT in names else []) + [
            epochs[epoch] for epoch in sorted(epochs, reverse=True)]
        for name in ends:
            update, saved_every = update_and_interval(
                fairseq_checkpoint(os.path.join(directory, name)))
            interval = interval or saved_every
            if update is None or not saved_every:
                continue
            if update % saved_every == 0 and update not in by_update:
                by_update[update] = name
                notes.append(f"{name} stands for update {update}, which ended an epoch "
                             "(fairseq writes no update checkpoint there)")
            if name != LAST_CHECKPOINT and update < oldest_wanted and len(by_update) >= count:
                break
    else:
        by_update = numbered(names, EPOCH_CHECKPOINT)  # epoch checkpoints, by epoch
        if not by_update and LAST_CHECKPOINT in names:
            _, interval = update_and_interval(
                fairseq_checkpoint(os.path.join(directory, LAST_CHECKPOINT)))
    if len(by_update) < count:
        why = ("save them with --save-interval-updates/--keep-interval-updates or epoch "
               "checkpoints")
        if interval and not by_update:
            why = (f"every save, one each {interval} updates, ended an epoch, where fairseq "
                   "writes no update checkpoint: save at an interval that is not a multiple of "
                   "an epoch's updates")
        raise InputError(f"{directory}: {len(by_update)} numbered checkpoints, {count} wanted "
                         f"({why})")
    chosen = sorted(by_update, reverse=True)[:count]
    if interval:
        skipped = [update for update in range(chosen[-1] + interval, chosen[0], interval)
                   if update not in by_update]
        if skipped:
            notes.append(f"no checkpoint holds update{'s' * (len(skipped) > 1)} "
                         f"{', '.join(map(str, skipped))} (fairseq saves none for an update "
                         "that ends an epoch under --no-epoch-checkpoints): averaging updates "
                         f"{', '.join(map(str, chosen))}")
    return [os.path.join(directory, by_update[update]) for update in chosen], notes


def average(paths):
    """The newest checkpoint's state with its model parameters replaced by the mean over
    ``paths``; sums run in float64 and results take each parameter's own dtype."""
    newest = None
    sums = collections.OrderedDict()
    for path in paths:
        state = fairseq_checkpoint(path)
        newest = newest or state
        params = state["model"]
        if sums and params.keys() != sums.keys():
            raise InputError(f"{path}: parameters differ from {paths[0]}")
        # a folder that holds the checkpoints of two runs (a corpus re-prepared in between)
        fingerprint = (state.get("task_state") or {}).get(CHECKPOINT_KEY)
        first = (newest.get("task_state") or {}).get(CHECKPOINT_KEY)
        mismatch = fingerprint and first and fingerprint_mismatch(first, fingerprint)
        if mismatch:
            differs = ("other dictionaries" if mismatch[0] == "dictionaries"
                       else "another training split")
            raise InputError(f"{path}: trained on {differs} than {paths[0]}: the checkpoints "
                             "of two runs cannot be averaged (--num: fewer, of the newest run)")
        for name, value in params.items():
            sums[name] = sums.get(name, 0) + value.to(torch.float64)
    dtypes = {name: value.dtype for name, value in newest["model"].items()}
    newest["model"] = collections.OrderedDict(
        (name, (total / len(paths)).to(dtypes[name])) for name, total in sums.items())
    return newest


def write_average(directory, count, output):
    """Write ``output``, the average of the ``count`` newest checkpoints in ``directory``
    (refused if it would overwrite one of them); returns their paths, newest first, and the
    notes of ``last_checkpoints``."""
    paths, notes = last_checkpoints(directory, count)
    check_outputs([output], paths)
    state = average(paths)
    with atomic_output(output, "wb") as out:
        torch.save(state, out)
    return paths, notes


def average_and_report(directory, count, output):
    """``xlpe-average-checkpoints``: ``write_average``, then the checkpoints averaged and the
    notes on them said."""
    paths, notes = write_average(directory, count, output)
    print(f"xlpe-average-checkpoints: {output} = mean of "
          f"{', '.join(os.path.basename(p) for p in paths)}", file=sys.stderr)
    for note in notes:
        print(f"xlpe-average-checkpoints: {note}", file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="xlpe-average-checkpoints",
                                     description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--checkpoint-dir", required=True, help="fairseq --save-dir")
    parser.add_argument("--num", type=positive_int, default=5, help="how many of the newest checkpoints")
    parser.add_argument("--output", required=True, help="averaged checkpoint to write")
    args = parser.parse_args(argv)

    run_command(lambda: average_and_report(args.checkpoint_dir, args.num, args.output),
                "xlpe-average-checkpoints")


if __name__ == "__main__":
    main()
