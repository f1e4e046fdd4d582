"""The study's report: report.md, report.json, the scored test outputs and curves.png."""
import json
import os
import re

import numpy as np

from ...io import atomic_output
from ...preordering.advice import advice, read_score_file
from ...user_dir import PLUGIN_DIR
from ..bleu import detokenize
from ..curves import plot_curves
from ..generate_output import read_hypotheses
from .logs import (
    INPUT_FIELDS,
    LATER_ORDER_FIELDS,
    ORDER_FIELDS,
    input_diagnostics,
    order_diagnostics,
)
from .plan import recipe_file, trained_row
from .runs import result_files
from .statistics import summarize, verdict


def position_sets_text(positions):
    if not positions:
        return []
    return ["", "Position sets (same text, other reorder positions): " + ", ".join(
        f"`{name}` = `{path}`" for name, path in positions.items()) + ". `MODEL@SET`: trained "
        "and tested on SET's positions; `MODEL [test: SET]`: the checkpoints of the row "
        "`MODEL`, decoded with SET's test positions."]


def averaged_text(settings):
    last = settings.get("average_last")
    if not last:
        return ""
    return f" (the mean of the checkpoints of the last {counted(last, 'validation')})"


def counted(number, noun):
    return f"{number} {noun}{'' if number == 1 else 's'}"


def verdicts_text(rows):
    """The verdict line, or nothing for a study of the baseline alone."""
    verdicts = [f"{row['model']}: {verdict(row['bleu']['vs_baseline'])}"
                for row in rows if "vs_baseline" in row["bleu"]]
    return ["", "Verdicts at p < 0.05 (BLEU): " + "; ".join(verdicts) + "."] if verdicts else []


def model_count(summary):
    """Trained models, not rows: a row ``MODEL [test: SET]`` re-decodes MODEL's checkpoints."""
    return sum(trained_row(row["model"]) == row["model"] for row in summary["models"])


def portable_paths(text, work):
    """The report's absolute paths as any reader can use them: the interpreter as ``python``,
    the plugin as ``$(xlpe-user-dir)``, everything else relative to the work folder."""
    plugin = PLUGIN_DIR

    def shown(match):
        path = match.group(0)
        if re.fullmatch(r"/\S*/bin/python[\d.]*", path):
            return "python"
        if path == plugin or path.startswith(plugin + "/"):
            return "$(xlpe-user-dir)" + path[len(plugin):]
        return os.path.relpath(path, work)

    return re.sub(r"(?<![\w.~$])/[^\s`'\",]+", shown, text)


