"""``xlpe-study``: models × seeds trained with one budget on one data-bin, evaluated, reported.

The command line: its parser, its checks, and ``main``; the package's docstring tells what a
study does.
"""
import argparse
import os
import re
import shlex
import sys

from ...help_format import HelpFormatter
from ...io import (
    BOOTSTRAP_SAMPLES,
    SEED,
    WORKERS,
    check_dictionaries,
    check_output_directory,
    check_utf8,
    positive_int,
    read_lines,
    require_files,
    run_command,
    shell_words,
)
from ...io.locks import FolderInUse, claim_folder
from ..bleu import add_tokenize_argument, bleu_tokenizer, detokenize
from .devices import placement
from .plan import Study
from .profiles import MODEL_NAMES, PROFILES
from .report import write_report
from .runs import finished, print_progress, run_pending
from .slurm import check_launcher, refuse_jobs_in_flight, sbatch_options, submit_study


def run_study(args):
    study = Study(args)
    # --gpus-per-run above the GPUs this machine shows is refused before anything is written
    gpus = placement(study) if args.launcher == "local" else None
    if args.launcher == "slurm":
        check_launcher()  # srun, sbatch and a working squeue, before the work folder is written
    bleu_tokenizer(args.target_lang, args.tokenize)  # a missing extra fails now, not after training
    require_files([args.reference] + ([args.gold, args.source_bpe, args.target_bpe]
                                      if args.gold else []))
    for model in args.models:
        study.flags(model)
        study.train_command(model, args.seeds[0])  # what it refuses, it refuses before training
        study.check_positions(model)
        for _, test_positions in study.evaluations(model):
            study.data_bin(model, test_positions)
    # read before the work folder is made; the gold and BPE text, which xlpe-aer reads only
    # after the training, checked now
    references = read_lines(args.reference)
    check_output_directory(args.work)
    check_utf8([args.gold, args.source_bpe, args.target_bpe] if args.gold else [])
    for data_bin in filter(None, (args.data_bin, args.xlpe_data_bin, *study.positions.values())):
        check_dictionaries(data_bin)
    for data_bin in sorted({study.data_bin(model, name) for model in args.models
                            for _, name in study.evaluations(model)}):
        study.check_test_split(data_bin, args.reference, len(references))
    runs = [(model, seed) for model in args.models for seed in args.seeds]
    # one command at a time trains a study's runs (a SLURM study's command holds the folder
    # only while it submits); another one tells their progress and refuses
    try:
        claim_folder(args.work, "write", "the study's runs and report (--work)", "xlpe-study")
    except FolderInUse:
        print_progress(study, runs)
        raise
    if args.launcher == "local":
        refuse_jobs_in_flight(study, [run for run in runs if not finished(study, *run)])
    study.check_settings()
    if args.tokenized_reference:
        references = detokenize(references)

    if args.launcher == "slurm":
        if not submit_study(study, runs, references):
            print("xlpe-study: the report comes when every run is done; the same command "
                  "tells their states again", file=sys.stderr)
            return
    else:
        pending = [run for run in runs if not finished(study, *run)]
        print(f"xlpe-study: {len(runs)} runs, {len(runs) - len(pending)} already finished",
              file=sys.stderr)
        # one run per GPU group by default where CUDA shows several
        jobs = args.jobs or (len(gpus.groups) if gpus else 1)
        run_pending(study, pending, references, jobs, gpus)
    write_report(study, args.models, args.seeds, references)
    print((study.work / "report.md").read_text(encoding="utf-8"), end="")


# options whose value is a string of further options, which may be one word starting with "-"
OPTION_STRINGS = ("--train-args", "--generate-args", "--sbatch-args")


class StudyParser(argparse.ArgumentParser):
    """argparse takes a word that starts with "-" and has no space for an option, never for
    a value, so ``--sbatch-args "--comment=x"`` would be refused (only ``--sbatch-args=...``
    passed). The options whose value is a string of further options take such a word as
    their value, unless it is one of xlpe-study's own options (the value forgotten)."""

    def parse_known_args(self, args=None, namespace=None):
        words = iter(sys.argv[1:] if args is None else args)
        joined = []
        for word in words:
            value = next(words, None) if word in OPTION_STRINGS else None
            if value is not None and value.startswith("-") and \
                    value not in self._option_string_actions:
                joined.append(f"{word}={value}")
            else:
                joined += [word] if value is None else [word, value]
        return super().parse_known_args(joined, namespace)


def position_set(text):
    name, equals, path = text.partition("=")
    if not equals or not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or not path:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=DATA_BIN, NAME of letters, "
                                         "digits, '_', '.' or '-'")
    return name, path


