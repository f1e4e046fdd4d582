"""What xlpe-train prints on stderr before it trains: the model and whose schedule it trains
on, the budget, the batch in words (tokens per update, how they are made up, the paper's
batch and the --update-freq that matches it), what is validated, saved and kept, and what
xlpe-evaluate will score. On stderr, so that --dry-run prints nothing but the command on
stdout."""
import os
import sys

from .epoch_length import numbered_checkpoints
from .schedules import SCHEDULE_SETTINGS

# fairseq's --log-interval default; on the CPU, where an update of a real corpus takes a
# second or two, every 10 updates, so that the rate is known within the first minute
LOG_INTERVAL = 100
CPU_LOG_INTERVAL = 10


def on_cpu(world, cpu=False):
    """Whether fairseq trains on the CPU: with fairseq-train's ``--cpu`` (``cpu``: an sbatch
    script's CPU processes), or as one process that sees no GPU."""
    return cpu or (world == 1 and (not os.path.exists("/dev/nvidiactl")
                                   or os.environ.get("CUDA_VISIBLE_DEVICES") == ""))


def log_interval(world, checkpoint_interval, cpu=False):
    """fairseq's --log-interval (and so of the progress line): at most the checkpoint
    interval."""
    return min(CPU_LOG_INTERVAL if on_cpu(world, cpu) else LOG_INTERVAL, checkpoint_interval)


def batch_line(max_tokens, world, update_freq, paper_tokens, paper_gpus, cpu=False):
    """The batch in words: ``max_tokens`` per batch, ``world`` processes (CPU ones with
    ``cpu``), ``update_freq`` batches accumulated; the paper's ``paper_tokens`` on each of
    ``paper_gpus`` GPUs."""
    per_update = max_tokens * world * update_freq
    if world > 1:
        where = f"on each of {world} {'CPU processes' if cpu else 'GPUs'}"
    else:
        where = "on the CPU" if on_cpu(world, cpu) else "on the GPU"
    if update_freq > 1:
        made_of = (f": {update_freq} batches of up to {max_tokens} accumulated "
                   f"(--update-freq {update_freq}) {where}")
    elif world > 1:
        made_of = f": up to {max_tokens} {where}"
    else:
        made_of = f" {where}"
    paper = paper_tokens * paper_gpus
    papers = (f"{paper_tokens} x {paper_gpus} GPUs = {paper}" if paper_gpus > 1
              else f"{paper_tokens} on 1 GPU")
    if per_update == paper:
        matched = f", as the paper's ({papers})"
    elif paper % (max_tokens * world) == 0:
        matched = (f"; the paper's: {papers}, which --update-freq "
                   f"{paper // (max_tokens * world)} matches")
    else:
        matched = f"; the paper's: {papers}"
    return f"batch: up to {per_update} tokens per update{made_of}{matched}"


def print_schedule(model, size, schedule, values, shortened, world, update_freq, logged,
                   extra, paper_tokens, per_epoch=None):
    """The effective schedule, on stderr."""
    # what xlpe-evaluate will find: the checkpoints of every interval but those at an
    # epoch's end (epochs of ``per_epoch`` updates), ``keep`` of them kept
    saved = numbered_checkpoints(values.max_update, values.interval, values.keep, per_epoch)
    metric = SCHEDULE_SETTINGS[schedule]["best_checkpoint_metric"][0]
    evaluation = (f"the last {values.average} checkpoints averaged" if values.average > 0
                  else f"the checkpoint with the best dev {'BLEU' if metric == 'bleu' else metric}")
    if values.average > saved:
        evaluation = (f"the {saved} checkpoints saved averaged, not {values.average}"
                      if saved >= 2 else "checkpoint_best.pt, fewer than 2 checkpoints saved")
        # fewer than the interval gives: epochs end where checkpoints would be saved
        if saved < min(values.max_update // values.interval, values.keep):
            evaluation += (f": an epoch of this corpus is {per_epoch} update(s), and fairseq "
                           "saves none where an epoch ends")
    # the model first: the schedule is borrowed from a paper, often not the model's own
    lines = [f"training {model}, size {size}, on the schedule {schedule} (from "
             f"{values.source}):"]
    if shortened:
        lines.append(shortened)
    lines += [
        f"  {values.max_update} updates, warmup {values.warmup}, lr {values.lr}, dropout "
        f"{values.dropout}",
        "  " + batch_line(values.max_tokens, world, update_freq, paper_tokens,
                          values.batch_gpus, "--cpu" in extra),
        f"  validation and a checkpoint every {values.interval} updates; xlpe-evaluate: "
        f"{evaluation}, beam {values.beam}, lenpen {values.lenpen}",
        f"  kept: the last {values.keep} update checkpoints and checkpoint_best.pt, without "
        "the optimizer's state (all evaluation reads), and checkpoint_last.pt whole (what "
        "resuming reads)",
    ]
    if logged < LOG_INTERVAL:
        why = ("the checkpoint interval" if logged == values.interval
               else "on the CPU")
        lines.append(f"  fairseq logs, and the progress is shown, every {logged} updates "
                     f"(--log-interval {logged}, {why})")
    if extra:
        lines.append(f"  then, overriding any of these: {' '.join(extra)}")
    print("\n".join(lines), file=sys.stderr)