def markdown_report(summary, commands, work):
    def cell(stats):
        if stats["sd"] is None:
            return f"{stats['mean']:.2f}"
        return f"{stats['mean']:.2f} ± {stats['sd']:.2f}"

    def versus(stats):
        if "vs_baseline" not in stats:
            return "–", "–"
        c = stats["vs_baseline"]
        return f"{c['delta']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]", f"{c['p']:.3f}"

    settings = summary["settings"]
    has_aer = all("aer" in row for row in summary["models"])
    header = "| model | BLEU (mean ± sd) | per seed | ΔBLEU [95%] | p | chrF (mean ± sd) | ΔchrF [95%] | p |"
    header += " AER |" if has_aer else ""
    seeds = len(summary["models"][0]["seeds"])
    lines = [
        f"# Study: {counted(len(summary['models']), 'row')} "
        f"({counted(model_count(summary), 'model')}) × {counted(seeds, 'seed')}",
        "",
        f"Profile `{settings['profile']}`, {settings['updates']} updates per run, data "
        f"`{settings['data_bin']}`, {settings['source_lang']}→{settings['target_lang']}, "
        f"checkpoint `{settings['checkpoint']}`{averaged_text(settings)}, generate "
        f"`{settings['generate_args']}`.",
        *position_sets_text(settings["positions"]),
        *variants_text(settings.get("variants"), summary["models"]),
        "", header, "|---" * (header.count("|") - 1) + "|",
    ]
    for row in summary["models"]:
        name = f"{row['model']} (baseline)" if row["baseline"] else row["model"]
        bleu_delta, bleu_p = versus(row["bleu"])
        chrf_delta, chrf_p = versus(row["chrf"])
        per_seed = " / ".join(f"{value:.2f}" for value in row["bleu"]["per_seed"])
        line = (f"| {name} | {cell(row['bleu'])} | {per_seed} | {bleu_delta} | {bleu_p} "
                f"| {cell(row['chrf'])} | {chrf_delta} | {chrf_p} |")
        if has_aer:
            line += f" {row['aer']['mean']:.3f} |"
        lines.append(line)
    lines += [
        "",
        "Δ: seed-averaged score minus the baseline's; [95%] and p (two-sided) from "
        f"{summary['bootstrap_samples']} bootstrap samples (seed {summary['bootstrap_seed']}) "
        "that resample the test sentences (paired across systems) and each system's seeds "
        "(with replacement). sd: sample standard deviation over seeds (none for one seed).",
        *verdicts_text(summary["models"]),
        *([f"XL PE rows: {summary['xlpe_advice']}"] if summary.get("xlpe_advice") else []),
        "",
        f"BLEU: {summary['bleu_signature']}",
        f"chrF: {summary['chrf_signature']}",
        "",
        "Training curves: `curves.png` (validation NLL, mean over seeds). Test outputs: "
        "`hypotheses/MODEL/seedS.txt` (`seedS.test-SET.txt` for a row `[test: SET]`), "
        "detokenized as scored.",
        *validation_text(summary.get("validation")),
        *oracle_gain_shares_text(summary.get("oracle_gain_shares")),
        *order_diagnostics_text(summary.get("order_diagnostics")),
        *input_diagnostics_text(summary.get("input_diagnostics")),
        "",
        "## Commands",
        "",
        *[f"    {command}" for command in commands],
    ]
    return portable_paths("\n".join(lines) + "\n", work)


def hypotheses_file(work, model, seed, test_positions=None):
    """Where the report keeps one evaluation's detokenized test output, as it was scored:
    the numbers can be checked and new systems compared without the runs' checkpoints."""
    suffix = f".test-{test_positions}" if test_positions else ""
    return work / "hypotheses" / model / f"seed{seed}{suffix}.txt"


def write_report(study, models, seeds, references):
    hypotheses, results, commands, labels = {}, {}, [], []
    for model in models:
        for label, test_positions in study.evaluations(model):
            labels.append(label)
            for seed in seeds:
                output, result_json, _ = result_files(study, model, seed, test_positions)
                with open(result_json, encoding="utf-8") as f:
                    results[label, seed] = json.load(f)
                hypotheses[label, seed] = detokenize(
                    read_hypotheses(str(output), len(references)))
                with atomic_output(str(hypotheses_file(study.work, model, seed,
                                                       test_positions))) as out:
                    out.writelines(line + "\n" for line in hypotheses[label, seed])
        for seed in seeds:
            commands.append((study.run_dir(model, seed) / "command.txt")
                            .read_text(encoding="utf-8").strip())
    summary = summarize(study, labels, seeds, references, hypotheses, results,
                        study.args.bootstrap_samples)
    summary["validation"] = validation_by_model(results, models, seeds)
    summary["order_diagnostics"] = diagnostics_by_model(
        study, models, seeds, order_diagnostics, ORDER_FIELDS, LATER_ORDER_FIELDS)
    summary["xlpe_advice"] = xlpe_advice(study, models)
    summary["input_diagnostics"] = diagnostics_by_model(
        study, models, seeds, input_diagnostics, INPUT_FIELDS)
    with atomic_output(str(study.work / "report.json")) as out:
        out.write(portable_paths(json.dumps(summary, indent=2), study.work))
    with atomic_output(str(study.work / "report.md")) as out:
        out.write(markdown_report(summary, commands, study.work))
    curves = {}
    for model in models:
        by_update = {}
        for seed in seeds:
            for update, loss in results[model, seed]["curve"].items():
                by_update.setdefault(int(update), []).append(loss)
        curves[model] = {update: float(np.mean(losses)) for update, losses in by_update.items()}
    if any(curves.values()):
        plot_curves(str(study.work / "curves.png"), curves, "updates",
                    "validation NLL (mean over seeds)", y_label="NLL (bits a token)")
    return summary


