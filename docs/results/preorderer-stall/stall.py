"""The preorderer's training alone and beside one busy process, in one run: members one after
another on all cores' threads (the recipes before) against one-thread members side by side
(the recipes now).

    python docs/results/preorderer-stall/stall.py OUT SRC RESULTS.json [--rounds 2]

OUT is a prepared corpus (``bpe/train.SRC``, ``bpe/train.btg.reorder``). Each arrangement
trains the same two members (seeds 1 and 2, the structured loss, ``--sample`` pairs,
``--epochs`` epochs, no validation) on an idle machine and beside one process that spins on
one core (``python -c 'while True: pass'``, or ``--busy CODE``, e.g. a two-thread torch loop as
a training job is, ``--busy-session`` in a session of its own), in the order old-idle,
old-busy, new-idle, new-busy, for ``--rounds`` rounds. The ratio busy/idle of each arrangement's wall time is
the stall; CPU seconds of the members (``os.wait4``) are reported beside it.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def members(args, threads, seeds, work):
    return [["xlpe-preorder-train", "--source", str(args.out / "bpe" / f"train.{args.src}"),
             "--reorder", str(args.out / "bpe" / "train.btg.reorder"), "--loss", "structured",
             "--epochs", str(args.epochs), "--batch-tokens", "2000", "--max-train-length", "150",
             "--sample", str(args.sample), "--seed", str(seed), "--threads", str(threads),
             "--save", str(work / f"seed{seed}.pt")] for seed in seeds]


def run(commands, jobs):
    """Wall seconds of running ``commands`` ``jobs`` at a time, and their CPU seconds."""
    start = time.monotonic()
    pending, running, cpu = list(commands), set(), 0.0
    while pending or running:
        while pending and len(running) < jobs:
            running.add(subprocess.Popen(pending.pop(0), stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL).pid)
        pid, status, usage = os.wait4(-1, 0)
        if pid in running:
            running.discard(pid)
            if os.waitstatus_to_exitcode(status):
                sys.exit("a member failed")
            cpu += usage.ru_utime + usage.ru_stime
    return time.monotonic() - start, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("src")
    parser.add_argument("results", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sample", type=int, default=3000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--busy", default="while True: pass",
                        help="the busy process's Python code (default: spin on one core)")
    parser.add_argument("--busy-session", action="store_true",
                        help="start it in a session of its own, as a job started elsewhere")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    work = args.results.with_suffix("")
    work.mkdir(parents=True, exist_ok=True)
    arrangements = {
        "old: one member after another, --threads %d" % cores:
            (members(args, cores, (1, 2), work), 1),
        "new: members side by side, --threads 1": (members(args, 1, (1, 2), work), cores),
    }
    rows = []
    for round_ in range(1, args.rounds + 1):
        for name, (commands, jobs) in arrangements.items():
            for load in ("idle", "beside one busy process"):
                busy = None
                if load != "idle":
                    busy = subprocess.Popen([sys.executable, "-c", args.busy],
                                            start_new_session=args.busy_session)
                    time.sleep(1)
                try:
                    wall, cpu = run(commands, jobs)
                finally:
                    if busy:
                        busy.kill()
                        busy.wait()
                rows.append({"round": round_, "arrangement": name, "load": load,
                             "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)})
                print(json.dumps(rows[-1]), flush=True)
                args.results.write_text(json.dumps(rows, indent=1) + "\n")
    for name in arrangements:
        idle = [r["wall_s"] for r in rows if r["arrangement"] == name and r["load"] == "idle"]
        loaded = [r["wall_s"] for r in rows if r["arrangement"] == name and r["load"] != "idle"]
        print(f"{name}: idle {idle}, busy {loaded}, ratio "
              f"{[round(b / a, 2) for a, b in zip(idle, loaded)]}")


if __name__ == "__main__":
    main()
