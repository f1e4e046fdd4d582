"""Train one model family on a corpus of xlpe-prepare (or another recipe).

  xlpe-train MODEL DATA_DIR CHECKPOINT_DIR [--size small|base|big|demo] [options...]

MODEL       transformer | xlpe-inxl | xlpe-headxl | xlpe-combination (or xlpe) | dpe |
            re-encoder | re-decoder | re-both, or a baseline: transformer-8e |
            transformer-10e (DPE Table 5) | transformer-deep (2 encoder layers more than the
            size's) | encoder-free | encoder-free-inxl | encoder-free-nopos |
            encoder-free-relpe | lstm (XL PE Table 4) | relpe | rope | alibi | t5-bias (Shaw
            et al. 2018, RoPE, ALiBi, T5's bias); the one way to name the model here (--model
            is the dataset scripts')
DATA_DIR    the recipe's OUT/data-bin (OUT works too, and a link to either): the model reads
            its variant, text, dpe or xlpe; the languages come from the file names, and a
            joined dictionary (xlpe-prepare --joined-dictionary) shares all embeddings,
            else the decoder's input and output embeddings are shared
--size      small (default): 256/1024, 2+2 layers, 2 heads, the DPE paper's IWSLT'14 setup,
            for up to a few hundred thousand pairs; base: Transformer base (512/2048, 6+6,
            8 heads) for millions; big: Transformer big; demo: the README's demo (128/512,
            2+2, 4 heads; 500 updates, minutes on a CPU). Each size comes with its paper's
            schedule, printed at the start (--schedule). The small size's:
            --max-update 15000, --warmup 4000, --lr 5e-4, dropout 0.3, --max-tokens 4096,
            --update-freq 1, a validation and a checkpoint every 1000 updates, the last 5
            kept and averaged by xlpe-evaluate, beam 5.
--max-update U below the schedule's shortens it: unless given, the warm-up and the
            checkpoint interval shrink in proportion (--max-update 300 at the small size:
            warm-up 80, a checkpoint every 20 updates), so that a short first run learns
            and xlpe-evaluate finds checkpoints to average
The options below work here too; the data-bin must be OUT's as prepared (OUT/provenance.json),
and a CHECKPOINT_DIR of another model or data is refused, not resumed (docs/input-rules.md);
any other option goes to fairseq-train as it is, after the command's own flags, so it wins
(e.g. --patience 5, --save-interval-updates 500, --seed 2). Every value is checked before
training starts; a folder name fairseq cannot take (a line break, or ':', which it reads as
a list of folders) is refused in one line.

While fairseq-train runs (in its own process group, ended with this command on Ctrl-C or
SIGTERM), its report goes to stdout and CHECKPOINT_DIR/train.log, and stderr says when
training begins and, at each of fairseq's log lines (every 10 updates on the CPU, 100 on
GPUs, or every checkpoint interval where that is shorter), the update reached, the rate and
about how long is left. Stopped before its end, it says which update checkpoint_last.pt
holds and the command that resumes from it (the same command). The update checkpoints
evaluation averages and checkpoint_best.pt are kept without the optimizer's state, a third
of their size; checkpoint_last.pt, which resuming reads, whole.
CHECKPOINT_DIR/schedule.env (the model and schedule xlpe-evaluate decodes with) is written
before training, and CHECKPOINT_DIR/provenance.json once fairseq-train has ended well: an
interrupted training is one xlpe-evaluate warns about.

e.g. xlpe-train xlpe-combination data/fr-en/data-bin checkpoints/fr-en/xlpe
then xlpe-evaluate data/fr-en checkpoints/fr-en/xlpe
"""
import argparse
import os
import shlex
import sys
import textwrap
from types import SimpleNamespace

from ..data.positions_note import positions_note
from ..io import run_command
from ..io.locks import check_not_written, claim_folder
from ..io.provenance import record_training, verify_corpus
from ..model_registry import TRAIN_MODELS, TRAIN_SIZES, default_schedule, flags, variant
from .checkpoint_folder import earlier_run, set_aside_run, write_schedule
from .dataset_recipes import RECIPES, corpus_of_recipe
from .epoch_length import updates_per_epoch
from .fairseq_commands import run_training, train_command
from .language_pairs import data_bin_pair
from .sbatch_script import sbatch_script
from .script_options import (
    Refused,
    ScriptHelpFormatter,
    check_folder_name,
    check_outside_corpus,
    one_of,
    positive,
    whole,
    wrapper_name,
)
from .schedules import SCHEDULES, schedule as schedule_values
from .training_printout import log_interval as logged_every, print_schedule