def score_file(args):
    """The preorderer's test score the XL PE rows' positions were written with: --preorderer-score,
    or the recipes' OUT/preorderer.test.score beside OUT/data-bin/xlpe; None when not there."""
    return args.preorderer_score or recipe_file(args, "preorderer.test.score")


def xlpe_advice(study, models):
    """The recipe's one-line advice (the model to train on the pair, its command and why, from
    the XL PE rows' test positions), for a study with XL PE rows whose score file is known."""
    path = score_file(study.args)
    if path is None or not any(study.reads_positions(model) for model in models):
        return None
    return advice(read_score_file(path))


def diagnostics_by_model(study, models, seeds, read, fields, later_fields=()):
    """Per model that logs ``fields`` (``read`` from a run's log), each split's values averaged
    over seeds; of ``later_fields``, those every seed logged."""
    by_model = {}
    for model in models:
        runs = [read(study.run_dir(model, seed) / "train.log") for seed in seeds]
        for split in ("train", "valid"):
            if all(split in run for run in runs):
                names = (*fields, "num_updates",
                         *(name for name in later_fields
                           if all(name in run[split] for run in runs)))
                by_model.setdefault(model, {})[split] = {
                    name: float(np.mean([run[split][name] for run in runs])) for name in names}
    return by_model


def validation_by_model(results, models, seeds):
    """Per trained model whose runs all validated: each seed's lowest validation NLL and the
    update it came at, and its last validation. Where the lowest comes says where the budget
    should end; last minus lowest, how far the last checkpoint trained past it."""
    by_model = {}
    for model in models:
        curves = [{int(update): loss for update, loss in results[model, seed]["curve"].items()}
                  for seed in seeds]
        if not all(curves):
            continue
        lowest = [min(sorted(curve), key=curve.get) for curve in curves]  # earliest of ties
        last = [max(curve) for curve in curves]
        by_model[model] = {
            "lowest": float(np.mean([curve[u] for curve, u in zip(curves, lowest)])),
            "lowest_updates": lowest,
            "last": float(np.mean([curve[u] for curve, u in zip(curves, last)])),
            "last_updates": last,
        }
    return by_model


def validation_text(validation):
    if not validation:
        return []
    lines = ["", "## Where does validation bottom out?", "",
             "Validation NLL (bits a token, without label smoothing) of each model, mean over "
             "seeds: the lowest, the update each seed reached it at, and the last. A last above "
             "the lowest is training past the best validation; `--checkpoint best` scores the "
             "checkpoint fairseq kept for the lowest `loss` (label-smoothed, with DPE's order "
             "loss), usually the same update.", "",
             "| model | lowest valid NLL | at update (per seed) | last valid NLL | last update "
             "| last − lowest |", "|---|---|---|---|---|---|"]
    for model, v in validation.items():
        lines.append(f"| {model} | {v['lowest']:.3f} | "
                     f"{' / '.join(map(str, v['lowest_updates']))} | {v['last']:.3f} | "
                     f"{' / '.join(map(str, v['last_updates']))} | "
                     f"{v['last'] - v['lowest']:+.3f} |")
    return lines


