"""``xlpe-average-checkpoints``: average the parameters of the last N fairseq checkpoints.

What fairseq's ``scripts/average_checkpoints.py`` does (that script is not part of the
fairseq wheels): the DPE paper averages the last 5 checkpoints (Zheng et al. 2021, §4.2).
Update checkpoints (``checkpoint_EPOCH_UPDATES.pt``, from ``--save-interval-updates``) are
preferred when the folder has any, else epoch checkpoints (``checkpointEPOCH.pt``). The
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

UPDATE_CHECKPOINT = re.compile(r"checkpoint_\d+_(\d+)\.pt$")
EPOCH_CHECKPOINT = re.compile(r"checkpoint(\d+)\.pt$")


def last_checkpoints(directory, count):
    """Paths of the ``count`` newest checkpoints in ``directory``, newest first."""
    if not os.path.isdir(directory):
        raise InputError(f"{directory}: no such checkpoint folder")
    names = os.listdir(directory)
    for pattern in (UPDATE_CHECKPOINT, EPOCH_CHECKPOINT):
        numbered = sorted(((int(m.group(1)), name) for name in names
                           if (m := pattern.fullmatch(name))), reverse=True)
        if numbered:
            break
    if len(numbered) < count:
        raise InputError(f"{directory}: {len(numbered)} numbered checkpoints, {count} wanted "
                         "(save them with --save-interval-updates/--keep-interval-updates or "
                         "epoch checkpoints)")
    return [os.path.join(directory, name) for _, name in numbered[:count]]


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
        for name, value in params.items():
            sums[name] = sums.get(name, 0) + value.to(torch.float64)
    dtypes = {name: value.dtype for name, value in newest["model"].items()}
    newest["model"] = collections.OrderedDict(
        (name, (total / len(paths)).to(dtypes[name])) for name, total in sums.items())
    return newest


def write_average(directory, count, output):
    """Write ``output``, the average of the ``count`` newest checkpoints in ``directory``
    (refused if it would overwrite one of them); returns their paths, newest first."""
    paths = last_checkpoints(directory, count)
    check_outputs([output], paths)
    state = average(paths)
    with atomic_output(output, "wb") as out:
        torch.save(state, out)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(prog="xlpe-average-checkpoints",
                                     description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--checkpoint-dir", required=True, help="fairseq --save-dir")
    parser.add_argument("--num", type=positive_int, default=5, help="how many of the newest checkpoints")
    parser.add_argument("--output", required=True, help="averaged checkpoint to write")
    args = parser.parse_args(argv)

    def body():
        paths = write_average(args.checkpoint_dir, args.num, args.output)
        print(f"xlpe-average-checkpoints: {args.output} = mean of "
              f"{', '.join(os.path.basename(p) for p in paths)}", file=sys.stderr)

    run_command(body, "xlpe-average-checkpoints")


if __name__ == "__main__":
    main()
