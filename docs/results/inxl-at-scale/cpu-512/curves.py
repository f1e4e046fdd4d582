"""Training and valid NLL of the 512/6+6 CPU runs at every validation, per row (mean of its
seeds) and against the Transformer, with InXL's input statistics beside them.

    python docs/results/inxl-at-scale/cpu-512/curves.py LOG_DIR OUT_DIR

LOG_DIR holds one fairseq-train log per run, named ROW-sSEED.log (run.sh), and may hold
curves.tsv files this script wrote before (runs whose logs are gone; a log of the same
ROW-sSEED takes precedence, and the runs are then taken to train as before: fairseq-train on
the CPU repeats to the bit on the same data-bin, which a rerun's first validation checks);
OUT_DIR gets
curves.tsv (every run, every validation), table.md (means over seeds at every validation;
blank where a row's runs did not reach it), paired.md (each row's training NLL minus the
Transformer's of the same seed, which trains on the same batches: per seed, and their mean
and 95% t-interval over the seeds that reached the validation; then each InXL row against its
monotone control, ROW against ROW with "-monotone" after "inxl-identity") and curves.png.
Rows named "-unpaired" are runs from before U and V were built off torch's global random
stream: their decoder started from another draw than the Transformer's of the same seed.
"""
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from xlpe_fairseq.evaluation.study.logs import TRAIN_LINES, VALID_LINE, log_fields

FIELDS = ("nll_loss", "xlpe_in_norm", "xlpe_saturated", "gnorm")


def run_points(log):
    """{update: {"train_nll", "valid_nll", "xlpe_in_norm", "xlpe_saturated"}} at validations;
    training values are fairseq's average over the log interval that ends there."""
    train = {int(f["num_updates"]): f for f in log_fields(log, TRAIN_LINES[0])}
    points = {}
    for fields in log_fields(log, VALID_LINE):
        update = int(fields["num_updates"])
        if update not in train:
            continue
        point = {"train_nll": float(train[update]["nll_loss"]),
                 "valid_nll": float(fields["nll_loss"])}
        for name in ("xlpe_in_norm", "xlpe_saturated"):
            if name in train[update]:
                point[name] = float(train[update][name])
        points[update] = point
    return points


def earlier_runs(tsv):
    """{(row, seed): points} as ``run_points`` gives them, from a curves.tsv of this script."""
    runs = defaultdict(dict)
    with open(tsv, encoding="utf-8") as lines:
        next(lines)
        for line in lines:
            row, seed, update, train, valid, norm, saturated = line.rstrip("\n").split("\t")
            point = {"train_nll": float(train), "valid_nll": float(valid)}
            if norm:
                point.update(xlpe_in_norm=float(norm), xlpe_saturated=float(saturated))
            runs[row, int(seed)][int(update)] = point
    return runs


