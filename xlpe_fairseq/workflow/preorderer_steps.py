"""The preorderer's steps of a preparation (xlpe-prepare's ``preorder``; the Bible recipe
reuses ``cross_fit`` and ``predict_on_threads``): the source-only preorderer trained on
train's BTG oracle, its PREORDER_SEEDS members PREORDER_JOBS at a time (side by side each in
a process of its own, preorderer_members.py, with its own log), combined into one ensemble;
train positions cross-fitted for XLPE_TRAIN_POSITIONS predicted or mixed; valid and test
predicted; the preorderer scored on test and its ceiling measured on train. Each is the work
of its xlpe-preorder-* command, called in this process on PREORDER_THREADS of torch's. The
settings (``s``) are those of pipeline.py's docstring; the steps run through steps.Steps.
"""
import functools
import os
import sys
import time

from ..io.children import exit_status
from ..preordering.ceiling import ceiling_files
from ..preordering.cross_fit import cross_fit_files
from ..preordering.ensemble import ensemble_files
from ..preordering.metrics import score_files
from ..preordering.predict import predict_files
from ..preordering.train import torch_threads, train_files
from .preorderer_members import end_members, start_member
from .steps import StepFailed, report, wall_time_line

# the preorderer's cost at its defaults (docs/preorderer.md, "Defaults by corpus size")
PREORDERER_TIME = "3 to 13 minutes on 2 fast CPU cores (up to three times that on slow ones)"


def preorderer_training(s):
    """xlpe-preorder-train's options from the settings, those of every member and fold: what
    the record of the preorderer's settings (OUT/preorderer.settings) holds."""
    return ["--epochs", s["PREORDER_EPOCHS"], "--max-seconds", s["PREORDER_SECONDS"], "--loss",
            s["PREORDER_LOSS"], "--device", s["PREORDER_DEVICE"], "--batch-tokens",
            s["PREORDER_BATCH_TOKENS"], "--max-train-length", s["PREORDER_MAX_LENGTH"],
            "--threads", s["PREORDER_THREADS"]]


def training_settings(s):
    """The options of ``preorderer_training`` as the keywords of ``train_files`` and
    ``cross_fit_files``."""
    return {"epochs": int(s["PREORDER_EPOCHS"]), "max_seconds": float(s["PREORDER_SECONDS"]),
            "loss": s["PREORDER_LOSS"], "device": s["PREORDER_DEVICE"],
            "batch_tokens": int(s["PREORDER_BATCH_TOKENS"]),
            "max_train_length": int(s["PREORDER_MAX_LENGTH"]),
            "threads": int(s["PREORDER_THREADS"])}


def sampling_settings(s):
    """PREORDER_SAMPLING's options (``--sample N --sample-seed K``, or none) as keywords of
    ``train_files``."""
    options = s["PREORDER_SAMPLING"]
    return {option[2:].replace("-", "_"): int(value)
            for option, value in zip(options[::2], options[1::2])}


def predict_on_threads(threads, preorderer, jobs):
    """``predict_files`` on ``threads`` of torch's: as many as training took, since more stall
    beside other work on the cores."""
    with torch_threads(threads):
        predict_files(preorderer, jobs)


def preorder(steps, s, out, src):
    """Train the source-only preorderer on the BTG oracle, predict valid/test, score it."""
    bpe = os.path.join(out, "bpe")
    training, sampling = preorderer_training(s), s["PREORDER_SAMPLING"]
    settings = os.path.join(out, "preorderer.settings")
    # a member depends on its seed and these settings, not on how many members there are
    steps.stamp(settings, " ".join([*training, *sampling]))
    preorderer = os.path.join(out, "preorderer.pt")
    seeds = int(s["PREORDER_SEEDS"])
    data = [os.path.join(bpe, name) for name in (f"train.{src}", "train.btg.reorder",
                                                 f"valid.{src}", "valid.btg.reorder")]
    if seeds == 1:
        train_preorderers(steps, s, [(preorderer, 1)], data, settings)
    else:
        members = [os.path.join(out, f"preorderer.seed{seed}.pt") for seed in range(1, seeds + 1)]
        train_preorderers(steps, s, list(zip(members, range(1, seeds + 1))), data, settings)
        if steps.fresh([preorderer], [*members, data[2], data[3]]):
            steps.skipped("ensemble preorderers")
        else:
            steps.timed(f"ensemble {seeds} preorderers", ensemble_files, members, preorderer,
                        data[2], data[3], s["PREORDER_DEVICE"], int(s["PREORDER_THREADS"]))
            steps.made(preorderer)
    if s["XLPE_TRAIN_POSITIONS"] != "oracle":
        cross_fit(steps, s, bpe, src, data, training, training_settings(s))
    jobs = []
    for split in ("valid", "test"):
        dest = os.path.join(bpe, f"{split}.pred.reorder")
        if steps.fresh([dest], [preorderer, os.path.join(bpe, f"{split}.{src}")]):
            steps.skipped(f"preorder {split}")
            continue
        jobs.append((os.path.join(bpe, f"{split}.{src}"), dest))
    if jobs:
        steps.timed("preorder valid/test", predict_on_threads, int(s["PREORDER_THREADS"]),
                    preorderer, jobs)
        for _, dest in jobs:
            steps.made(dest)
    hypothesis, reference = (os.path.join(bpe, f"test.{kind}.reorder") for kind in ("pred", "btg"))
    report(steps, os.path.join(out, "preorderer.test.score"), "score preorderer",
           "preorderer on test", [hypothesis, reference],
           functools.partial(score_files, hypothesis, reference))
    report(steps, os.path.join(out, "preorderer.ceiling"), "preorderer ceiling",
           "the oracle of repeated train sources scored on each other", data[:2],
           functools.partial(ceiling_files, data[0], data[1]))


