"""Evaluate a model trained by xlpe-train or a train-*.sh script the way its paper
did (xlpe-evaluate; examples/evaluate.sh runs it): the checkpoint (the last N averaged with
xlpe-average-checkpoints, or the best on dev), beam and length penalty of its schedule;
translate the test split with fairseq-generate and print detokenized sacreBLEU with its
signature (xlpe-bleu; its tokenizer by the target language: zh, ja-mecab, ko-mecab, else
13a; Chinese and Japanese written without the segmenter's spaces first).

DATA is the recipe's OUTDIR (xlpe-prepare's OUT or another recipe's; its
recipe.env names the languages and whether text was lowercased or tokenized already; the
reference scored is
OUT/reference/SUBSET.TGT, copied when OUT was prepared, and every file read must be as
OUT/provenance.json recorded it, the checkpoint trained on OUT's data: docs/input-rules.md),
SAVE_DIR the training's checkpoint folder, M the trained model (it picks the data-bin
variant: xlpe and xlpe-* read the preorderer's test positions; default: the model
xlpe-train trained there, from SAVE_DIR/schedule.env; required for other folders).
The schedule is the one the training used (SAVE_DIR/schedule.env, written by
xlpe-train), or --schedule:
  dpe-iwslt, dpe  the last 5 checkpoints averaged, beam 5 (lenpen 1.0; dpe: 0.6, the
                  authors' command)
  re              checkpoint_best.pt (the best dev BLEU), beam 4
  xlpe            the last 20 checkpoints averaged, beam 4, lenpen 0.6 (Transformer big)
A folder with fewer numbered checkpoints than the schedule averages (a short training)
averages those it has, or takes checkpoint_best.pt if it has fewer than 2, and says so.
--average N (0: checkpoint_best.pt), --beam K and --lenpen A override the schedule's;
--subset (default test) the split. XL PE models (xlpe, xlpe-*, encoder-free-inxl) decode
with the data-bin's test positions, the preorderer's best reordering (--preorderer-nbest 1,
the default); --preorderer-nbest N decodes each sentence with each of DATA/preorderer.pt's N
best reorderings and keeps the best-scoring translation (N = 4 took 2.7 times the decoding
time for +0.05 to +0.32 BLEU on the tuning pairs and -0.02/+0.06 on two held out,
docs/translating.md).
--tokenize T, sacreBLEU's tokenizer for BLEU
(xlpe-bleu --tokenize); --cpu decodes on the CPU. --dry-run prints the commands of a
complete training instead of running them. Options go before or after the operands (or
after --, operands only). Every value (and the test split's data, the reference and the
BLEU tokenizer) is checked before any work starts: a bad one is one line, exit status 2.
Folder names that fairseq cannot read (a line break, or ':', which it takes for a list of
folders) are refused in one line.

A checkpoint of another model or schedule than SAVE_DIR's training (its schedule.env, and
provenance.json where the training finished) is refused in one line; a folder whose training
has not finished (interrupted, or still running) is scored with a warning saying so.

SAVE_DIR receives generate-SUBSET.out (fairseq-generate's output, only when complete) and .log,
hypotheses-SUBSET.TGT (the detokenized translations as scored, one a line), bleu-SUBSET.json
(the scores), provenance-SUBSET.json (what they were made from, written last), and
checkpoint_avgN.pt where it averages; an earlier run's outputs of the split are removed first.
The commands it runs are ended with it (Ctrl-C, SIGTERM), and no temporary file is left.
"""
import argparse
import functools
import os
import re
import shlex
import sys

from ..data.positions_note import positions_note
from ..evaluation.average_checkpoints import average_and_report
from ..evaluation.bleu import score_and_write
from ..io import InputError, run_command
from ..io.locks import check_not_written, claim_folder
from ..io.provenance import (
    RECORD,
    check_checkpoint,
    read_record,
    record_evaluation,
    verify_corpus,
)
from ..io.work_folders import check_work_folder
from ..model_registry import (
    TRAIN_MODELS,
    checkpoint_settings,
    models_saved_as,
    reads_positions,
    variant,
)
from ..text.tokenization import check_tokenization
from .fairseq_commands import decode, generate_command
from .script_options import (
    Refused,
    ScriptHelpFormatter,
    check_folder_name,
    check_outside_corpus,
    number,
    one_of,
    read_settings,
    whole,
    wrapper_name,
)
from .schedules import DECODING, SCHEDULES, trained_settings

USAGE = ("DATA SAVE_DIR [--model M] [--schedule S] [--average N] [--beam K] [--lenpen A] "
         "[--subset S] [--preorderer-nbest N] [--tokenize T] [--cpu] [--dry-run]")
