"""The preorderer's steps of a preparation (xlpe-prepare's ``preorder``; the Bible recipe
reuses ``cross_fit``): the source-only preorderer trained on train's BTG oracle, its
PREORDER_SEEDS members PREORDER_JOBS at a time, each its own process (threads of one process
stall beside other work on the same cores, processes do not) with its own log when they run
side by side, combined by xlpe-preorder-ensemble; train positions cross-fitted for
XLPE_TRAIN_POSITIONS predicted or mixed; valid and test predicted; the preorderer scored on
test and its ceiling measured on train. The settings (``s``) are those of pipeline.py's
docstring; the steps run through steps.Steps.
"""
import os
import sys
import time

from .processes import end_process_group, start_child
from .steps import StepFailed, module, report, wall_time_line

# the preorderer's cost at its defaults (docs/preorderer.md, "Defaults by corpus size")
PREORDERER_TIME = "3 to 13 minutes on 2 fast CPU cores (up to three times that on slow ones)"


def preorderer_training(s):
    """xlpe-preorder-train's options from the settings, those of every member and fold."""
    return ["--epochs", s["PREORDER_EPOCHS"], "--max-seconds", s["PREORDER_SECONDS"], "--loss",
            s["PREORDER_LOSS"], "--device", s["PREORDER_DEVICE"], "--batch-tokens",
            s["PREORDER_BATCH_TOKENS"], "--max-train-length", s["PREORDER_MAX_LENGTH"],
            "--threads", s["PREORDER_THREADS"]]


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
            steps.timed(f"ensemble {seeds} preorderers", [
                "xlpe-preorder-ensemble", "--preorderers", *members, "--valid-source", data[2],
                "--valid-reorder", data[3], "--device", s["PREORDER_DEVICE"], "--threads",
                s["PREORDER_THREADS"], "--save", preorderer])
            steps.made(preorderer)
    if s["XLPE_TRAIN_POSITIONS"] != "oracle":
        cross_fit(steps, s, bpe, src, data, training)
    calls, predicted = [], []
    for split in ("valid", "test"):
        dest = os.path.join(bpe, f"{split}.pred.reorder")
        if steps.fresh([dest], [preorderer, os.path.join(bpe, f"{split}.{src}")]):
            steps.skipped(f"preorder {split}")
            continue
        calls += [*(["--then"] if calls else []), "--preorderer", preorderer, "--source",
                  os.path.join(bpe, f"{split}.{src}"), "--output", dest]
        predicted.append(dest)
    if calls:
        # as many threads as training took: more stall beside other work on the cores
        steps.timed("preorder valid/test", module(
            "xlpe_fairseq.in_one_process", "xlpe_fairseq.preordering.predict", *calls),
            env={**os.environ, "OMP_NUM_THREADS": s["PREORDER_THREADS"]})
        for dest in predicted:
            steps.made(dest)
    report(steps, os.path.join(out, "preorderer.test.score"), "score preorderer",
           "preorderer on test", [os.path.join(bpe, "test.pred.reorder"),
                                  os.path.join(bpe, "test.btg.reorder")],
           ["xlpe-reorder-score", "--hypothesis", os.path.join(bpe, "test.pred.reorder"),
            "--reference", os.path.join(bpe, "test.btg.reorder")])
    report(steps, os.path.join(out, "preorderer.ceiling"), "preorderer ceiling",
           "the oracle of repeated train sources scored on each other", data[:2],
           ["xlpe-reorder-ceiling", "--source", data[0], "--reorder", data[1]])


