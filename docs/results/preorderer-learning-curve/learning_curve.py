"""The preorderer's learning curve: Kendall's tau and FRS on test against training sentences,
and what each point cost in CPU time.

    python docs/results/preorderer-learning-curve/learning_curve.py OUT SRC RESULTS.json \
        [--sizes 2000 5000 10000 20000 0] [--jobs 2]

OUT is a prepared corpus (``bpe/{train,valid,test}.SRC`` and their ``.btg.reorder``). For each
size (0: all training sentences) it trains, on one seeded sample of that size
(``xlpe-preorder-train --sample``):

- ``ensemble``: the recipes' default up to 35,000 pairs, four structured-loss members of 9
  epochs (batches of 2000 tokens, sentences up to 150), seeds 1-4, combined by
  ``xlpe-preorder-ensemble`` on valid;
- ``pairwise``: the old large-corpus default, one pairwise model of 5 epochs (4000 / 200).

Every member is a process of ``--threads`` threads (1), ``--jobs`` of them at a time (2);
``--jobs 1 --threads 2`` trains them as the recipes did before. The CPU seconds are
each process's own (``os.wait4``), so they compare across loads, the wall seconds do not.
Test positions are scored against the BTG oracle with ``xlpe-reorder-score``.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

MODELS = {
    "ensemble": dict(seeds=(1, 2, 3, 4), options=["--loss", "structured", "--epochs", "9",
                                                 "--batch-tokens", "2000",
                                                 "--max-train-length", "150"]),
    "pairwise": dict(seeds=(1,), options=["--loss", "pairwise", "--epochs", "5",
                                          "--batch-tokens", "4000",
                                          "--max-train-length", "200"]),
}


def run_all(commands, logs, jobs):
    """Run ``commands`` ``jobs`` at a time, each one's stderr to its log; return each one's
    CPU seconds, in order."""
    pending = list(enumerate(commands))
    running, cpu = {}, [None] * len(commands)
    while pending or running:
        while pending and len(running) < jobs:
            index, command = pending.pop(0)
            with open(logs[index], "w") as log:
                process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
            running[process.pid] = index
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        index = running.pop(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: {' '.join(commands[index])}; see {logs[index]}")
        cpu[index] = usage.ru_utime + usage.ru_stime
    return cpu


def score(hypothesis, reference):
    return subprocess.run(["xlpe-reorder-score", "--hypothesis", hypothesis, "--reference",
                           reference], check=True, capture_output=True, text=True).stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("src")
    parser.add_argument("results", type=Path)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000, 20000, 0])
    parser.add_argument("--jobs", type=int, default=2, help="members at a time")
    parser.add_argument("--threads", type=int, default=1, help="torch threads a member")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--work", type=Path, help="folder for the models (default: beside "
                        "RESULTS)")
    args = parser.parse_args()
    bpe = args.out / "bpe"
    train = bpe / f"train.{args.src}"
    with open(train, "rb") as f:
        total = sum(1 for _ in f)
    work = args.work or args.results.with_suffix("")
    work.mkdir(parents=True, exist_ok=True)
    rows = json.loads(args.results.read_text()) if args.results.exists() else []
    done = {(row["model"], row["sentences"]) for row in rows}
    common = ["--source", str(train), "--reorder", str(bpe / "train.btg.reorder"),
              "--valid-source", str(bpe / f"valid.{args.src}"),
              "--valid-reorder", str(bpe / "valid.btg.reorder"), "--threads", str(args.threads)]
    for size in args.sizes:
        sentences = total if size == 0 or size >= total else size
        if size and size > total:
            continue
        for model in args.models:
            spec = MODELS[model]
            if (model, sentences) in done:
                continue
            stem = work / f"{model}-{sentences}"
            members = [f"{stem}.seed{seed}.pt" for seed in spec["seeds"]]
            commands = [["xlpe-preorder-train", *common, *spec["options"], "--seed", str(seed),
                         "--sample", str(sentences), "--save", member]
                        for seed, member in zip(spec["seeds"], members)]
            start = time.monotonic()
            cpu = run_all(commands, [m.replace(".pt", ".log") for m in members], args.jobs)
            wall = time.monotonic() - start
            final = members[0]
            if len(members) > 1:
                final = f"{stem}.pt"
                subprocess.run(["xlpe-preorder-ensemble", "--preorderers", *members,
                                "--valid-source", str(bpe / f"valid.{args.src}"),
                                "--valid-reorder", str(bpe / "valid.btg.reorder"),
                                "--save", final, "--threads", "1"], check=True,
                               stderr=subprocess.DEVNULL)
            predicted = f"{stem}.test.reorder"
            subprocess.run(["xlpe-preorder", "--preorderer", final, "--source",
                            str(bpe / f"test.{args.src}"), "--output", predicted], check=True,
                           stderr=subprocess.DEVNULL)
            report = score(predicted, str(bpe / "test.btg.reorder"))
            rows.append({"model": model, "sentences": sentences, "corpus": total,
                         "train_cpu_s": round(sum(cpu), 1),
                         "member_cpu_s": [round(c, 1) for c in cpu],
                         "train_wall_s": round(wall, 1), "jobs": args.jobs,
                         "threads": args.threads, "score": report})
            args.results.write_text(json.dumps(rows, indent=1) + "\n")
            print(model, sentences, round(sum(cpu)), "CPU s",
                  report.strip().replace("\n", " | "), flush=True)


if __name__ == "__main__":
    main()