def variant(text):
    name, equals, definition = text.partition("=")
    words = shlex.split(definition) if equals else []
    if not words or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected NAME=MODEL [fairseq-train options], NAME of letters, digits, "
            "'_', '.' or '-'")
    return name, (words[0], words[1:])


def build_parser():
    parser = StudyParser(prog="xlpe-study", description=__doc__.splitlines()[0],
                         formatter_class=HelpFormatter)
    parser.add_argument("--data-bin", required=True, help="fairseq data-bin of the pair")
    parser.add_argument("--xlpe-data-bin",
                        help="data-bin with reorder positions for every split (XL PE models)")
    parser.add_argument("--preorderer-score",
                        help="xlpe-reorder-score's table of the XL PE rows' test positions, for "
                        "the report's advice line (default: preorderer.test.score two folders "
                        "above --xlpe-data-bin, where the recipes write it, when there)")
    parser.add_argument("--preorderer",
                        help="the preorderer of the XL PE rows' test positions (default: "
                        "preorderer.pt two folders above --xlpe-data-bin, when there)")
    parser.add_argument("--preorderer-nbest", type=positive_int, default=1,
                        help="N above 1: with a preorderer, XL PE runs are also decoded choosing "
                        "among its N best reorderings (fairseq-generate --preorderer-nbest N), "
                        "in rows 'MODEL [test: preorderer-Nbest]' beside the best "
                        "reordering's; 1: no such rows (default: %(default)s; it was 4, so a work "
                        "folder made then reports its 'preorderer-4best' rows again with "
                        "--preorderer-nbest 4)")
    parser.add_argument("--source-lang", required=True)
    parser.add_argument("--target-lang", required=True)
    parser.add_argument("--reference", required=True, help="test reference, one sentence a line")
    parser.add_argument("--tokenized-reference", action="store_true",
                        help="the reference is tokenized (xlpe-tokenize): detokenize it like the "
                        "hypotheses")
    add_tokenize_argument(parser)
    parser.add_argument("--models", nargs="+", default=["transformer", "dpe"],
                        help=f"models to train (default: transformer dpe); any of "
                        f"{', '.join(MODEL_NAMES)}; an XL PE or DPE model as MODEL@SET trains "
                        "on the position set SET (--positions); a --variant's NAME")
    parser.add_argument("--baseline", help="model the others are tested against (default: first)")
    parser.add_argument("--seeds", nargs="+", type=SEED, default=[1, 2, 3])
    parser.add_argument("--profile", choices=sorted(PROFILES), default="cpu-demo",
                        help="model size and optimizer (default: cpu-demo, the demo's settings; "
                        "gpu-iwslt: fairseq's transformer_iwslt_de_en size, 512/1024 6+6, "
                        "in fp16 on one GPU)")
    parser.add_argument("--updates", type=positive_int, help="training updates per run (default: the "
                        "profile's: 500 for cpu-demo, 4000 for gpu-iwslt)")
    parser.add_argument("--cpu", action="store_true", help="train and decode on the CPU "
                        "whatever the profile")
    parser.add_argument("--train-args", type=shell_words, default="", help="further fairseq-train options for "
                        "every run, one string (part of the study's settings); a "
                        "--validate-interval-updates here replaces the profile's")
    parser.add_argument("--positions", action="append", default=[], type=position_set,
                        metavar="NAME=DATA_BIN", help="a named position set: a data-bin with the "
                        "same text and other reorder positions (repeatable); MODEL@NAME trains "
                        "an XL PE model on it")
    parser.add_argument("--variant", dest="variants", action="append", default=[],
                        type=variant, metavar="NAME=MODEL OPTIONS",
                        help="a row NAME (usable in --models): MODEL (or MODEL@SET) trained with "
                        "these further fairseq-train options, one string, e.g. "
                        "'dpe-lambda0=dpe --order-lambda 0' (repeatable)")
    parser.add_argument("--test-positions", nargs="+", default=[], metavar="NAME",
                        help="also decode every XL PE run with these sets' test positions")
    parser.add_argument("--jobs", type=WORKERS,
                        help="runs trained at once, on distinct GPUs while there are enough "
                        "(default: one per --gpus-per-run GPUs CUDA shows, else 1; on a CPU set "
                        "OMP_NUM_THREADS to cores / jobs)")
    parser.add_argument("--gpus-per-run", type=positive_int, default=1, metavar="N",
                        help="GPUs each run trains on, with DDP when more than one; locally, "
                        "runs trained at once go to distinct GPUs where CUDA shows several "
                        "(CUDA_VISIBLE_DEVICES in the run's command); unused on the CPU "
                        "(default: %(default)s)")
    cluster = parser.add_argument_group(
        "SLURM", "each run (training, decoding, scoring) a SLURM job: the command submits "
        "them and returns; called again, it tells each run's state, resubmits failed runs "
        "(they resume from their last checkpoint) and writes the report once all are done")
    cluster.add_argument("--launcher", choices=["local", "slurm"], default="local",
                         help="where runs train: this machine, or SLURM jobs through submitit "
                         "(default: %(default)s)")
    cluster.add_argument("--partition", help="sbatch --partition (default: the cluster's)")
    cluster.add_argument("--time", type=positive_int, metavar="MINUTES",
                         help="each run's time limit, sbatch --time (required with SLURM); a "
                         "run past it is requeued and resumes")
    cluster.add_argument("--cpus-per-run", type=positive_int, metavar="N",
                         help="sbatch --cpus-per-task (default: the cluster's)")
    cluster.add_argument("--mem-per-run", type=positive_int, metavar="GB",
                         help="sbatch --mem (default: the cluster's)")
    cluster.add_argument("--sbatch-args", type=sbatch_options, default="",
                         help="further sbatch options, one string of --name=value and --name "
                         "words, e.g. '--account=nmt --qos=high' or '--comment=x' (they win "
                         "over the options above)")
    parser.add_argument("--checkpoint", choices=["last", "best", "average"], default="last",
                        help="checkpoint each run is evaluated with: last; best (lowest valid "
                        "loss; every validation then saves a checkpoint, as fairseq updates "
                        "checkpoint_best.pt only when it saves); or average (the mean of the "
                        "checkpoints saved at the last --average-last validations; fairseq "
                        "saves none at a validation that ends an epoch, so such a validation "
                        "does not count) (default: last)")
    parser.add_argument("--average-last", type=positive_int, default=5, metavar="N",
                        help="with --checkpoint average: how many of the last validations' "
                        "checkpoints are averaged (default: 5, as the DPE paper averages)")
    parser.add_argument("--gen-subset", default="test")
    parser.add_argument("--generate-args", type=shell_words, default="--beam 5 --batch-size 100",
                        help="fairseq-generate options, one string (default: %(default)s)")
    parser.add_argument("--gold", help="gold word alignment of the test split: adds AER")
    parser.add_argument("--source-bpe", help="BPE source of the test split (with --gold)")
    parser.add_argument("--target-bpe", help="BPE target of the test split (with --gold)")
    parser.add_argument("--bootstrap-samples", type=BOOTSTRAP_SAMPLES, default=1000)
    parser.add_argument("--work", required=True, help="folder of the runs and the report")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if len(set(args.models)) != len(args.models) or len(set(args.seeds)) != len(args.seeds):
        parser.error("--models and --seeds must not repeat")
    names = [name for name, _ in args.positions]
    if len(set(names)) != len(names):
        parser.error("--positions names must not repeat")
    variant_names = [name for name, _ in args.variants]
    if len(set(variant_names)) != len(variant_names):
        parser.error("--variant names must not repeat")
    taken = sorted(set(variant_names) & set(MODEL_NAMES))
    if taken:
        parser.error(f"--variant {' '.join(taken)}: the name of a model; choose another")
    nested = sorted(name for name, (spec, _) in args.variants if spec in variant_names)
    if nested:
        parser.error(f"--variant {' '.join(nested)}: build a variant on a model, not a variant")
    unknown = sorted(set(args.test_positions) - set(names))
    if unknown:
        parser.error(f"--test-positions {' '.join(unknown)}: not named by --positions")
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.launcher == "slurm" and args.time is None:
        parser.error("--launcher slurm needs --time (minutes each run may take)")
    slurm_only = [option for option, value in (("--partition", args.partition),
                                               ("--time", args.time),
                                               ("--cpus-per-run", args.cpus_per_run),
                                               ("--mem-per-run", args.mem_per_run),
                                               ("--sbatch-args", args.sbatch_args))
                  if value and args.launcher == "local"]
    if slurm_only:
        parser.error(f"{' '.join(slurm_only)}: only with --launcher slurm")
    if args.baseline and args.baseline not in args.models:
        parser.error(f"--baseline {args.baseline} is not one of --models")
    if args.gold and not (args.source_bpe and args.target_bpe):
        parser.error("--gold needs --source-bpe and --target-bpe")
    if args.preorderer and not os.path.isfile(args.preorderer):
        parser.error(f"--preorderer {args.preorderer}: no such file")
    if args.preorderer_score and not os.path.isfile(args.preorderer_score):
        parser.error(f"--preorderer-score {args.preorderer_score}: no such file")
    run_command(lambda: run_study(args), parser.prog)
    return 0