def train_preorderers(steps, s, members, data, settings):
    """Each stale member (SAVE, SEED) trained, PREORDER_JOBS processes at a time. Threads of
    one process stall beside a busy process on the same cores; processes side by side do
    not. With more than one at a time each member's output goes to its log
    (OUT/preorderer.seedK.log), which ends with the member's wall time as a step's output
    does and is shown when all have ended; a member that failed fails the step once the
    others have ended."""
    stale = []
    for save, seed in members:
        if steps.fresh([save], [*data, settings]):
            steps.skipped(f"train preorderer (seed {seed})")
        else:
            stale.append((save, seed))
    jobs = int(s["PREORDER_JOBS"])
    command = [
        "xlpe-preorder-train", "--source", data[0], "--reorder", data[1], "--valid-source",
        data[2], "--valid-reorder", data[3], *preorderer_training(s), *s["PREORDER_SAMPLING"]]
    title = (f"at most {s['PREORDER_EPOCHS']} epochs, {s['PREORDER_SECONDS']}s")
    if jobs == 1 or len(members) == 1:
        for save, seed in stale:
            steps.timed(f"train preorderer (seed {seed}, {title})",
                        [*command, "--seed", str(seed), "--save", save])
            steps.made(save)
        return
    if not stale:
        return
    steps.say(f"== train {len(members)} preorderers, {jobs} side by side "
              f"({s['PREORDER_THREADS']} thread(s) each; logs: "
              f"{members[0][0][:-len('.seed1.pt')]}.seedK.log)")
    children, running = [], []
    try:
        for save, seed in stale:
            while len(running) >= jobs:
                running = ended_members(running)
                time.sleep(0.2)
            name, start = f"train preorderer (seed {seed}, {title})", time.monotonic()
            with open(save[:-len(".pt")] + ".log", "w", encoding="utf-8") as log:
                log.write(f"== {name}\n")
                log.flush()
                child = start_child(steps.logged(name, [*command, "--seed", str(seed),
                                                        "--save", save]), stderr=log)
            children.append((child, save, seed))
            running.append((child, log.name, name, start))
        while running:
            running = ended_members(running)
            time.sleep(0.2)
    except BaseException:
        for child, _, _ in children:
            if child.poll() is None:
                end_process_group(child)
        raise
    failed = []
    for child, save, seed in children:
        log = save[:-len(".pt")] + ".log"
        with open(log, encoding="utf-8", errors="replace") as stream:
            sys.stderr.write(stream.read())
        status = child.returncode if child.returncode >= 0 else 128 - child.returncode
        if status:
            failed.append(f"seed {seed} (status {status}, {log})")
        else:
            steps.made(save)
    if failed:
        steps.say(f"{steps.prog}: error: preorderer training failed: {'; '.join(failed)}")
        raise StepFailed(1)


def ended_members(running):
    """The members of ``running`` (child, log, step name, start) still running; the log of
    each one that succeeded ends as a step's output does, with ``== NAME: N s``."""
    still = []
    for member in running:
        child, log, name, start = member
        if child.poll() is None:
            still.append(member)
        elif child.returncode == 0:
            with open(log, "a", encoding="utf-8") as stream:
                stream.write(wall_time_line(name, start) + "\n")
    return still


def cross_fit(steps, s, bpe, src, data, training):
    """XL PE train positions as at test time: each of PREORDER_FOLDS folds predicted by a
    preorderer trained on the others (train.pred.reorder), and train.mixed.reorder."""
    folds = s["PREORDER_FOLDS"]
    settings = os.path.join(bpe, "train.pred.settings")
    steps.stamp(settings, " ".join([f"folds={folds}", *training]))
    outs = [os.path.join(bpe, "train.pred.reorder"), os.path.join(bpe, "train.mixed.reorder")]
    if steps.fresh(outs, [*data, settings]):
        steps.skipped("cross-fit train positions")
        return
    steps.timed(f"cross-fit train positions ({folds} folds)", module(
        "xlpe_fairseq.preordering.cross_fit", "--source", data[0], "--reorder", data[1],
        "--valid-source", data[2], "--valid-reorder", data[3], "--folds", folds, *training,
        "--output", outs[0], "--mixed-output", outs[1]))
    steps.made(outs[0])
