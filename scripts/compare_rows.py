"""A study row trained later, tested against the published test outputs of earlier rows.

    python scripts/compare_rows.py --row ROW=HYPOTHESES --against HYPOTHESES [HYPOTHESES ...]
        --reference REFERENCE --target-lang LANG [--tokenized-reference] [--seeds 1 2 3]

A row added to a study in its own work folder (a new variant, after the report was
published) is compared with the published rows by xlpe-study's own test: the bootstrap over
test sentences and seeds, with its samples (1,000) and seed (12345), so the numbers are those
the full study would print with that row. This holds where the later row was trained on the
machine kind and stack of the report, on CPU with one thread and AVX2 kernels
(docs/reproducibility.md), which repeats a run to the last digit: retrain one published row
to check that it does.

HYPOTHESES is a folder of ``MODEL/seedS.txt`` test outputs, as a report's ``hypotheses/``;
every model of an ``--against`` folder with all ``--seeds`` is compared. REFERENCE and
``--tokenized-reference`` are the study's. Prints a Markdown table.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

from xlpe_fairseq.evaluation.bleu import bleu_tokenizer, detokenize, metrics
from xlpe_fairseq.evaluation.compare import sentence_statistics
from xlpe_fairseq.evaluation.study import seed_averaged, seed_bootstrap
from xlpe_fairseq.io import InputError

SAMPLES = 1000
BOOTSTRAP_SEED = 12345


def read_runs(folder, model, seeds, references):
    runs = []
    for seed in seeds:
        path = folder / model / f"seed{seed}.txt"
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) != len(references):
            raise InputError(f"{path}: {len(lines)} lines, expected {len(references)} "
                             "(one per reference line)")
        runs.append(lines)
    return runs


def published_models(folder, seeds):
    if not folder.is_dir():
        raise InputError(f"{folder}: no such folder of test outputs")
    return sorted(model.name for model in folder.iterdir()
                  if all((model / f"seed{seed}.txt").is_file() for seed in seeds))


def comparison_table(row, row_runs, published, references, tokenize):
    """Markdown lines: each published model's seed-averaged score and the row's Δ against
    it, [95%] and p, in BLEU and chrF."""
    lines = [f"| {row} against | its BLEU; {row}'s Δ [95%], p | its chrF; {row}'s Δ [95%], p |",
             "|---|---|---|"]
    scored = {}
    for key, metric in metrics(tokenize).items():
        scored[key] = (metric, [sentence_statistics(metric, run, references) for run in row_runs],
                       {model: [sentence_statistics(metric, run, references) for run in runs]
                        for model, runs in published.items()})
    for model in published:
        cells = []
        for metric, row_stats, baselines in scored.values():
            test = seed_bootstrap(metric, baselines[model], row_stats, SAMPLES,
                                  np.random.default_rng(BOOTSTRAP_SEED))
            cells.append(f"{seed_averaged(metric, baselines[model]):.2f}, {test['delta']:+.2f} "
                         f"[{test['low']:+.2f}, {test['high']:+.2f}], {test['p']:.3f}")
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--row", required=True, metavar="ROW=HYPOTHESES")
    parser.add_argument("--against", required=True, nargs="+", type=Path, metavar="HYPOTHESES")
    parser.add_argument("--reference", required=True, type=Path)
    parser.add_argument("--target-lang", required=True)
    parser.add_argument("--tokenized-reference", action="store_true",
                        help="the reference is tokenized text, detokenized as the study does")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    args = parser.parse_args(argv)
    try:
        row, equals, folder = args.row.partition("=")
        if not equals or not row or not folder:
            raise InputError(f"--row {args.row!r}: expected ROW=HYPOTHESES")
        if not args.reference.is_file():
            raise InputError(f"{args.reference}: no such reference file")
        references = args.reference.read_text(encoding="utf-8").splitlines()
        if args.tokenized_reference:
            references = detokenize(references)
        row_runs = read_runs(Path(folder), row, args.seeds, references)
        published = {}
        for against in args.against:
            for model in published_models(against, args.seeds):
                if model != row:
                    published[model] = read_runs(against, model, args.seeds, references)
        if not published:
            raise InputError(f"no model with seeds {args.seeds} in {args.against}")
        tokenize = bleu_tokenizer(args.target_lang)
    except (InputError, OSError, UnicodeDecodeError) as err:
        sys.exit(f"compare_rows.py: {err}")
    print("\n".join(comparison_table(row, row_runs, published, references, tokenize)))


if __name__ == "__main__":
    main()