# the dataset scripts' (examples/train-NAME.sh) way to name the model; xlpe-train's is MODEL
MODEL_OPTION_HELP = """\
  --model M        transformer | dpe | xlpe-combination (or xlpe) | xlpe-inxl | xlpe-headxl |
                   re-encoder | re-decoder | re-both (required),
                   or a baseline: transformer-8e | transformer-10e (DPE Table 5) |
                   transformer-deep (2 encoder layers more than the size's) |
                   encoder-free | encoder-free-inxl | encoder-free-nopos |
                   encoder-free-relpe | lstm (XL PE Table 4) | relpe | rope | alibi | t5-bias
                   (position baselines: Shaw et al. 2018, RoPE, ALiBi, T5's bias)
"""
OPTIONS_HELP = """\
  --size S         one of the dataset's sizes
  --gpus N         GPUs on this node (default --gpus 1); N > 1 trains with DDP, fairseq
                   spawning one process per GPU (--distributed-world-size N). With --sbatch:
                   GPUs per node, one SLURM task each (on the CPU, -- --cpu: processes per
                   node, over gloo)
  --nodes N        with --sbatch: nodes the one model trains on (default 1); the batch
                   stays the paper's, --update-freq over N x --gpus processes
  --sbatch         print an sbatch script instead of training: the same command, schedule
                   and outputs in SAVE_DIR (train.log, schedule.env, provenance.json), its
                   processes started by srun and joined by fairseq's own SLURM
                   initialization (--distributed-port); submit it with
                   `sbatch [--partition P --time T ...] SCRIPT` (docs/cluster.md)
  --fp16 | --bf16  mixed precision
  --schedule S     dpe-iwslt | dpe | re | xlpe | demo: whose paper's schedule (optimization,
                   batch, checkpoints, and what xlpe-evaluate decodes with), or the demo's.
                   Default: dpe-iwslt at the small size, demo at the demo size, else the
                   model's paper
  --update-freq K  accumulate K batches per update (default: the paper's batch, its GPUs
                   x --max-tokens, over --gpus)
  --max-update U | --warmup N | --lr LR | --max-tokens T   override the schedule's value;
                   a --max-update below the schedule's also shrinks its warm-up (unless
                   --warmup is given) and checkpoint interval in proportion, so that a short
                   run still warms up and saves checkpoints for xlpe-evaluate to average
  --save-dir DIR   checkpoints (default: checkpoints/DATASET/MODEL-SIZE; with MODEL DATA_DIR
                   CHECKPOINT_DIR: CHECKPOINT_DIR)
  --dry-run        print the fairseq-train command instead of running it
  --restart        start afresh in a --save-dir that holds a run (another model's, or one
                   trained on data prepared anew since): the earlier run is moved into
                   SAVE_DIR/replaced-TIME, nothing deleted. Without it, a folder of another
                   run is refused in one line, and one of this run resumes
  -- ARGS          passed on to fairseq-train (later flags win in fairseq's parser)
  -h, --help       this text

Every value is checked before anything runs. The effective schedule is printed on stderr at
the start; its name and the model go to SAVE_DIR/schedule.env, from which xlpe-evaluate
takes the checkpoint (average or best), beam and length penalty. The data-bin must be its
OUT's as prepared (OUT/provenance.json); OUT is read under a shared lock and SAVE_DIR written
under its own; after training, SAVE_DIR/provenance.json records model, size, schedule and data
(docs/input-rules.md, "Provenance").
"""

TRAIN_USAGE = "MODEL DATA_DIR CHECKPOINT_DIR [--size small|base|big|demo] [options]"
SHARE_FLAGS = {"all": "--share-all-embeddings", "decoder": "--share-decoder-input-output-embed"}
VALUE_OPTIONS = ("--model", "--size", "--schedule", "--gpus", "--nodes", "--update-freq",
                 "--max-update", "--warmup", "--lr", "--max-tokens", "--save-dir")
COUNT_OPTIONS = ("--gpus", "--nodes", "--update-freq", "--max-update", "--warmup",
                 "--max-tokens")


