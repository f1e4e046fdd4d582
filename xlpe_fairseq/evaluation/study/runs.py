"""Running a study: train or resume each run, decode and score it, stop them all on SIGTERM;
where each run is, from its folder."""
import argparse
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import numpy as np

from ...io import InputError, Terminated, ToolError, atomic_output, child_processes
from ..average_checkpoints import write_average
from ..bleu import bleu_tokenizer, detokenize, score
from ..compare import generate, read_checkpoint, stored_parameter_count
from ..generate_output import IncompleteGenerationError, read_hypotheses
from .devices import device_environment
from .logs import last_update, validation_curve


def train(study, model, seed, gpus=()):
    """Train one run to the budget (on ``gpus``, recorded in its command.txt, where given);
    fairseq-train resumes from checkpoint_last.pt if present.

    ``trained`` marks a finished training: fairseq-train restarted on a checkpoint at its
    budget would take one more update before it stops.
    """
    run_dir = study.run_dir(model, seed)
    if (run_dir / "trained").exists():
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    command = study.train_command(model, seed)
    devices = device_environment(gpus)
    (run_dir / "command.txt").write_text(
        " ".join([*(f"{name}={value}" for name, value in devices.items()),
                  shlex.join(command)]) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONWARNINGS": "ignore", **devices}
    with open(run_dir / "train.log", "a", encoding="utf-8") as log:
        result = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    if result.returncode != 0:
        tail = (run_dir / "train.log").read_text(encoding="utf-8", errors="replace")[-3000:]
        raise ToolError(f"training {model} seed {seed} failed (exit {result.returncode}); "
                        f"{run_dir / 'train.log'} ends:\n{tail}")
    (run_dir / "trained").touch()


def checkpoint_to_decode(study, model, seed):
    return study.run_dir(model, seed) / "checkpoints" / f"checkpoint_{study.args.checkpoint}.pt"


def average_last_validations(study, model, seed):
    """With ``--checkpoint average``: write the run's checkpoint_average.pt, the mean of the
    checkpoints its last ``--average-last`` validations saved (once; the study's settings fix
    how many)."""
    output = checkpoint_to_decode(study, model, seed)
    if output.exists():
        return
    write_average(str(output.parent), study.args.average_last, str(output))


def result_files(study, model, seed, test_positions=None):
    """``(hypotheses, result.json, aer.json)`` of one evaluation of a run."""
    suffix = f".test-{test_positions}" if test_positions else ""
    run_dir = study.run_dir(model, seed)
    return (run_dir / f"generate{suffix}.out", run_dir / f"result{suffix}.json",
            run_dir / f"aer{suffix}.json")


def finished(study, model, seed):
    return all(result_files(study, model, seed, name)[1].exists()
               for _, name in study.evaluations(model))


def run_state(study, model, seed):
    """Where a run is, from its folder alone: "done", "evaluating", "training, update N of
    BUDGET" (the last update its log gives) or "waiting"."""
    run_dir = study.run_dir(model, seed)
    if finished(study, model, seed):
        return "done"
    if (run_dir / "trained").exists():
        return "evaluating"
    if (run_dir / "train.log").exists():
        return f"training, update {last_update(run_dir / 'train.log')} of {study.updates}"
    return "waiting"


def print_progress(study, runs):
    """Each run's state and their counts, on stderr: what a command that finds the study's
    folder in use by another one (which trains the runs) tells."""
    counts = dict.fromkeys(("done", "training", "evaluating", "waiting"), 0)
    for model, seed in runs:
        state = run_state(study, model, seed)
        counts[state.partition(",")[0]] += 1
        print(f"xlpe-study: {model} seed {seed}: {state}", file=sys.stderr)
    print("xlpe-study: " + ", ".join(f"{count} {state}" for state, count in counts.items()),
          file=sys.stderr, flush=True)


def evaluate(study, model, seed, references, test_positions=None, gpus=()):
    """Translate the test split (with another set's positions, on ``gpus`` where given), score
    it, write its result."""
    args = study.args
    run_dir = study.run_dir(model, seed)
    checkpoint = checkpoint_to_decode(study, model, seed)
    output, result_json, aer_json = result_files(study, model, seed, test_positions)
    data_bin = study.data_bin(model, test_positions)
    generate(checkpoint, data_bin, args.gen_subset, str(output),
             ["--source-lang", args.source_lang, "--target-lang", args.target_lang,
              *shlex.split(args.generate_args), *study.generate_options(test_positions),
              *study.device_flags("generate_device")], device_environment(gpus))
    try:
        hypotheses = read_hypotheses(str(output), len(references))
    except IncompleteGenerationError as err:
        raise InputError(str(err)) from err
    state = read_checkpoint(str(checkpoint))
    result = {"model": model, "seed": seed, **score(detokenize(hypotheses),
                                                    references,
                                                    bleu_tokenizer(args.target_lang, args.tokenize)),
              "parameters": stored_parameter_count(state), "options": trained_options(state)}
    if args.gold:
        result["aer"] = alignment_error_rate(study, data_bin, checkpoint, aer_json, gpus)
    result["curve"] = validation_curve(run_dir / "train.log")
    with atomic_output(str(result_json)) as out:
        json.dump(result, out, indent=2)
    return result


def stored_section(section):
    """A checkpoint's config section as a dict: an argparse.Namespace for fairseq's legacy
    (``--arch``) models and tasks, a dict or DictConfig otherwise."""
    return vars(section) if isinstance(section, argparse.Namespace) else dict(section)


def trained_options(state):
    """The options that define a run's model, task and criterion, with the defaults they took,
    as fairseq stored them in the checkpoint's state (``read_checkpoint``): ``{"model": {...},
    "task": {...}, "criterion": {...}}``, each with its registered name under ``"name"``.
    Per-run options (seed, save dir, data path, hardware) and a component's
    ``decoding_options`` are not among them."""
    from fairseq.models import ARCH_MODEL_REGISTRY
    from fairseq.tasks import TASK_REGISTRY

    # importing registers the plugin's classes, so that their options are known
    import xlpe_fairseq.criterions  # noqa: F401
    import xlpe_fairseq.models  # noqa: F401
    import xlpe_fairseq.tasks  # noqa: F401

    model, task, criterion = (stored_section(state["cfg"][key]) for key in ("model", "task", "criterion"))
    arch = model.get("arch") or model["_name"]
    task_name = task.get("task") or task["_name"]

    def declared(component, stored):
        parser = argparse.ArgumentParser(add_help=False, conflict_handler="resolve")
        component.add_args(parser)
        names = ({action.dest for action in parser._actions} - {"data"}
                 - set(getattr(component, "decoding_options", ())))
        return {name: stored[name] for name in sorted(names) if name in stored}

    options = {
        "model": {"name": arch, **declared(ARCH_MODEL_REGISTRY[arch], model)},
        "task": {"name": task_name, **declared(TASK_REGISTRY[task_name], task)},
        "criterion": {"name": criterion.get("_name") or model.get("criterion"),
                      **{key: value for key, value in sorted(criterion.items())
                         if key != "_name"}},
    }
    # as result.json stores them (tuples as lists, other objects as text), so that options
    # read back from a result compare equal to fresh ones
    return json.loads(json.dumps(options, default=str))


def row_options(model, seeds, runs):
    """The options a row was trained with; a row whose seeds were trained with different
    ones (a code default changed between them) is refused."""
    options = [run.get("options") for run in runs]
    if None in options:  # results written before studies recorded the options
        return None
    flat = [{f"{section}.{key}": value for section, values in each.items()
             for key, value in values.items()} for each in options]
    for seed, other in zip(seeds[1:], flat[1:]):
        changed = sorted(key for key in flat[0].keys() | other.keys()
                         if flat[0].get(key) != other.get(key))
        if changed:
            raise InputError(f"{model}: seeds {seeds[0]} and {seed} were trained with other "
                             f"options ({', '.join(changed)}), so the code's defaults changed "
                             f"between them; retrain one (remove its runs/{model}/seedS) or use "
                             "another --work")
    return options[0]


def alignment_error_rate(study, data_bin, checkpoint, scores, gpus=()):
    """AER of the model's attention against the gold alignment (``xlpe-aer``, JSON to ``scores``)."""
    args = study.args
    command = [sys.executable, "-m", "xlpe_fairseq.evaluation.attention_alignment",
               "--gold", args.gold, "--source-bpe", args.source_bpe, "--target-bpe",
               args.target_bpe, "--data-bin", str(data_bin), "--split",
               args.gen_subset, "--checkpoint", f"model={checkpoint}", "--json", str(scores)]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", **device_environment(gpus)}
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise ToolError(f"{shlex.join(command)} failed:\n{result.stderr[-3000:]}")
    with open(scores, encoding="utf-8") as f:
        return json.load(f)[0]["aer"]


def format_duration(seconds):
    minutes = int(round(seconds / 60))
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def train_and_evaluate(study, model, seed, references, gpus=()):
    """One run (on ``gpus`` where given): train (or resume), then every evaluation not done yet
    (a test position set added to a finished study decodes only with that set); returns the
    main evaluation's result."""
    train(study, model, seed, gpus)
    if study.args.checkpoint == "average":
        average_last_validations(study, model, seed)
    results = []
    for _, name in study.evaluations(model):
        result_json = result_files(study, model, seed, name)[1]
        if result_json.exists():
            with open(result_json, encoding="utf-8") as f:
                results.append(json.load(f))
        else:
            results.append(evaluate(study, model, seed, references, name, gpus))
    return results[0]


def run_pending(study, pending, references, jobs, gpus=None):
    """Train and evaluate ``pending`` runs, ``jobs`` at a time, each on GPUs of its own where
    ``gpus`` (a GpuPlacement) is given, with progress and an ETA."""
    durations, done, lock = [], [0], threading.Lock()

    def one(model, seed):
        started = time.monotonic()
        with gpus.place() if gpus else contextlib.nullcontext(()) as placed:
            result = train_and_evaluate(study, model, seed, references, placed)
        with lock:
            durations.append(time.monotonic() - started)
            done[0] += 1
            left = len(pending) - done[0]
            eta = (f", ETA {format_duration(np.mean(durations) * left / min(jobs, left))}"
                   if left else "")
            print(f"xlpe-study: [{done[0]}/{len(pending)}] {model} seed {seed}: BLEU "
                  f"{result['bleu']:.2f} chrF {result['chrf']:.2f} "
                  f"({format_duration(durations[-1])}{eta})", file=sys.stderr, flush=True)

    pool = ThreadPoolExecutor(max_workers=jobs)
    futures = [pool.submit(one, model, seed) for model, seed in pending]
    try:
        running = set(futures)
        while running:
            # with a timeout: the kernel may deliver a SIGTERM to a worker thread, and then
            # only the main thread's return to Python runs the handler; a wait without one
            # returns when a run ends, hours later
            finished, running = wait(running, timeout=1, return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()
    except Terminated as stop:
        # stop now (Ctrl-C, or a cluster's time limit's SIGTERM): the running commands end too,
        # and their runs resume from their last checkpoint when the study is called again
        pool.shutdown(wait=False, cancel_futures=True)
        # done(), not wait(): wait() never counts a future cancelled before it started
        while not all(future.done() for future in futures):
            for pid in child_processes():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            time.sleep(0.2)
        print(f"xlpe-study: stopped by {signal.Signals(stop.code - 128).name} after {done[0]} of "
              f"{len(pending)} runs; the same command resumes the others from their last "
              "checkpoints", file=sys.stderr, flush=True)
        raise
    finally:
        # a failed run stops the study: runs not started are dropped, running ones finish
        pool.shutdown(wait=True, cancel_futures=True)
