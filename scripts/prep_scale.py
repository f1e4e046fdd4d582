"""Data preparation at scale: every stage of ``data_prep/prepare-corpus.sh`` timed and sized at
several corpus sizes, the growth of each, and a projection to WMT sizes.

    python scripts/prep_scale.py --raw RAW --src en --tgt de --pairs 10000 100000 1000000 \
        --work work/prep-scale [--project 4500000 20000000] [--report REPORT.md]

RAW holds untokenized ``{train,valid,test}.{SRC,TGT}``. For each size N the training pairs are
repeated and shuffled (seeded) to N pairs in ``WORK/raw-N`` (valid and test as they are), and
``prepare-corpus.sh`` prepares ``WORK/out-N`` with ``XLPE_STAGE_LOG`` set, so that every step
logs its wall time, CPU time and peak memory (``xlpe_fairseq/io/stage_usage.py``) to
``WORK/stages-N.jsonl``. A size whose log already ends with the run's last step is not run
again. The report gives, per step, the numbers at each size, the growth exponent between the
two largest sizes (1: linear in the corpus), and the projection to each ``--project`` size,
``t(N) * (P / N) ** max(1, exponent)`` from the largest size N: a step that grew more slowly
than the corpus is still projected linearly, one that did not grow (an exponent below 0.5:
valid and test, a bounded sample) stays as it is. Peak memory is projected the same way from
its own growth, where it was over 100 MiB at both sizes, else kept.

A repeated corpus has the real corpus's vocabulary at every size: steps whose cost follows the
number of distinct words (learning BPE merges, the dictionaries) are underestimated, and the
preorderer's ceiling finds every sentence repeated. The report says so under its table.
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PREPARE = HERE.parent / "data_prep" / "prepare-corpus.sh"
LAST_STEP = "record provenance"


def repeated_corpus(raw, out, src, tgt, pairs, seed):
    """``out/{train,valid,test}.{src,tgt}``: train repeated and shuffled to ``pairs`` pairs."""
    out.mkdir(parents=True, exist_ok=True)
    sources = (raw / f"train.{src}").read_text(encoding="utf-8").splitlines()
    targets = (raw / f"train.{tgt}").read_text(encoding="utf-8").splitlines()
    if len(sources) != len(targets):
        sys.exit(f"{raw}: train.{src} and train.{tgt} differ in length")
    order = [k % len(sources) for k in range(pairs)]
    random.Random(seed).shuffle(order)
    for lang, lines in ((src, sources), (tgt, targets)):
        with open(out / f"train.{lang}.tmp", "w", encoding="utf-8") as f:
            for k in order:
                f.write(lines[k] + "\n")
        os.replace(out / f"train.{lang}.tmp", out / f"train.{lang}")
        for split in ("valid", "test"):
            (out / f"{split}.{lang}").write_text(
                (raw / f"{split}.{lang}").read_text(encoding="utf-8"), encoding="utf-8")


def read_log(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def prepare(args, pairs):
    """Run the recipe at ``pairs`` pairs unless its log is complete; return the log's steps."""
    log = args.work / f"stages-{pairs}.jsonl"
    steps = read_log(log)
    if steps and steps[-1]["step"] == LAST_STEP:
        return steps
    raw = args.work / f"raw-{pairs}"
    repeated_corpus(args.raw, raw, args.src, args.tgt, pairs, args.seed)
    log.unlink(missing_ok=True)
    env = {**os.environ, "XLPE_STAGE_LOG": str(log)}
    with open(args.work / f"prepare-{pairs}.log", "w") as output:
        result = subprocess.run(["bash", str(PREPARE), "--src", args.src, "--tgt", args.tgt,
                                 str(raw), str(args.work / f"out-{pairs}")], env=env,
                                stdout=output, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        sys.exit(f"prepare-corpus.sh failed at {pairs} pairs: see "
                 f"{args.work / f'prepare-{pairs}.log'}")
    return read_log(log)


def step_name(logged):
    """A step's name without the settings that follow the corpus's size (the merges, the
    length limit, a member's epochs), so that one step has one name at every size; the
    members of the preorderer's ensemble are one step."""
    name = re.sub(r" \((\d|ratio)[^)]*\)$", "", logged)
    if name.startswith("train preorderer (seed "):
        return "train preorderer (all members)"
    return re.sub(r", at most [^)]*\)", ")", name)


def by_step(steps, cores):
    """Usage per step name: CPU summed; wall time from the first start to the last end where
    the log has starts (members trained side by side overlap), else summed over ``cores`` side
    by side; memory the largest sum of the peaks of steps of one name running at once (an upper
    bound: their peaks need not coincide), else of ``cores`` of them."""
    merged, spans, peaks = {}, {}, {}
    for step in steps:
        name = step_name(step["step"])
        row = merged.setdefault(name, {"wall_s": 0.0, "cpu_s": 0.0, "count": 0})
        row["wall_s"] += step["wall_s"]
        row["cpu_s"] += step["cpu_s"] or 0.0
        row["count"] += 1
        peaks.setdefault(name, []).append(step)
        if "started" in step:
            first, last = spans.get(name, (step["started"], 0.0))
            spans[name] = (min(first, step["started"]),
                           max(last, step["started"] + step["wall_s"]))
    for name, row in merged.items():
        if row["count"] > 1 and name in spans:
            row["wall_s"] = spans[name][1] - spans[name][0]
        elif row["count"] > 1 and name == "train preorderer (all members)":
            row["wall_s"] /= min(row["count"], cores)
        for key in ("max_rss_mib", "tree_peak_mib"):
            row[key] = peak_at_once(peaks[name], key, cores)
        del row["count"]
    return merged


def peak_at_once(steps, key, cores):
    """The largest sum of ``key`` over steps running at one time: those whose span holds
    another's start where the log has starts, else the ``cores`` largest."""
    if all("started" in step for step in steps):
        return max(sum(other[key] or 0.0 for other in steps
                       if other["started"] <= step["started"]
                       < other["started"] + other["wall_s"])
                   for step in steps)
    return sum(sorted((step[key] or 0.0 for step in steps), reverse=True)[:cores])


def exponent(small, large, n_small, n_large, floor):
    """The growth exponent of a cost between two sizes; None where either is below ``floor``
    (too short or too small to tell)."""
    if small < floor or large < floor:
        return None
    return math.log(large / small) / math.log(n_large / n_small)


def projected(value, growth, scale):
    """``value`` at ``scale`` times the size: constant for a step that did not grow (valid
    and test, a bounded sample), linear or faster for one that did, linear where unknown."""
    if growth is not None and growth < 0.5:
        return value
    return value * scale ** max(1.0, growth or 1.0)


def peak(row):
    """The step's peak memory: its process tree's, or its largest process's if that was more
    (a step shorter than the sampling interval)."""
    return max(row["tree_peak_mib"], row["max_rss_mib"])


def report(runs, project):
    """Markdown: per step, wall and CPU seconds and peak MiB at each size, the growth of its
    wall time between the two largest sizes, and its projected wall time and peak."""
    sizes = sorted(runs)
    names = list(dict.fromkeys(name for n in sizes for name in runs[n]))
    top = sizes[-1]
    below = sizes[-2] if len(sizes) > 1 else None
    head = " | ".join(f"{n:,}" for n in sizes)
    lines = [f"| step | wall s: {head} | CPU s: {head} | peak MiB: {head} | growth | "
             + " | ".join(f"wall at {p:,}" for p in project) + " | "
             + " | ".join(f"peak MiB at {p:,}" for p in project) + " |"]
    lines.append("|" + "---|" * (2 + 3 * len(sizes) + 2 * len(project)))
    totals = {n: [0.0, 0.0, 0.0] for n in sizes}
    at = {p: [0.0, 0.0] for p in project}
    for name in names:
        rows = [runs[n].get(name) for n in sizes]
        last = rows[-1]
        growth = memory_growth = None
        if below is not None and last and rows[-2]:
            growth = exponent(rows[-2]["wall_s"], last["wall_s"], below, top, 1.0)
            memory_growth = exponent(peak(rows[-2]), peak(last), below, top, 100.0)
        cells = [name]
        cells += [f"{r['wall_s']:.1f}" if r else "" for r in rows]
        cells += [f"{r['cpu_s']:.1f}" if r else "" for r in rows]
        cells += [f"{peak(r):.0f}" if r else "" for r in rows]
        cells.append("" if growth is None else f"{growth:.2f}")
        walls, peaks = [], []
        for p in project:
            if not last:
                walls.append("")
                peaks.append("")
                continue
            wall = projected(last["wall_s"], growth, p / top)
            memory = projected(peak(last), memory_growth if memory_growth is not None else 0.0,
                               p / top)
            at[p][0] += wall
            at[p][1] = max(at[p][1], memory)
            walls.append(f"{wall / 60:.1f} min")
            peaks.append(f"{memory:.0f}")
        cells += walls + peaks
        lines.append("| " + " | ".join(cells) + " |")
        for n, r in zip(sizes, rows):
            if r:
                totals[n][0] += r["wall_s"]
                totals[n][1] += r["cpu_s"]
                totals[n][2] = max(totals[n][2], peak(r))
    cells = ["**all steps**"]
    cells += [f"{totals[n][0]:.0f}" for n in sizes] + [f"{totals[n][1]:.0f}" for n in sizes]
    cells += [f"{totals[n][2]:.0f}" for n in sizes] + [""]
    cells += [f"{at[p][0] / 3600:.2f} h" for p in project]
    cells += [f"{at[p][1]:.0f}" for p in project]
    lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raw", type=Path, required=True, help="untokenized corpus folder")
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    parser.add_argument("--pairs", type=int, nargs="+", required=True,
                        help="training pairs of each run, e.g. 10000 100000 1000000")
    parser.add_argument("--work", type=Path, required=True, help="folder for the runs")
    parser.add_argument("--project", type=int, nargs="*", default=[4500000, 20000000],
                        help="sizes to project to")
    parser.add_argument("--seed", type=int, default=1, help="seed of the shuffle")
    parser.add_argument("--report", type=Path, help="also write the report here")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    runs = {}
    for pairs in sorted(args.pairs):
        runs[pairs] = by_step(prepare(args, pairs), len(os.sched_getaffinity(0)))
        print(f"{pairs} pairs: {sum(r['wall_s'] for r in runs[pairs].values()):.0f} s",
              file=sys.stderr, flush=True)
    text = report(runs, args.project)
    (args.work / "stages.json").write_text(json.dumps(
        {str(n): steps for n, steps in runs.items()}, indent=1) + "\n")
    if args.report:
        args.report.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
