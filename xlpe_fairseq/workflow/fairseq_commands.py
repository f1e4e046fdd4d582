"""The fairseq-train command of a training and the fairseq-generate command of a decoding, and
running them: what xlpe-train, xlpe-evaluate and the demo's two-pass baseline share.

A training is fairseq-train on a data-bin with the plugin's task and criterion, a model's
flags (the model registry's) and a schedule's values (schedules.py); its report goes to
stdout and SAVE_DIR/train.log, a progress line to stderr. A decoding is fairseq-generate of
one split, written under a hidden name and renamed when complete.
"""
import os
import sys

from ..io import Terminated, option_value
from ..io.children import run_child
from ..io.outputs import atomic_output
from ..user_dir import PLUGIN_DIR
from .checkpoint_keeping import CheckpointKeeping
from .fairseq_report import launched, raise_plugin_error, run_with_report
from .script_options import Refused
from .training_progress import Progress


def train_command(data_bin, src, tgt, model_flags, share_flag, values, save_dir, update_freq=1,
                  world=1, log_interval=100, extra=()):
    """fairseq-train of ``model_flags`` on ``data_bin`` (SRC -> TGT) with the schedule's
    ``values``, its checkpoints in ``save_dir``; ``extra`` last, so that it wins."""
    # --required-batch-size-multiple 1: fairseq drops the last batch of a split unless its
    # size is a multiple of this (8), and with it all of a split under 8 sentences
    return [
        "fairseq-train", data_bin, "--user-dir", PLUGIN_DIR, "--task", "translation_reorder",
        "--source-lang", src, "--target-lang", tgt,
        "--criterion", "label_smoothed_cross_entropy_with_order", "--label-smoothing", "0.1",
        *model_flags, share_flag,
        "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--clip-norm", "0.0",
        "--lr", values.lr, "--lr-scheduler", "inverse_sqrt",
        "--warmup-updates", str(values.warmup), "--warmup-init-lr", "1e-07",
        "--dropout", values.dropout, "--weight-decay", values.weight_decay,
        "--max-tokens", str(values.max_tokens), "--max-update", str(values.max_update),
        "--save-interval-updates", str(values.interval),
        "--validate-interval-updates", str(values.interval),
        "--keep-interval-updates", str(values.keep), "--no-epoch-checkpoints",
        "--required-batch-size-multiple", "1", *values.extra,
        "--update-freq", str(update_freq), "--distributed-world-size", str(world),
        "--save-dir", save_dir, "--log-format", "simple", "--log-interval", str(log_interval),
        *extra,
    ]


def run_training(command, save_dir, max_update, name, resume=None):
    """Run fairseq-train ``command`` (in its own process group, ended with this command), its
    report on stdout and in SAVE_DIR/train.log, the progress on stderr at each of its log
    lines and the checkpoints kept as checkpoint_keeping says. A failure ends this command
    with its status; with ``resume`` (the command that goes on from checkpoint_last.pt), a
    stop before the end (SIGTERM, Ctrl-C, a failure in training) first says what was saved
    and that command."""
    log = os.path.join(save_dir, "train.log")
    progress = Progress(max_update, name)
    keeping = CheckpointKeeping.of_command(save_dir, command)
    progress.say(f"fairseq-train starts (loading the data, building the model): its report "
                 f"on stdout and in {log}, the progress here every "
                 f"{option_value(command, '--log-interval')} updates")

    def read(line):
        progress.read(line)
        keeping.read(line)

    last = os.path.join(save_dir, "checkpoint_last.pt")
    try:
        status = run_with_report(command, log, read)
    except Terminated as stop:
        if resume:
            progress.stopped(stop.code, last, resume)
        raise
    if status:
        status = status if status > 0 else 128 - status
        if resume and progress.origin is not None:  # a failure in training, not in start-up
            progress.stopped(status, last, resume)
        raise SystemExit(status)
    keeping.finish()


def generate_command(data_bin, src, tgt, subset, checkpoint, beam, lenpen, extra=()):
    """fairseq-generate of SUBSET of ``data_bin`` with ``checkpoint``; ``extra`` last."""
    # --required-batch-size-multiple 1: fairseq-generate drops the last sentences otherwise
    return [
        "fairseq-generate", data_bin, "--user-dir", PLUGIN_DIR, "--task", "translation_reorder",
        "--source-lang", src, "--target-lang", tgt, "--gen-subset", subset, "--path",
        checkpoint, "--beam", str(beam), "--lenpen", str(lenpen), "--batch-size", "128",
        "--required-batch-size-multiple", "1", *extra,
    ]


def decode(generate, output, log, name):
    """fairseq-generate into ``output``, written under a hidden name and renamed when
    complete (a failed or interrupted run leaves none, and a killed run's is removed by the
    next); its report into ``log``."""
    with atomic_output(output) as partial, open(log, "w", encoding="utf-8") as report:
        status = run_child(launched(generate), stdout=partial, stderr=report)
        if status:
            report.close()
            with open(log, encoding="utf-8", errors="replace") as stream:
                lines = stream.read().splitlines()
            # the plugin's own errors are one line that says what to do; else fairseq's last
            # lines, the whole report kept in the log
            raise_plugin_error(lines)
            for line in lines[-20:]:
                print(line, file=sys.stderr)
            raise Refused(f"fairseq-generate failed; its whole report: {log}", 1)