VALUE_OPTIONS = ("--model", "--schedule", "--average", "--beam", "--lenpen", "--subset",
                 "--tokenize", "--preorderer-nbest")


class ScriptArgumentParser(argparse.ArgumentParser):
    """argparse with the shell entry points' rule: each value checked as it is read (a bad one
    is the line its type prints, status 2), a value that begins with '-' taken as a value (a
    negative length penalty), and argparse's own errors said in the scripts' words."""

    def add_value_option(self, flag, check, **kwargs):
        self.add_argument(flag, type=functools.partial(_checked_value, check, flag), **kwargs)

    def parse_script_args(self, argv):
        # the word after an option that takes a value is its value, whatever it looks like;
        # after --, operands only (argparse's intermixed parsing would still read options)
        joined, after, index = [], [], 0
        while index < len(argv):
            word = argv[index]
            if word == "--":
                after = argv[index + 1:]
                break
            if word in VALUE_OPTIONS and index + 1 < len(argv):
                joined.append(f"{word}={argv[index + 1]}")
                index += 2
            else:
                joined.append(word)
                index += 1
        args = self.parse_intermixed_args(joined)
        args.operands += after
        return args

    def error(self, message):
        refused = re.match(r"argument --[\w-]+: (--.*)", message)
        if refused:
            raise Refused(refused.group(1), 2)
        missing = re.match(r"argument (--[\w-]+): expected one argument", message)
        if missing:
            raise Refused(f"{missing.group(1)} needs a value", 2)
        unknown = re.match(r"unrecognized arguments: (\S+)", message)
        if unknown and unknown.group(1).startswith("-"):
            raise Refused(f"unknown option {unknown.group(1)} (--help lists them)", 2)
        raise Refused(f"usage: {self.prog} {USAGE}", 2)


def _checked_value(check, flag, value):
    # argparse takes a type's ValueError (a Refused is one) for its own "invalid value" line;
    # the check's line is kept as an ArgumentTypeError's, which ``error`` gets whole
    try:
        return check(value, flag)
    except Refused as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def argument_parser(prog):
    parser = ScriptArgumentParser(
        prog=prog, usage=f"%(prog)s {USAGE}", description=__doc__,
        formatter_class=ScriptHelpFormatter, allow_abbrev=False)
    parser.add_argument("operands", nargs="*", metavar="DATA SAVE_DIR",
                        help="the recipe's OUTDIR and the training's checkpoint folder")
    parser.add_value_option("--model", one_of(TRAIN_MODELS),
                            help="the trained model (default: SAVE_DIR/schedule.env's)")
    parser.add_value_option("--schedule", one_of(SCHEDULES),
                            help="whose paper's decoding (default: SAVE_DIR/schedule.env's)")
    parser.add_value_option("--average", whole(0), help="checkpoints averaged, 0 for "
                            "checkpoint_best.pt (default: the schedule's)")
    parser.add_value_option("--beam", whole(1), help="beam size (default: the schedule's)")
    parser.add_value_option("--lenpen", number, help="length penalty (default: the schedule's)")
    parser.add_value_option("--subset", one_of(("test", "valid")), default="test",
                            help="the split decoded and scored")
    parser.add_value_option("--preorderer-nbest", whole(1, 999), dest="nbest",
                            help="XL PE models: the preorderer's reorderings decoded "
                            "(default: 1, the best reordering)")
    parser.add_argument("--tokenize", help="sacreBLEU's tokenizer for BLEU (default: by the "
                        "target language: zh, ja-mecab, ko-mecab, else 13a)")
    parser.add_argument("--cpu", action="store_true", help="decode on the CPU")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands instead of running them")
    return parser


def parse_arguments(argv, prog):
    """The options and the two operands, each value checked as it is read (an empty one too):
    one line and status 2 for the first that is bad."""
    parser = argument_parser(prog)
    args = parser.parse_script_args(argv)
    if len(args.operands) != 2:
        parser.error("")
    return args


def numbered_checkpoints(save_dir):
    """How many checkpoints xlpe-average-checkpoints would choose among: update checkpoints
    (checkpoint_E_U.pt), else epoch ones (checkpointE.pt)."""
    names = os.listdir(save_dir)
    updates = [name for name in names if re.fullmatch(r"checkpoint_[0-9]+_[0-9]+\.pt", name)]
    return len(updates) or len([name for name in names
                                if re.fullmatch(r"checkpoint[0-9]+\.pt", name)])