def train_preorderers(steps, s, members, data, settings, train=train_files):
    """Each stale member (SAVE, SEED) trained by ``train`` (``train_files``; its keywords from
    the settings), PREORDER_JOBS at a time. One at a time, a member is a step in this process;
    side by side, each is a process of its own (``preorderer_members``): threads of one
    process stall beside a busy process on the same cores, processes side by side do not.
    Then each member's output goes to its log (OUT/preorderer.seedK.log), which ends with the
    member's wall time as a step's output does and is shown when all have ended; a member
    that failed fails the step once the others have ended."""
    stale = []
    for save, seed in members:
        if steps.fresh([save], [*data, settings]):
            steps.skipped(f"train preorderer (seed {seed})")
        else:
            stale.append((save, seed))
    jobs = int(s["PREORDER_JOBS"])
    keywords = {"source": data[0], "reorder": data[1], "valid_source": data[2],
                "valid_reorder": data[3], **training_settings(s), **sampling_settings(s)}
    title = (f"at most {s['PREORDER_EPOCHS']} epochs, {s['PREORDER_SECONDS']}s")
    if jobs == 1 or len(members) == 1:
        for save, seed in stale:
            steps.timed(f"train preorderer (seed {seed}, {title})", train, **keywords,
                        seed=seed, save=save)
            steps.made(save)
        return
    if not stale:
        return
    steps.say(f"== train {len(members)} preorderers, {jobs} side by side "
              f"({s['PREORDER_THREADS']} thread(s) each; logs: "
              f"{members[0][0][:-len('.seed1.pt')]}.seedK.log)")
    started, running = [], []
    try:
        for save, seed in stale:
            while len(running) >= jobs:
                running = ended_members(running)
                time.sleep(0.2)
            name, start = f"train preorderer (seed {seed}, {title})", time.monotonic()
            log = save[:-len(".pt")] + ".log"
            with open(log, "w", encoding="utf-8") as stream:
                stream.write(f"== {name}\n")
            member = start_member(train, {**keywords, "seed": seed, "save": save}, log,
                                  steps.stage_log, name)
            started.append((member, save, seed))
            running.append((member, log, name, start))
        while running:
            running = ended_members(running)
            time.sleep(0.2)
    except BaseException:
        end_members([member for member, _, _ in started])
        raise
    failed = []
    for member, save, seed in started:
        log = save[:-len(".pt")] + ".log"
        with open(log, encoding="utf-8", errors="replace") as stream:
            sys.stderr.write(stream.read())
        if member.exitcode:
            failed.append(f"seed {seed} (status {exit_status(member.exitcode)}, {log})")
        else:
            steps.made(save)
    if failed:
        steps.say(f"{steps.prog}: error: preorderer training failed: {'; '.join(failed)}")
        raise StepFailed(1)


def ended_members(running):
    """The members of ``running`` (process, log, step name, start) still running; the log of
    each one that succeeded ends as a step's output does, with ``== NAME: N s``."""
    still = []
    for member in running:
        process, log, name, start = member
        if process.exitcode is None:
            still.append(member)
        elif process.exitcode == 0:
            with open(log, "a", encoding="utf-8") as stream:
                stream.write(wall_time_line(name, start) + "\n")
    return still


def cross_fit(steps, s, bpe, src, data, training, settings):
    """XL PE train positions as at test time: each of PREORDER_FOLDS folds predicted by a
    preorderer trained on the others (train.pred.reorder), and train.mixed.reorder;
    ``training`` the options of the record of its settings, ``settings`` the same as keywords
    of ``cross_fit_files``."""
    folds = s["PREORDER_FOLDS"]
    stamp = os.path.join(bpe, "train.pred.settings")
    steps.stamp(stamp, " ".join([f"folds={folds}", *training]))
    outs = [os.path.join(bpe, "train.pred.reorder"), os.path.join(bpe, "train.mixed.reorder")]
    if steps.fresh(outs, [*data, stamp]):
        steps.skipped("cross-fit train positions")
        return
    steps.timed(f"cross-fit train positions ({folds} folds)", cross_fit_files, data[0],
                data[1], outs[0], outs[1], data[2], data[3], int(folds), **settings)
    steps.made(outs[0])