def oracle_gain_shares_text(shares):
    if not shares:
        return []
    lines = ["", "## How much of the oracle's gain do the test positions deliver?", "",
             "BLEU (mean over seeds) of each XL PE row with its own test positions (the "
             "`--xlpe-data-bin`'s, e.g. the preorderer's) or another set's (`[test: SET]`), "
             "and of its checkpoints with the `oracle` set's and the `monotone` set's; share: "
             "(row − monotone) / (oracle − monotone). [95%]: bootstrap over test sentences and "
             "seeds, one draw for the three rows (the same checkpoints).",
             "", "| row | its positions | oracle | monotone | share of the oracle's gain [95%] |",
             "|---|---|---|---|---|"]
    for row, share in shares.items():
        cell = ("– (oracle not above monotone)" if share["share"] is None else
                f"{share['share']:.0%} [{share['low']:.0%}, {share['high']:.0%}]")
        lines.append(f"| {row} | {share['own']:.2f} | {share['oracle']:.2f} | "
                     f"{share['monotone']:.2f} | {cell} |")
    return lines


def order_diagnostics_text(diagnostics):
    if not diagnostics:
        return []
    lines = ["", "## Does the DPE network learn the order?", "",
             "The order loss (MSE a token) of each DPE row at its last update, mean over seeds, "
             "beside the \"own position\" baseline (outputting the sinusoid of the token's own "
             "position) on the same tokens; then on moved tokens only (target position ≠ own "
             "position), how often the sinusoid nearest to the output, among the "
             "sentence's positions, is the target's or the token's own, and how often the "
             "output lies nearer the target's sinusoid than the own one. Train: the last "
             "logged interval (dropout on); valid: the last validation.", "",
             "| model | split | order loss | own-position baseline | moved: loss | moved: "
             "baseline | moved: nearest target | moved: nearest own | moved: nearer target "
             "than own |",
             "|---|---|---|---|---|---|---|---|---|"]
    for model, splits in diagnostics.items():
        for split, d in splits.items():
            nearer = d.get("order_nearer_target")
            lines.append(f"| {model} | {split} | {d['order_loss']:.4f} | "
                         f"{d['order_own_loss']:.4f} | {d['order_moved_loss']:.4f} | "
                         f"{d['order_moved_own_loss']:.4f} | {d['order_nearest_target']:.1%} | "
                         f"{d['order_nearest_own']:.1%} | "
                         f"{'–' if nearer is None else format(nearer, '.1%')} |")
    return lines


def input_diagnostics_text(diagnostics):
    if not diagnostics:
        return []
    lines = ["", "## What does InXL's input hold?", "",
             "For each row with `PE_IN = tanh(PE_abs U + PE_XL V)` (Eq. 7), at its last update, "
             "mean over seeds: the mean norm of `PE_IN` beside that of the scaled word "
             "embedding it is added to (the Transformer adds a sinusoid of norm √(d/2)), and "
             "the share of tanh units whose input exceeds 2 in magnitude (saturated: under 7% "
             "of the gradient passes). Train: the last logged interval; valid: the last "
             "validation. `xlpe-inxl-diagnostics` reads how well each position can be read "
             "back from a checkpoint's `PE_IN`.", "",
             "| model | split | PE_IN norm | embedding norm | saturated |", "|---|---|---|---|---|"]
    for model, splits in diagnostics.items():
        for split, d in splits.items():
            lines.append(f"| {model} | {split} | {d['xlpe_in_norm']:.2f} | "
                         f"{d['xlpe_embed_norm']:.2f} | {d['xlpe_saturated']:.1%} |")
    return lines


def variants_text(variants, rows):
    """The definitions of the variants among ``rows`` (a work folder keeps every variant it
    was ever given; a report names the ones it shows)."""
    shown = {trained_row(row["model"]) for row in rows}
    used = {name: definition for name, definition in (variants or {}).items() if name in shown}
    if not used:
        return []
    return ["", "Rows with their own options (`--variant`): " + "; ".join(
        f"`{name}` = `{definition}`" for name, definition in used.items()) + "."]