def checkpoints_to_average(save_dir, average, given, name):
    """How many checkpoints to average, ``average`` wanted (``given`` by --average, else the
    schedule's): a short training saves fewer numbered checkpoints than its schedule
    averages, and those it has are averaged (0, checkpoint_best.pt, under 2), which a line
    says; fewer than --average asked for are refused."""
    saved = numbered_checkpoints(save_dir)
    if saved >= average:
        return average
    if given:
        raise Refused(f"{save_dir}: {saved} numbered checkpoints, --average {average} wanted: "
                      f"pass --average {saved}, or --average 0 for checkpoint_best.pt", 1)
    instead = f"averaging those {saved}" if saved >= 2 else "checkpoint_best.pt instead"
    print(f"{name}: {save_dir} holds {saved} numbered checkpoints, not the {average} the "
          f"schedule averages: {instead} (--average N chooses; 0: checkpoint_best.pt)",
          file=sys.stderr)
    return saved if saved >= 2 else 0


def unfinished_training(save_dir):
    """A sentence when SAVE_DIR's training has not finished as far as its records say: no
    record of a finished training (xlpe-train writes provenance.json when fairseq-train has
    ended), or a training resumed since the record (schedule.env rewritten at its start, or a
    checkpoint saved); else None."""
    record = os.path.join(save_dir, RECORD)
    if not os.path.isfile(record):
        return (f"{save_dir} holds no record of a finished training ({record}, which "
                "xlpe-train writes when fairseq-train has ended): its training was "
                "interrupted or is still running, and its checkpoints so far are scored")
    finished = os.stat(record).st_mtime
    for name in ("schedule.env", "checkpoint_last.pt"):
        path = os.path.join(save_dir, name)
        if os.path.exists(path) and os.stat(path).st_mtime > finished:
            return (f"{save_dir}: {name} is newer than the record of its finished training "
                    f"({record}): a training resumed since was interrupted or is still "
                    "running, and its checkpoints so far are scored")
    return None


def expected_training(save_dir, schedule_env, model):
    """The fairseq options a checkpoint of SAVE_DIR's training must have been saved with
    (``{name: [accepted values]}``) and the training that says so, in words, from its records:
    schedule.env's model and schedule, and the fairseq-train command of provenance.json where
    it records the same training. Where SAVE_DIR names no trained model, the architecture and
    options of ``model`` (--model): a checkpoint of another model is not scored under its
    name."""
    trained_model, schedule = schedule_env.get("TRAINED_MODEL"), schedule_env.get("SCHEDULE")
    if not trained_model:
        return checkpoint_settings(model), f"--model {model}"
    command = None
    record = os.path.join(save_dir, RECORD)
    if os.path.isfile(record):
        training = read_record(record, "training")
        if (training.get("model"), training.get("schedule")) == (trained_model, schedule):
            command = training.get("command")
    return trained_settings(trained_model, schedule, command), (
        f"{trained_model} on the schedule {schedule} "
        f"({os.path.join(save_dir, 'schedule.env')})")