def main(log_dir, out_dir):
    out = Path(out_dir)
    runs = defaultdict(dict)
    for tsv in sorted(Path(log_dir).glob("*.tsv")):
        for (row, seed), points in earlier_runs(tsv).items():
            runs[row][seed] = points
    for log in sorted(Path(log_dir).glob("*.log")):
        row, seed = re.fullmatch(r"(.+)-s(\d+)", log.stem).groups()
        runs[row][int(seed)] = run_points(log)
    with open(out / "curves.tsv", "w", encoding="utf-8") as tsv:
        tsv.write("row\tseed\tupdate\ttrain_nll\tvalid_nll\txlpe_in_norm\txlpe_saturated\n")
        for row, seeds in runs.items():
            for seed, points in sorted(seeds.items()):
                for update, p in sorted(points.items()):
                    tsv.write(f"{row}\t{seed}\t{update}\t{p['train_nll']}\t{p['valid_nll']}\t"
                              f"{p.get('xlpe_in_norm', '')}\t{p.get('xlpe_saturated', '')}\n")
    rows = ["transformer", *sorted(row for row in runs if row != "transformer")]
    updates = sorted(set.union(*(set(points) for seeds in runs.values()
                                 for points in seeds.values())))

    def mean(row, update, measure, seeds=None):
        """The mean over the row's seeds (or ``seeds``); None unless each reached ``update``."""
        chosen = [runs[row].get(seed) for seed in (seeds or runs[row])]
        if any(points is None or update not in points for points in chosen):
            return None
        return statistics.mean(points[update][measure] for points in chosen)

    def cell(row, update, measure):
        """The row's mean; beside it, its difference to the Transformer's on the same seeds."""
        value = mean(row, update, measure)
        base = mean("transformer", update, measure, seeds=list(runs[row]))
        if value is None:
            return ""
        if row == "transformer" or base is None:
            return f"{value:.2f}"
        return f"{value:.2f} ({value - base:+.2f})"

    def input_cell(row, update):
        norm = mean(row, update, "xlpe_in_norm")
        return "" if norm is None else \
            f"{norm:.2f} / {100 * mean(row, update, 'xlpe_saturated'):.1f}%"

    inputs = [row for row in rows
              if all("xlpe_in_norm" in point for points in runs[row].values()
                     for point in points.values())]
    seeds = ", ".join(f"{row} {len(runs[row])}" for row in rows)
    lines = [f"NLL in bits per target token, mean over seeds ({seeds}); in brackets the "
             "difference to transformer on the same seeds. Training: fairseq's average over "
             "the 40 updates "
             "before the validation. PE_IN: its mean norm / the share of saturated tanh "
             "units, in the same 40 updates.\n",
             "| update | " + " | ".join(f"train {row}" for row in rows) + " | "
             + " | ".join(f"valid {row}" for row in rows) + " | "
             + " | ".join(f"PE_IN {row}" for row in inputs) + " |",
             "|---|" + "---|" * (2 * len(rows) + len(inputs))]
    for update in updates:
        lines.append(f"| {update} | " + " | ".join(
            [cell(row, update, "train_nll") for row in rows]
            + [cell(row, update, "valid_nll") for row in rows]
            + [input_cell(row, update) for row in inputs]) + " |")
    (out / "table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    controls = {row.replace("-monotone", ""): row for row in runs if "-monotone" in row}
    (out / "paired.md").write_text(
        paired_table(runs, {row: "transformer" for row in runs if row != "transformer"},
                     "Training NLL minus the Transformer's of the same seed (bits; the same "
                     "seed trains on the same batches)")
        + paired_table(runs, {row: control for row, control in controls.items() if row in runs},
                       "\nInXL on the XL positions minus the same model on monotone positions, "
                       "of the same seed (bits; the same batches and the same start, so they "
                       "differ in PE_XL alone)"), encoding="utf-8")
    plot(out / "curves.png", runs)


def paired_table(runs, bases, title):
    """Markdown: per row of ``bases`` ({row: the row it is compared with}), its training NLL
    minus the base's of the same seed at every validation; the mean and its 95% t-interval
    over the seeds that reached it."""
    from scipy import stats

    lines = [f"{title}: each seed (–: not trained that far), then the mean and its 95% "
             "t-interval over the seeds that were.\n"]
    for row, base in sorted(bases.items()):
        seeds = sorted(seed for seed in runs[row] if seed in runs[base])
        if not seeds:
            continue
        pairs = [(runs[row][seed], runs[base][seed]) for seed in seeds]
        updates = sorted(set.union(*(set(a) & set(b) for a, b in pairs)))
        lines += [f"\n**{row}** against {base} (seeds {', '.join(map(str, seeds))})\n",
                  "| update | " + " | ".join(f"seed {seed}" for seed in seeds)
                  + " | mean | 95% interval |", "|---|" + "---|" * (len(seeds) + 2)]
        for update in updates:
            per_seed = [a[update]["train_nll"] - b[update]["train_nll"]
                        if update in a and update in b else None for a, b in pairs]
            gaps = [gap for gap in per_seed if gap is not None]
            mean = statistics.mean(gaps)
            interval = ""
            if len(gaps) > 1:
                half = stats.t.ppf(0.975, len(gaps) - 1) * statistics.stdev(gaps) \
                    / len(gaps) ** 0.5
                interval = f"{mean - half:+.2f} to {mean + half:+.2f}"
            lines.append(f"| {update} | " + " | ".join("–" if gap is None else f"{gap:+.2f}"
                                                     for gap in per_seed)
                         + f" | {mean:+.2f} | {interval} |")
    return "\n".join(lines) + "\n"


def plot(path, runs):
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    # more rows than the default cycle's ten colours
    colours = colormaps["tab20"]

    figure = Figure(figsize=(9, 4), dpi=110, layout="constrained")
    for k, measure in enumerate(("train_nll", "valid_nll")):
        axes = figure.add_subplot(1, 2, k + 1)
        for n, (row, seeds) in enumerate(runs.items()):
            for seed, points in sorted(seeds.items()):
                updates = sorted(points)
                axes.plot(updates, [points[u][measure] for u in updates], color=colours(n % 20),
                          marker="o", markersize=3, label=row if seed == min(seeds) else None)
        axes.set_xlabel("update")
        axes.set_ylabel(f"{measure.split('_')[0]} NLL (bits)")
        axes.legend()
    figure.savefig(path)


if __name__ == "__main__":
    main(*sys.argv[1:])