def help_parser(prog, recipe):
    """The parser that prints --help (the options themselves are read by ``read_options``,
    which passes xlpe-train's unknown ones on to fairseq-train)."""
    if recipe is None:
        usage, description, options = f"%(prog)s {TRAIN_USAGE}", __doc__, OPTIONS_HELP
    else:
        summary, _, example = recipe.description.partition("\n\n")
        usage = f"%(prog)s {recipe.usage}"
        description = "\n\n".join(filter(None, [textwrap.fill(summary, 94), example]))
        options = MODEL_OPTION_HELP + OPTIONS_HELP
    return argparse.ArgumentParser(prog=prog, usage=usage, description=description,
                                   epilog="Options:\n" + options,
                                   formatter_class=ScriptHelpFormatter, add_help=False)


def read_options(argv, pass_unknown):
    """The training options, each value checked as it is read, an empty one too; the
    words it does not know go to fairseq-train (``pass_unknown``) or are refused."""
    options = SimpleNamespace(model="", size=None, gpus="1", nodes="1", update_freq=None,
                              schedule=None, max_update=None, warmup=None, lr=None,
                              max_tokens=None, save_dir=None, precision=[], dry_run=False,
                              sbatch=False, restart=False, extra=[])
    index = 0
    while index < len(argv):
        word = argv[index]
        if word in VALUE_OPTIONS:
            if index + 1 >= len(argv):
                raise Refused(f"{word} needs a value", 2)
            value = argv[index + 1]
            index += 2
            if word == "--schedule":
                value = one_of(SCHEDULES)(value, word)
            elif word in COUNT_OPTIONS:
                value = whole(1)(value, word)
            elif word == "--lr":
                value = positive(value, word)
            elif word == "--save-dir" and not value:
                raise Refused("--save-dir must name a folder, not ''", 2)
            setattr(options, word[2:].replace("-", "_"), value)
            continue
        index += 1
        if word in ("--fp16", "--bf16"):
            options.precision = [word]
        elif word in ("--dry-run", "--sbatch", "--restart"):
            setattr(options, word[2:].replace("-", "_"), True)
        elif word == "--":
            options.extra += argv[index:]
            break
        elif pass_unknown:
            # xlpe-train passes whatever is not its option on to fairseq-train
            options.extra.append(word)
        else:
            raise Refused(f"unknown option {word} (--help lists them)", 2)
    return options


def corpus_of_train_sh(prog, argv):
    """xlpe-train MODEL DATA_DIR CHECKPOINT_DIR: the corpus found from DATA_DIR (its
    data-bin, the languages of its file names, whether its dictionary is joined); returns
    (corpus, the options for ``train``)."""
    if "" in argv[:3]:
        which = ("MODEL", "DATA_DIR", "CHECKPOINT_DIR")[argv.index("")]
        raise Refused(f"'' is not a {which}: an empty operand (an "
                      "unset variable?)", 2)
    if len(argv) < 3 or any(word.startswith("-") for word in argv[:3]):
        raise Refused(f"usage: {prog} {TRAIN_USAGE} (MODEL: transformer xlpe-inxl xlpe-headxl "
                      "xlpe-combination dpe re-encoder re-decoder re-both)", 2)
    model, data_bin, save_dir = argv[:3]
    options = argv[3:argv.index("--")] if "--" in argv else argv[3:]
    if "--model" in options:
        # one way to name the model: the first operand
        raise Refused(f"the model is the first operand, not --model: {prog} {TRAIN_USAGE}", 2)
    # links resolved: OUT is the folder above the data-bin itself, not above a link to it
    data_bin = os.path.realpath(data_bin)
    if os.path.isdir(os.path.join(data_bin, "data-bin")):
        data_bin = os.path.join(data_bin, "data-bin")
    parent = os.path.dirname(data_bin)
    # a corpus still being prepared lacks its files: the preparation is named, not them
    for folder in dict.fromkeys((data_bin, parent)):
        check_not_written(folder, "the corpus (OUT)")
    if (not os.path.isdir(os.path.join(data_bin, "text"))
            and os.path.isdir(os.path.join(parent, "text"))
            and os.path.basename(data_bin) in ("text", "dpe", "xlpe")):
        # one variant given: each model picks its own variant under the folder above
        raise Refused(f"{data_bin} is one variant of the data-bin: pass {parent}, the folder "
                      f"above, from which {model} reads {variant(model)}", 2)
    text = os.path.join(data_bin, "text")
    if not os.path.isdir(text):
        raise Refused(f"{text}: no such folder; is {data_bin} the data-bin of "
                      "xlpe-prepare?", 1)
    # the pair from fairseq-preprocess's file names, train.SRC-TGT.SRC.idx
    pair = data_bin_pair(text)
    if not pair:
        raise Refused(f"{text}: no train.SRC-TGT.*.idx (fairseq-preprocess output)", 1)
    src, tgt = pair
    dictionaries = [os.path.join(text, f"dict.{lang}.txt") for lang in (src, tgt)]
    corpus = SimpleNamespace(data=parent, data_bin=data_bin, dataset=os.path.basename(parent),
                             src=src, tgt=tgt, sizes=TRAIN_SIZES, pass_unknown=True,
                             share="all" if same_content(*dictionaries) else "decoder")
    return corpus, ["--model", model, "--save-dir", save_dir, *argv[3:]]