def evaluate(argv, prog):
    name = os.path.basename(prog)
    args = parse_arguments(argv, prog)
    data, save_dir = args.operands
    dry_run = args.dry_run
    for path, what in ((data, "the corpus (OUT)"), (save_dir, "the checkpoints (SAVE_DIR)")):
        check_folder_name(path, what)
    # an empty name (an unset variable) or a system folder is refused before it is read
    if not dry_run:
        check_work_folder(data, "the corpus (OUT)", writable=False)
        check_work_folder(save_dir, "the checkpoints (SAVE_DIR)")
    # every path from here on as the folder is, links resolved: messages name the real
    # folders, and a folder named like an option is never taken for one
    data, save_dir = os.path.realpath(data), os.path.realpath(save_dir)
    check_outside_corpus(save_dir, data, "SAVE_DIR")
    # a corpus still being prepared lacks its files: the preparation is named, not them
    check_not_written(data, "the corpus (OUT)")
    recipe_env = os.path.join(data, "recipe.env")
    if not os.path.exists(recipe_env):
        raise Refused(f"{recipe_env}: no such file; is {data} a data_prep recipe's OUTDIR?", 1)
    recipe = read_settings(recipe_env, ("SRC", "TGT", "LOWERCASE", "TOKENIZATION", "TOKENIZED"))
    check_tokenization(recipe_env, recipe.get("TOKENIZATION"))
    for key in ("SRC", "TGT"):
        if not re.fullmatch(r"[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*", recipe.get(key, "")):
            got = repr(recipe[key]) if key in recipe else "no such line"
            raise InputError(f"{recipe_env}: expected a line {key}= and a language code such as "
                             f"en, got {got}")
    src, tgt = recipe["SRC"], recipe["TGT"]
    check_bleu_tokenizer(tgt, args.tokenize)

    # SCHEDULE and, from xlpe-train, TRAINED_MODEL: how SAVE_DIR was trained
    schedule_env_path = os.path.join(save_dir, "schedule.env")
    schedule_env = (read_settings(schedule_env_path, ("SCHEDULE", "TRAINED_MODEL"))
                    if os.path.isfile(schedule_env_path) else {})
    schedule = args.schedule or schedule_env.get("SCHEDULE", "")
    if not schedule:
        raise Refused(f"{schedule_env_path}: no such file (train-*.sh writes it); pass "
                      f"--schedule, one of: {' '.join(SCHEDULES)}", 2)
    trained_model = schedule_env.get("TRAINED_MODEL", "")
    model = args.model or trained_model
    if not model:
        raise Refused(f"--model is required: {schedule_env_path} does not name it", 2)
    if trained_model and model != trained_model:
        raise Refused(f"{save_dir} holds a {trained_model} model (xlpe-train "
                      f"{trained_model}), not {model}: pass --model {trained_model}", 2)
    data_bin = os.path.join(data, "data-bin", variant(model))
    # XL PE's test positions: the preorderer's N best reorderings, else the data-bin's (the best)
    nbest, positions = None, []
    if reads_positions(model):
        nbest = args.nbest or "1"
        if int(nbest) > 1:
            preorderer = os.path.join(data, "preorderer.pt")
            if not os.path.isfile(preorderer) and not dry_run:
                raise Refused(f"{preorderer}: no such file; --preorderer-nbest {nbest} chooses "
                              "among its reorderings (--preorderer-nbest 1 decodes the "
                              "data-bin's test positions)", 1)
            positions = ["--preorderer", preorderer, "--preorderer-nbest", nbest]
    elif args.nbest is not None:
        raise Refused("--preorderer-nbest is for XL PE models (xlpe, xlpe-*, encoder-free-inxl),"
                      f" not {model}", 2)
    if schedule not in DECODING:
        raise Refused(f"unknown schedule '{schedule}': {' '.join(SCHEDULES)}", 2)
    average, beam, lenpen = DECODING[schedule]
    average = int(args.average) if args.average is not None else average
    beam = args.beam or str(beam)
    lenpen = args.lenpen or lenpen
    subset = args.subset
    # the reference as prepared (OUT/reference, in OUT's record), not the raw folder as it is
    # now; lowercased data (IWSLT): the lowercased tokenized text, detokenized, as a target
    # that was tokenized already (xlpe-prepare --tokenized)
    reference = os.path.join(data, "reference", f"{subset}.{tgt}")
    lowercased = recipe.get("LOWERCASE", "0") not in ("", "0")
    tokenized = lowercased or tgt in recipe.get("TOKENIZED", "").split(",")
    # what decoding and scoring will read, before the checkpoints are averaged
    if not dry_run:
        unprepared = positions_note(data_bin, subset) if reads_positions(model) else None
        if unprepared:
            raise Refused(unprepared, 1)
        if not os.path.isdir(save_dir):
            raise Refused(f"{save_dir}: no such folder; the checkpoint folder of "
                          "xlpe-train", 1)
        for path in (os.path.join(data_bin, f"{subset}.{src}-{tgt}.{src}.idx"), reference):
            if not os.path.isfile(path):
                raise Refused(f"{path}: no such file; has the data_prep recipe made the {subset} "
                              f"split of {data}?", 1)

    if average > 0 and not dry_run:
        average = checkpoints_to_average(save_dir, average, args.average is not None, name)
    outputs = {
        "generate": os.path.join(save_dir, f"generate-{subset}.out"),
        "hypotheses": os.path.join(save_dir, f"hypotheses-{subset}.{tgt}"),
        "bleu": os.path.join(save_dir, f"bleu-{subset}.json"),
        "provenance": os.path.join(save_dir, f"provenance-{subset}.json"),
    }
    if not dry_run:
        # the first write: OUT read while no preparation rewrites it, SAVE_DIR written by one
        # run at a time; then OUT as its record has it, and this run's outputs only (a failure
        # leaves no earlier run's scores beside its report)
        claim_folder(data, "read", "the corpus (OUT)", name)
        claim_folder(save_dir, "write", "the checkpoints (SAVE_DIR)", name)
        for warning in verify_corpus(data, os.path.basename(data_bin), subset):
            print(f"{name}: warning: {warning}", file=sys.stderr)
        for path in outputs.values():
            if os.path.lexists(path):
                os.unlink(path)
    if average > 0:
        checkpoint = os.path.join(save_dir, f"checkpoint_avg{average}.pt")
        if dry_run:  # what xlpe-average-checkpoints would do
            print(shlex.join(["xlpe-average-checkpoints", "--checkpoint-dir", save_dir,
                              "--num", str(average), "--output", checkpoint]))
        else:
            average_and_report(save_dir, average, checkpoint)
    else:
        checkpoint = os.path.join(save_dir, "checkpoint_best.pt")
        if not os.path.isfile(checkpoint) and not dry_run:
            raise Refused(f"{checkpoint}: no such file; has the training in {save_dir} saved a "
                          "checkpoint?", 1)
    if not dry_run:
        if not trained_model:
            check_saved_as(checkpoint, model)
        # trained on this corpus's data-bin as it is now (tasks/data_provenance.py records
        # it), and by SAVE_DIR's training (its architecture and schedule)
        warning = check_checkpoint(checkpoint, *expected_training(save_dir, schedule_env, model),
                                   corpus=data)
        if warning:
            print(f"{name}: warning: {warning}", file=sys.stderr)
        unfinished = unfinished_training(save_dir)
        if unfinished:
            print(f"{name}: warning: {unfinished}", file=sys.stderr)
    chosen = f", the preorderer's {nbest} best reorderings" if positions else ""
    print(f"schedule {schedule}: {os.path.basename(checkpoint)}, beam {beam}, lenpen "
          f"{lenpen}{chosen}", file=sys.stderr)

    generate = generate_command(data_bin, src, tgt, subset, checkpoint, beam, lenpen,
                                ["--remove-bpe", *positions, *(["--cpu"] if args.cpu else [])])
    if dry_run:
        print(shlex.join(generate))
        return
    decode(generate, outputs["generate"], os.path.join(save_dir, f"generate-{subset}.log"), name)
    score_and_write(
        outputs["generate"], reference, tgt, tokenized, args.tokenize, outputs["bleu"],
        outputs["hypotheses"],
        f"{os.path.basename(data)} {model} ({os.path.basename(checkpoint)}, {subset})")
    # what the scores were made from, written last
    recorded = {"model": model, "schedule": schedule, "average": average, "beam": beam,
                "lenpen": lenpen, "preorderer_nbest": nbest or ""}
    record_evaluation(save_dir, subset, checkpoint, data_bin, data, reference,
                      [outputs[key] for key in ("generate", "hypotheses", "bleu")],
                      {key: str(value) for key, value in recorded.items()}, [prog, *argv])
    print(f"{name}: translations in {outputs['hypotheses']} (fairseq's output: "
          f"{outputs['generate']}), scores in {outputs['bleu']} (what they were made from: "
          f"{outputs['provenance']})", file=sys.stderr)


def check_saved_as(checkpoint, model):
    """Where SAVE_DIR names no trained model: a checkpoint saved with another model's
    architecture or options than --model's is refused in one line that names the model to
    pass (the registry's models whose settings it was saved with)."""
    from ..io.checkpoints import read_checkpoint
    from ..io.provenance import stored_setting, verify_trained_as

    try:
        verify_trained_as(checkpoint, checkpoint_settings(model), f"--model {model}")
    except InputError as err:
        state = read_checkpoint(checkpoint, "fairseq checkpoint", mmap=True)
        names = (models_saved_as(lambda option: stored_setting(state, option))
                 if isinstance(state, dict) else [])
        if not names:
            raise
        which = (f"{names[0]}, the model" if len(names) == 1
                 else f"{', '.join(names[:-1])} or {names[-1]}, the models")
        raise InputError(f"{err}: pass --model {which} it was saved as") from None


def check_bleu_tokenizer(tgt, tokenize):
    """sacreBLEU's tokenizer, --tokenize's or the target language's, with what it needs
    installed: checked now, not after decoding."""
    import sacrebleu

    from ..evaluation.bleu import bleu_tokenizer

    names = list(sacrebleu.metrics.BLEU.TOKENIZERS)
    if tokenize is not None and tokenize not in names:
        raise Refused(f"--tokenize must be one of: {' '.join(names)}, not '{tokenize}'", 2)
    bleu_tokenizer(tgt, tokenize)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    prog, argv = wrapper_name(argv, "xlpe-evaluate")
    run_command(lambda: evaluate(argv, prog), os.path.basename(prog))
    return 0


if __name__ == "__main__":
    sys.exit(main())