def same_content(first, second):
    try:
        with open(first, "rb") as one, open(second, "rb") as other:
            return one.read() == other.read()
    except OSError:
        return False


def train(argv, prog, recipe_name):
    name = os.path.basename(prog)
    # the command again, without --restart: what goes on from the checkpoints it saves
    given = argv[:argv.index("--")] if "--" in argv else argv
    resume = shlex.join([prog, *[word for word in given if word != "--restart"],
                         *argv[len(given):]])
    recipe = RECIPES[recipe_name] if recipe_name else None
    if "-h" in argv or "--help" in argv:
        help_parser(prog, recipe).print_help()
        raise SystemExit(0)
    corpus, argv = (corpus_of_recipe(prog, recipe, argv) if recipe
                    else corpus_of_train_sh(prog, argv))
    options = read_options(argv, corpus.pass_unknown)
    size = options.size if options.size is not None else corpus.sizes[0]
    if size not in corpus.sizes:
        raise Refused(f"--size must be one of: {' '.join(corpus.sizes)}", 2)
    model = options.model
    if not model:
        raise Refused(f"--model is required: {' '.join(TRAIN_MODELS)}", 2)
    gpus, nodes = int(options.gpus), int(options.nodes)
    if nodes > 1 and not options.sbatch:
        raise Refused(f"--nodes {nodes}: several nodes train through SLURM; add --sbatch", 2)
    if gpus > 1 and not options.dry_run and not options.sbatch:
        check_gpus(options.gpus)
    model_flags = flags(model, size)
    if model_flags is None:
        raise Refused(f"unknown model '{model}': {' '.join(TRAIN_MODELS)}", 2)
    schedule = options.schedule or default_schedule(model, size)
    values = schedule_values(schedule, size, corpus.tgt)
    paper_tokens = values.max_tokens
    shortened = shorten(values, options)
    world = nodes * gpus
    cpu = "--cpu" in options.extra
    # DDP of CPU modules: over gloo, and with fairseq's own bucketing (legacy_ddp), as its c10d
    # hands PyTorch the GPU-only device_ids
    distributed = (["--distributed-backend", "gloo", "--ddp-backend", "legacy_ddp"]
                   if options.sbatch and cpu else [])
    # fewer GPUs than the paper's accumulate gradients to keep its batch size
    update_freq = int(options.update_freq or -(-values.batch_gpus // world))
    save_dir = options.save_dir or f"checkpoints/{corpus.dataset}/{model}-{size}"
    data_bin = os.path.join(corpus.data_bin, variant(model))
    log_interval = logged_every(world, values.interval, cpu)
    command = train_command(data_bin, corpus.src, corpus.tgt, model_flags,
                            SHARE_FLAGS[corpus.share], values, save_dir, update_freq, world,
                            log_interval, [*options.precision, *distributed, *options.extra])
    # the folders reach fairseq-train as they are named, and no shell: refused only where
    # fairseq cannot take the name
    for path, what in ((corpus.data, "the corpus (OUT)"),
                       (save_dir, "the checkpoints (CHECKPOINT_DIR)")):
        check_folder_name(path, what)
    check_outside_corpus(save_dir, corpus.data, "CHECKPOINT_DIR")
    per_epoch = updates_per_epoch(data_bin, corpus.src, corpus.tgt, values.max_tokens, world,
                                  update_freq, values.max_update)
    print_schedule(model, size, schedule, values, shortened, world, update_freq, log_interval,
                   options.extra, paper_tokens, per_epoch)
    if options.dry_run:
        print(shlex.join(command))
        return
    dictionary = os.path.join(data_bin, f"dict.{corpus.src}.txt")
    if not os.path.exists(dictionary):
        raise Refused(f"{dictionary}: no such file; run the data_prep recipe into {corpus.data} "
                      "first", 1)
    # positions an XL PE model reads in every split, which an OUT prepared without the
    # preorderer lacks on purpose: refused here, not once a cluster job has started
    unprepared = positions_note(data_bin, "valid") if variant(model) == "xlpe" else None
    if unprepared:
        raise Refused(unprepared, 1)
    run = SimpleNamespace(name=name, model=model, size=size, schedule=schedule,
                          save_dir=save_dir, data_bin=data_bin, command=command, resume=resume,
                          log_interval=log_interval)
    if options.sbatch:
        # the corpus checked now, on the machine that submits
        check_corpus(corpus.data, data_bin, name)
        print(sbatch_script(run, nodes, gpus, cpu), end="")
        return
    # --restart sets the earlier run aside: this one starts afresh
    schedule_first = options.restart or earlier_run(run)
    # the data-bin as prepared (OUT's record), read while no preparation rewrites it
    claim_folder(corpus.data, "read", "the corpus (OUT)", name)
    check_corpus(corpus.data, data_bin, name)
    claim_folder(save_dir, "write", "the checkpoints (CHECKPOINT_DIR)", name)
    if options.restart:
        set_aside_run(save_dir, name)
    train_into(run, values.max_update, schedule_first)


def check_gpus(gpus):
    """More processes than GPUs fail only once fairseq starts them: refused now (--dry-run
    and --sbatch print for another machine)."""
    import torch

    visible = torch.cuda.device_count()
    if visible == 0:
        raise Refused("--gpus must be 1 on a machine without GPUs (training on the CPU), not "
                      f"'{gpus}'", 2)
    whole(1, visible)(gpus, "--gpus")


def shorten(values, options):
    """The schedule with the options' values; a shorter budget than the schedule's is the
    schedule in proportion (otherwise a first run of a few hundred updates ends deep in the
    warm-up and before its first checkpoint). Returns the printout's line saying so, or ""."""
    shortened = ""
    if options.max_update is not None and int(options.max_update) < values.max_update:
        budget = int(options.max_update)
        shortened = f"  --max-update {budget} is below the schedule's {values.max_update}:"
        if options.warmup is None:
            values.warmup = max(1, (values.warmup * budget + values.max_update // 2)
                                // values.max_update)
            shortened += " warm-up and"
        values.interval = max(1, values.interval * budget // values.max_update)
        shortened += " checkpoint interval shrunk in proportion"
    if options.max_update is not None:
        values.max_update = int(options.max_update)
    if options.warmup is not None:
        values.warmup = int(options.warmup)
    values.lr = options.lr or values.lr
    values.max_tokens = int(options.max_tokens or values.max_tokens)
    return shortened


def check_corpus(data, data_bin, name):
    for warning in verify_corpus(data, os.path.basename(data_bin)):
        print(f"{name}: warning: {warning}", file=sys.stderr)


def train_into(run, max_update, schedule_first):
    """fairseq-train into SAVE_DIR, with its records: schedule.env before training where
    ``schedule_first``, and again, then provenance.json, once it ended well; the progress
    on stderr, the checkpoints kept as checkpoint_keeping says, and on a stop before the
    end, what was saved and the command that resumes."""
    schedule_env = os.path.join(run.save_dir, "schedule.env")
    if schedule_first:
        write_schedule(schedule_env, run.schedule, run.model)
    run_training(run.command, run.save_dir, max_update, run.name, run.resume)
    write_schedule(schedule_env, run.schedule, run.model)
    record_training(run.save_dir, run.data_bin, run.model, run.size, run.schedule, run.command)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    prog, argv = wrapper_name(argv, "xlpe-train")
    recipe = None
    # a dataset script (examples/train-NAME.sh) names its recipe after its own name
    if argv[:1] == ["--recipe"] and len(argv) >= 2 and argv[1] in RECIPES:
        recipe, argv = argv[1], argv[2:]
    run_command(lambda: train(argv, prog, recipe), os.path.basename(prog))
    return 0


if __name__ == "__main__":
    sys.exit(main())
