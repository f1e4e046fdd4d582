"""``xlpe-study``: models × seeds trained with one budget on one data-bin, evaluated, reported.

A single seed at a short budget does not rank methods: across seeds BLEU moves by more than
the gaps between models. This command trains every ``--models`` entry once per ``--seeds``
value with identical settings (a ``--profile``, plus ``--updates``), translates the complete
test split with each, scores it with detokenized sacreBLEU and chrF (AER from attention where
gold alignments are given), and writes one report:

- mean ± sample standard deviation over seeds of BLEU and chrF, and each seed's value;
- each model against the baseline: the difference of seed-averaged BLEU (chrF) with a 95%
  interval and a two-sided p-value from a bootstrap that resamples BOTH sources of variation,
  the test sentences (paired: one resample serves every system) and the seeds (drawn with
  replacement per system), so a difference smaller than the seed spread is not called
  significant;
- training curves (validation loss over updates, mean over seeds) as a PNG;
- the settings and every run's fairseq-train command;
- every evaluation's detokenized test output (``hypotheses/``), so each number can be checked
  with sacreBLEU, and a system added later compared, without the runs' checkpoints.

Whether XL PE uses its positions is a question of the positions it is given, so a study can
name position sets (``--positions NAME=DATA_BIN``: the same text with other reorder positions,
e.g. oracle, preorderer or monotone ones). ``MODEL@NAME`` trains and tests an XL PE model on
set NAME (e.g. ``xlpe-inxl@monotone``, the control that never sees a reordering), and
``--test-positions NAME ...`` also decodes every XL PE run with the test positions of each
named set, reported as rows ``MODEL [test: NAME]`` of the same checkpoints; with sets named
``oracle`` and ``monotone`` the report gives the share of the oracle's gain over monotone
positions that the row's own test positions (e.g. the preorderer's) deliver, and those of every
other set it was decoded with.

A row can carry its own fairseq-train options (``--variant NAME=MODEL OPTIONS``, e.g.
``dpe-lambda0=dpe --order-lambda 0``), so settings of one model are rows of one report against
one baseline. DPE trains on the data-bin's order targets, or on a position set's
(``dpe@skip``); the report shows, per DPE row, whether its network learned the order
(``order_diagnostics`` of the criterion, read from the runs' logs at the last update).

Runs live in ``WORK/runs/MODEL/seedS``. A finished run (``result.json``) is not trained again;
an interrupted one resumes from its ``checkpoint_last.pt`` (fairseq-train's own resume). A
work folder remembers its settings and refuses a rerun with other ones. Each result records the
options its checkpoint was trained with, defaults included (``options`` in ``report.json``), and
a row whose seeds differ in any is refused: a code default changed between them, which the
commands do not show. Progress lines give the
ETA from the mean duration of the runs trained so far. ``--jobs N`` trains N runs at once
(on a CPU, give each ``OMP_NUM_THREADS`` = cores / N).
"""
import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

import numpy as np

from ..help_format import HelpFormatter
from ..io import (
    InputError,
    Terminated,
    ToolError,
    atomic_output,
    check_dictionaries,
    check_output_directory,
    check_utf8,
    child_processes,
    read_lines,
    require_files,
    run_command,
)
from .bleu import add_tokenize_argument, bleu_tokenizer, detokenize, score
from .bleu import metrics as bleu_metrics
from .compare import (
    USER_DIR,
    corpus_score,
    generate,
    read_checkpoint,
    sentence_draws,
    sentence_statistics,
    stored_parameter_count,
    two_sided_p,
)
from .curves import plot_curves
from .generate_output import IncompleteGenerationError, read_hypotheses

# Training settings per profile: fairseq-train options without data, languages, architecture,
# seed, budget or device. ``cpu-demo`` is examples/demo_settings.sh (a test keeps them equal).
PROFILES = {
    "cpu-demo": {
        "settings": [
            "--encoder-embed-dim", "128", "--encoder-ffn-embed-dim", "512",
            "--encoder-layers", "2", "--encoder-attention-heads", "4",
            "--decoder-embed-dim", "128", "--decoder-ffn-embed-dim", "512",
            "--decoder-layers", "2", "--decoder-attention-heads", "4",
            "--share-decoder-input-output-embed", "--dropout", "0.2",
            "--criterion", "label_smoothed_cross_entropy_with_order", "--label-smoothing", "0.1",
            "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr", "0.002",
            "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "200", "--max-tokens", "4096",
            "--no-epoch-checkpoints", "--log-format", "simple", "--log-interval", "50",
            "--num-workers", "0",
        ],
        "embed_dim": 128, "encoder_layers": 2, "heads": 4, "order_lambda": 0.5, "updates": 500,
        "validate_every": 100, "device": ["--cpu"], "generate_device": ["--cpu"],
    },
    # fairseq's IWSLT'14 preset (transformer_iwslt_de_en: 512/1024, 6+6 layers, 4 heads), not
    # the smaller model of this project's IWSLT'14 recipes (256/1024, 2+2, 2 heads, lr 5e-4,
    # warmup 4000); on one GPU in fp16, at fairseq's own lr for it (at 1e-3 it stayed on the
    # unigram plateau). 12 runs share an H100 or H200 at 3-4 updates/s each.
    "gpu-iwslt": {
        "settings": [
            "--encoder-embed-dim", "512", "--encoder-ffn-embed-dim", "1024",
            "--encoder-layers", "6", "--encoder-attention-heads", "4",
            "--decoder-embed-dim", "512", "--decoder-ffn-embed-dim", "1024",
            "--decoder-layers", "6", "--decoder-attention-heads", "4",
            "--share-decoder-input-output-embed", "--dropout", "0.3", "--weight-decay", "0.0001",
            "--criterion", "label_smoothed_cross_entropy_with_order", "--label-smoothing", "0.1",
            "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--clip-norm", "0.0",
            "--lr", "0.0005", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "1000",
            "--max-tokens", "8192", "--no-epoch-checkpoints", "--log-format", "simple",
            "--log-interval", "100", "--num-workers", "2",
        ],
        "embed_dim": 512, "encoder_layers": 6, "heads": 4, "order_lambda": 0.3, "updates": 4000,
        "validate_every": 500, "device": ["--fp16"], "generate_device": ["--fp16"],
    },
}


def model_flags(name, profile):
    """fairseq-train options that make ``name`` out of the profile's shared settings.

    Returns ``(options, reads_positions)``; ``reads_positions`` models (XL PE) train and
    decode on the data-bin with reorder positions for every split.
    """
    heads = profile["heads"]
    width = str(profile["embed_dim"])
    xlpe_heads = str(max(1, heads // 4))  # the paper's best share: 4 of 16 heads
    table = {
        "transformer": (["--arch", "transformer"], False),
        "dpe": (["--arch", "transformer_dpe", "--order-lambda", str(profile["order_lambda"])],
                False),
        "re-encoder": (["--arch", "transformer_reorder_emb", "--reorder-emb", "encoder"], False),
        "re-decoder": (["--arch", "transformer_reorder_emb", "--reorder-emb", "decoder"], False),
        "re-both": (["--arch", "transformer_reorder_emb", "--reorder-emb", "both"], False),
        "xlpe-inxl": (["--arch", "transformer_xlpe", "--xlpe-mode", "inxl"], True),
        "xlpe-headxl": (["--arch", "transformer_xlpe", "--xlpe-mode", "headxl",
                         "--xlpe-heads", xlpe_heads], True),
        "xlpe-combination": (["--arch", "transformer_xlpe", "--xlpe-mode", "combination",
                              "--xlpe-heads", xlpe_heads], True),
        # as many encoder layers as DPE's network plus its encoder (DPE Table 5's 8E at base)
        "transformer-deep": (["--arch", "transformer", "--encoder-layers",
                              str(profile["encoder_layers"] + 2)], False),
        "encoder-free": (["--arch", "transformer", "--encoder-layers", "0"], False),
        "encoder-free-inxl": (["--arch", "transformer_xlpe", "--xlpe-mode", "inxl",
                               "--encoder-layers", "0"], True),
        # XL PE Table 4: no source positions, then Shaw positions in the decoder
        "encoder-free-nopos": (["--arch", "transformer_relpe", "--encoder-layers", "0",
                                "--relative-positions-in", "none",
                                "--absolute-positions", "decoder"], False),
        "encoder-free-relpe": (["--arch", "transformer_relpe", "--encoder-layers", "0",
                                "--relative-positions-in", "decoder",
                                "--absolute-positions", "decoder"], False),
        "relpe": (["--arch", "transformer_relpe"], False),
        "rope": (["--arch", "transformer_rope"], False),
        "alibi": (["--arch", "transformer_alibi"], False),
        "t5-bias": (["--arch", "transformer_t5_bias"], False),
        # XL PE Table 4's LSTM at the profile's width and depth (see profile_settings)
        "lstm": (["--arch", "lstm_6l_wmt_en_de", *[option for side in ("encoder", "decoder")
                                                    for option in (f"--{side}-hidden-size", width)],
                  "--decoder-out-embed-dim", width], False),
    }
    if name not in table:
        raise InputError(f"unknown model {name!r}; known: {', '.join(table)}")
    return table[name]


MODEL_NAMES = ("transformer", "dpe", "re-encoder", "re-decoder", "re-both", "xlpe-inxl",
               "xlpe-headxl", "xlpe-combination", "transformer-deep", "encoder-free",
               "encoder-free-inxl", "encoder-free-nopos", "encoder-free-relpe", "relpe", "rope",
               "alibi", "t5-bias", "lstm")

# fairseq's lstm has neither feed-forward blocks nor attention heads, and refuses their options
TRANSFORMER_ONLY_OPTIONS = ("--encoder-ffn-embed-dim", "--encoder-attention-heads",
                            "--decoder-ffn-embed-dim", "--decoder-attention-heads")


def profile_settings(name, profile):
    """The profile's shared settings that model ``name`` accepts."""
    settings = profile["settings"]
    if name != "lstm":
        return list(settings)
    kept, k = [], 0
    while k < len(settings):
        if settings[k] in TRANSFORMER_ONLY_OPTIONS:
            k += 2  # the option and its value
        else:
            kept.append(settings[k])
            k += 1
    return kept


def model_and_set(model):
    """``("xlpe-inxl", "monotone")`` of ``xlpe-inxl@monotone`` (a model trained on a named
    position set); ``(model, "")`` of a model without one."""
    base, _, trained_on = model.partition("@")
    return base, trained_on


def test_row(model, test_positions):
    """The report's label of ``model``'s checkpoints decoded with set ``test_positions``."""
    return f"{model} [test: {test_positions}]"


def trained_row(label):
    """The row whose checkpoints a label decodes: ``MODEL`` of ``MODEL [test: SET]``."""
    return label.partition(" [test: ")[0]


def learns_order(flags):
    """Whether a model's fairseq-train flags make a DPE model, which trains on order targets."""
    return flags[flags.index("--arch") + 1] == "transformer_dpe"


class Study:
    """The runs of one study and where their files go (see the module docstring)."""

    def __init__(self, args):
        self.args = args
        self.profile = PROFILES[args.profile]
        self.work = Path(args.work)
        self.updates = args.updates or self.profile["updates"]
        self.positions = dict(args.positions)
        self.variants = dict(args.variants)

    def definition(self, model):
        """``(model name, position set it trains on, further options)`` of a row: a model,
        ``MODEL@SET``, or a ``--variant`` name."""
        spec, options = self.variants.get(model, (model, []))
        return (*model_and_set(spec), options)

    def flags(self, model):
        return model_flags(self.definition(model)[0], self.profile)

    def reads_positions(self, model):
        return self.flags(model)[1]

    def data_bin(self, model, test_positions=None):
        """The data-bin ``model`` trains on, or is tested on with ``test_positions``'s set."""
        base, trained_on, _ = self.definition(model)
        if not self.reads_positions(model):
            if not trained_on:
                return self.args.data_bin
            if not learns_order(self.flags(model)[0]):
                raise InputError(f"{model}: {base} reads no reorder positions, so it cannot "
                                 "train on a position set")
        name = test_positions or trained_on
        if name:
            if name not in self.positions:
                raise InputError(f"{model}: no position set {name!r}; give --positions "
                                 f"{name}=DATA_BIN (known: {', '.join(self.positions) or 'none'})")
            return self.positions[name]
        if not self.args.xlpe_data_bin:
            raise InputError(f"{model} reads reorder positions in every split: give "
                             "--xlpe-data-bin (e.g. data_prep/prepare-bible-he-en.sh --xlpe)")
        return self.args.xlpe_data_bin

    def evaluations(self, model):
        """``(label, test position set)`` of every evaluation of one run's checkpoint."""
        trained_on = self.definition(model)[1]
        extra = self.args.test_positions if self.reads_positions(model) else []
        return [(model, None)] + [(test_row(model, name), name) for name in extra
                                  if name != trained_on]

    def run_dir(self, model, seed):
        return self.work / "runs" / model / f"seed{seed}"

    def train_command(self, model, seed, max_update=None):
        """The fairseq-train command of one run (``max_update`` overrides the budget)."""
        args = self.args
        base, _, options = self.definition(model)
        train_args = shlex.split(args.train_args)
        # the profile's validation interval is a default: --train-args may set its own
        asked = any(option.split("=")[0] == "--validate-interval-updates"
                    for option in train_args)
        validate = ([] if asked else
                    ["--validate-interval-updates", str(self.profile["validate_every"])])
        return [
            sys.executable, "-m", "fairseq_cli.train", str(self.data_bin(model)),
            "--user-dir", USER_DIR, "--task", "translation_reorder",
            "--source-lang", args.source_lang, "--target-lang", args.target_lang,
            *profile_settings(base, self.profile), *model_flags(base, self.profile)[0], *options,
            "--seed", str(seed), "--max-update", str(max_update or self.updates), *validate,
            "--save-dir", str(self.run_dir(model, seed) / "checkpoints"),
            *self.device_flags("device"), *train_args,
        ]

    def device_flags(self, key):
        return ["--cpu"] if self.args.cpu else self.profile[key]

    def settings(self):
        """What makes two runs of the study comparable; stored in WORK/settings.json."""
        return {
            "profile": self.args.profile, "profile_settings": self.profile["settings"],
            "updates": self.updates, "train_args": self.args.train_args,
            "data_bin": os.path.abspath(self.args.data_bin),
            "xlpe_data_bin": self.args.xlpe_data_bin and os.path.abspath(self.args.xlpe_data_bin),
            "source_lang": self.args.source_lang, "target_lang": self.args.target_lang,
            "generate_args": self.args.generate_args, "checkpoint": self.args.checkpoint,
            "cpu": self.args.cpu,
            # an explicit --tokenize (None: the target language's, which target_lang fixes)
            "tokenize": self.args.tokenize,
            "positions": {name: os.path.abspath(path) for name, path in self.positions.items()}
            or None,
            "variants": {name: shlex.join([spec, *options])
                         for name, (spec, options) in self.variants.items()} or None,
        }

    def check_settings(self):
        """Write WORK/settings.json, or refuse a work folder made with other settings.

        A new ``--positions`` set or ``--variant`` may join a study (its runs are new runs;
        the finished ones keep their data), but neither may change under its name.
        """
        path = self.work / "settings.json"
        settings = self.settings()
        if path.exists():
            with open(path, encoding="utf-8") as f:
                previous = json.load(f)
            named = ("positions", "variants")
            changed = sorted(key for key in set(settings) | set(previous)
                             if key not in named and settings.get(key) != previous.get(key))
            grown = False
            for key in named:
                now, before = settings[key] or {}, previous.get(key) or {}
                changed += [f"{key} {name}" for name, value in before.items()
                            if now.get(name, value) != value]
                grown |= not now.keys() <= before.keys()
                settings[key] = {**before, **now} or None
            if changed:
                raise InputError(f"{path}: this work folder was made with other settings "
                                 f"({', '.join(changed)} differ); use another --work")
            if not grown:
                return
        self.work.mkdir(parents=True, exist_ok=True)
        with atomic_output(str(path)) as out:
            json.dump(settings, out, indent=2)


def train(study, model, seed):
    """Train one run to the budget; fairseq-train resumes from checkpoint_last.pt if present.

    ``trained`` marks a finished training: fairseq-train restarted on a checkpoint at its
    budget would take one more update before it stops.
    """
    run_dir = study.run_dir(model, seed)
    if (run_dir / "trained").exists():
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    command = study.train_command(model, seed)
    (run_dir / "command.txt").write_text(shlex.join(command) + "\n", encoding="utf-8")
    env = {**os.environ, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1", "PYTHONWARNINGS": "ignore"}
    with open(run_dir / "train.log", "a", encoding="utf-8") as log:
        result = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    if result.returncode != 0:
        tail = (run_dir / "train.log").read_text(encoding="utf-8", errors="replace")[-3000:]
        raise ToolError(f"training {model} seed {seed} failed (exit {result.returncode}); "
                        f"{run_dir / 'train.log'} ends:\n{tail}")
    (run_dir / "trained").touch()


def checkpoint_to_decode(study, model, seed):
    return study.run_dir(model, seed) / "checkpoints" / f"checkpoint_{study.args.checkpoint}.pt"


def result_files(study, model, seed, test_positions=None):
    """``(hypotheses, result.json, aer.json)`` of one evaluation of a run."""
    suffix = f".test-{test_positions}" if test_positions else ""
    run_dir = study.run_dir(model, seed)
    return (run_dir / f"generate{suffix}.out", run_dir / f"result{suffix}.json",
            run_dir / f"aer{suffix}.json")


def finished(study, model, seed):
    return all(result_files(study, model, seed, name)[1].exists()
               for _, name in study.evaluations(model))


def evaluate(study, model, seed, references, test_positions=None):
    """Translate the test split (with another set's positions), score it, write its result."""
    args = study.args
    run_dir = study.run_dir(model, seed)
    checkpoint = checkpoint_to_decode(study, model, seed)
    output, result_json, aer_json = result_files(study, model, seed, test_positions)
    data_bin = study.data_bin(model, test_positions)
    generate(checkpoint, data_bin, args.gen_subset, str(output),
             ["--source-lang", args.source_lang, "--target-lang", args.target_lang,
              *shlex.split(args.generate_args), *study.device_flags("generate_device")])
    try:
        hypotheses = read_hypotheses(str(output), len(references))
    except IncompleteGenerationError as err:
        raise InputError(str(err)) from err
    state = read_checkpoint(str(checkpoint))
    result = {"model": model, "seed": seed, **score(detokenize(hypotheses, args.target_lang),
                                                    references,
                                                    bleu_tokenizer(args.target_lang, args.tokenize)),
              "parameters": stored_parameter_count(state), "options": trained_options(state)}
    if args.gold:
        result["aer"] = alignment_error_rate(study, data_bin, checkpoint, aer_json)
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


def alignment_error_rate(study, data_bin, checkpoint, scores):
    """AER of the model's attention against the gold alignment (``xlpe-aer``, JSON to ``scores``)."""
    args = study.args
    command = [sys.executable, "-m", "xlpe_fairseq.evaluation.attention_alignment",
               "--gold", args.gold, "--source-bpe", args.source_bpe, "--target-bpe",
               args.target_bpe, "--data-bin", str(data_bin), "--split",
               args.gen_subset, "--checkpoint", f"model={checkpoint}", "--json", str(scores)]
    env = {**os.environ, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1", "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise ToolError(f"{shlex.join(command)} failed:\n{result.stderr[-3000:]}")
    with open(scores, encoding="utf-8") as f:
        return json.load(f)[0]["aer"]


VALID_LINE = re.compile(r"valid on '[^']*' subset \|(?P<fields>.*)")


# fairseq's simple format writes interval lines as "name=value, ..." and summaries (epochs,
# validations) as "| name value |"; a run shorter than --log-interval has only summaries
TRAIN_LINES = (re.compile(r"\| train_inner \| [^|]*?(?P<fields>\w+=.*)"),
               re.compile(r"\| train \| epoch \d+ \|(?P<fields>.*)"))
FIELD = re.compile(r"(\w+)=([^,\s]+)")


def log_fields(train_log, *patterns):
    """The ``{name: value}`` fields of every line of fairseq-train's simple-format log that
    one of ``patterns`` matches, in order (resumes included)."""
    with open(train_log, encoding="utf-8", errors="replace") as f:
        for line in f:
            match = next(filter(None, (pattern.search(line) for pattern in patterns)), None)
            if not match:
                continue
            fields = match["fields"]
            if "=" in fields:
                yield dict(FIELD.findall(fields))
            else:
                yield dict(field.strip().split(" ", 1) for field in fields.split("|")
                           if " " in field.strip())


def validation_curve(train_log):
    """``{update: validation NLL}``: the translation loss without label smoothing (base 2),
    which every model reports alike; ``loss`` would add DPE's order loss."""
    return {int(fields["num_updates"]): float(fields["nll_loss"])
            for fields in log_fields(train_log, VALID_LINE)
            if "num_updates" in fields and "nll_loss" in fields}


ORDER_FIELDS = ("order_loss", "order_own_loss", "order_moved_loss", "order_moved_own_loss",
                "order_nearest_target", "order_nearest_own")
# logged by later versions of the criterion; runs logged before it still report the others
LATER_ORDER_FIELDS = ("order_nearer_target",)


def order_diagnostics(train_log):
    """The criterion's order diagnostics at the run's last logged training interval and last
    validation: ``{"train": {...}, "valid": {...}}``, empty for models without an order loss."""
    last = {}
    for split, patterns in (("train", TRAIN_LINES), ("valid", (VALID_LINE,))):
        for fields in log_fields(train_log, *patterns):
            if all(name in fields for name in ORDER_FIELDS):
                last[split] = {name: float(fields[name])
                               for name in ORDER_FIELDS + LATER_ORDER_FIELDS if name in fields}
                last[split]["num_updates"] = int(fields["num_updates"])
    return last


def per_seed_scores(metric, stats, counts):
    """``(samples, seeds)``: each seed's corpus score on each sentence draw of ``counts``."""
    return np.array([[corpus_score(metric, row) for row in counts @ seed] for seed in stats]).T


def across_seeds(values):
    """Each seed's value, their mean and sample standard deviation (None for one seed: a
    spread of 0 would claim that the seed does not matter)."""
    return {"per_seed": values, "mean": float(np.mean(values)),
            "sd": float(np.std(values, ddof=1)) if len(values) > 1 else None}


def seed_averaged(metric, stats):
    """The mean over seeds of each seed's corpus score on the whole test set."""
    return float(np.mean([corpus_score(metric, seed.sum(0)) for seed in stats]))


def seed_bootstrap(metric, baseline_stats, system_stats, samples, rng):
    """Difference of seed-averaged scores, its 95% interval and two-sided p-value.

    ``*_stats`` are lists (one per seed) of per-sentence statistics. Each bootstrap sample
    draws the test sentences once for both systems (paired) and each system's seeds with
    replacement, so both the test set and the training seed vary.
    """
    counts = sentence_draws(baseline_stats[0].shape[0], samples, rng)
    system, baseline = (per_seed_scores(metric, stats, counts)
                        for stats in (system_stats, baseline_stats))
    pick_system = rng.integers(0, len(system_stats), size=(samples, len(system_stats)))
    pick_baseline = rng.integers(0, len(baseline_stats), size=(samples, len(baseline_stats)))
    rows = np.arange(samples)[:, None]
    differences = system[rows, pick_system].mean(1) - baseline[rows, pick_baseline].mean(1)
    observed = seed_averaged(metric, system_stats) - seed_averaged(metric, baseline_stats)
    low, high = np.percentile(differences, [2.5, 97.5])
    return {"delta": float(observed), "low": float(low), "high": float(high),
            "p": two_sided_p(observed, differences)}


def oracle_gain_share(metric, own_stats, oracle_stats, monotone_stats, samples, rng):
    """How much of the oracle's gain over monotone test positions a model's own test
    positions deliver: ``(own - monotone) / (oracle - monotone)`` of seed-averaged scores.

    The three rows decode the same checkpoints, so each bootstrap sample draws the test
    sentences and the seeds once for all three. ``share`` is None where the oracle does not
    beat monotone (no gain to share); the interval leaves out samples without a gain.
    """
    counts = sentence_draws(own_stats[0].shape[0], samples, rng)
    picks = rng.integers(0, len(own_stats), size=(samples, len(own_stats)))
    rows = np.arange(samples)[:, None]

    def resampled(stats):
        return per_seed_scores(metric, stats, counts)[rows, picks].mean(1)

    own, oracle, monotone = (seed_averaged(metric, stats)
                             for stats in (own_stats, oracle_stats, monotone_stats))
    result = {"own": own, "oracle": oracle, "monotone": monotone, "share": None,
              "low": None, "high": None}
    if oracle > monotone:
        base = resampled(monotone_stats)
        gains = resampled(oracle_stats) - base
        shares = (resampled(own_stats) - base)[gains > 0] / gains[gains > 0]
        low, high = np.percentile(shares, [2.5, 97.5])
        result.update(share=(own - monotone) / (oracle - monotone), low=float(low),
                      high=float(high))
    return result


def oracle_gain_shares(models, statistics, metric, samples, seed):
    """``{row: oracle_gain_share}`` of every XL PE row decoded with sets named ``oracle``
    and ``monotone`` (``examples/position_sets.sh``): for its own test positions, and for
    those of every other set it was decoded with (``MODEL [test: SET]``, e.g. the DPE
    network's order)."""
    shares = {}
    for row in models:
        model = trained_row(row)
        oracle, monotone = test_row(model, "oracle"), test_row(model, "monotone")
        if row not in (oracle, monotone) and oracle in statistics and monotone in statistics:
            shares[row] = oracle_gain_share(metric, statistics[row], statistics[oracle],
                                            statistics[monotone], samples,
                                            np.random.default_rng(seed))
    return shares


def verdict(comparison, alpha=0.05):
    if comparison["p"] >= alpha:
        return "no significant difference"
    return "better" if comparison["delta"] > 0 else "worse"


def summarize(study, models, seeds, references, hypotheses, results, samples=1000, seed=12345):
    """The report's numbers: per model its seeds' scores, mean, sd and the baseline test."""
    baseline = study.args.baseline or models[0]
    metrics = bleu_metrics(bleu_tokenizer(study.args.target_lang, study.args.tokenize))
    statistics = {
        key: {model: [sentence_statistics(metric, hypotheses[model, s], references) for s in seeds]
              for model in models}
        for key, metric in metrics.items()
    }
    rows = []
    for model in models:
        runs = [results[model, s] for s in seeds]
        row = {"model": model, "baseline": model == baseline, "seeds": list(seeds),
               "parameters": runs[0]["parameters"], "options": row_options(model, seeds, runs)}
        for key, metric in metrics.items():
            row[key] = across_seeds([run[key] for run in runs])
            if model != baseline:
                rng = np.random.default_rng(seed)
                row[key]["vs_baseline"] = seed_bootstrap(
                    metric, statistics[key][baseline], statistics[key][model], samples, rng)
        if all("aer" in run for run in runs):
            row["aer"] = across_seeds([run["aer"] for run in runs])
        rows.append(row)
    return {"baseline": baseline, "bootstrap_samples": samples, "bootstrap_seed": seed,
            "settings": study.settings(), "models": rows,
            "oracle_gain_shares": oracle_gain_shares(models, statistics["bleu"],
                                                     metrics["bleu"], samples, seed),
            "bleu_signature": results[models[0], seeds[0]]["bleu_signature"],
            "chrf_signature": results[models[0], seeds[0]]["chrf_signature"]}


def position_sets_text(positions):
    if not positions:
        return []
    return ["", "Position sets (same text, other reorder positions): " + ", ".join(
        f"`{name}` = `{path}`" for name, path in positions.items()) + ". `MODEL@SET`: trained "
        "and tested on SET's positions; `MODEL [test: SET]`: the checkpoints of the row "
        "`MODEL`, decoded with SET's test positions."]


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
    plugin = str(Path(__file__).resolve().parents[1])

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
        f"checkpoint `{settings['checkpoint']}`, generate `{settings['generate_args']}`.",
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
        "",
        f"BLEU: {summary['bleu_signature']}",
        f"chrF: {summary['chrf_signature']}",
        "",
        "Training curves: `curves.png` (validation NLL, mean over seeds). Test outputs: "
        "`hypotheses/MODEL/seedS.txt` (`seedS.test-SET.txt` for a row `[test: SET]`), "
        "detokenized as scored.",
        *oracle_gain_shares_text(summary.get("oracle_gain_shares")),
        *order_diagnostics_text(summary.get("order_diagnostics")),
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
                    read_hypotheses(str(output), len(references)), study.args.target_lang)
                with atomic_output(str(hypotheses_file(study.work, model, seed,
                                                       test_positions))) as out:
                    out.writelines(line + "\n" for line in hypotheses[label, seed])
        for seed in seeds:
            commands.append((study.run_dir(model, seed) / "command.txt")
                            .read_text(encoding="utf-8").strip())
    summary = summarize(study, labels, seeds, references, hypotheses, results,
                        study.args.bootstrap_samples)
    summary["order_diagnostics"] = order_diagnostics_by_model(study, models, seeds)
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


def order_diagnostics_by_model(study, models, seeds):
    """Per model with an order loss, each split's diagnostics averaged over seeds."""
    by_model = {}
    for model in models:
        runs = [order_diagnostics(study.run_dir(model, seed) / "train.log") for seed in seeds]
        for split in ("train", "valid"):
            if all(split in run for run in runs):
                names = (*ORDER_FIELDS, "num_updates",
                         *(name for name in LATER_ORDER_FIELDS
                           if all(name in run[split] for run in runs)))
                by_model.setdefault(model, {})[split] = {
                    name: float(np.mean([run[split][name] for run in runs])) for name in names}
    return by_model


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


def variants_text(variants, rows):
    """The definitions of the variants among ``rows`` (a work folder keeps every variant it
    was ever given; a report names the ones it shows)."""
    shown = {trained_row(row["model"]) for row in rows}
    used = {name: definition for name, definition in (variants or {}).items() if name in shown}
    if not used:
        return []
    return ["", "Rows with their own options (`--variant`): " + "; ".join(
        f"`{name}` = `{definition}`" for name, definition in used.items()) + "."]


def format_duration(seconds):
    minutes = int(round(seconds / 60))
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def train_and_evaluate(study, model, seed, references):
    """One run: train (or resume), then every evaluation not done yet (a test position set added
    to a finished study decodes only with that set); returns the main evaluation's result."""
    train(study, model, seed)
    results = []
    for _, name in study.evaluations(model):
        result_json = result_files(study, model, seed, name)[1]
        if result_json.exists():
            with open(result_json, encoding="utf-8") as f:
                results.append(json.load(f))
        else:
            results.append(evaluate(study, model, seed, references, name))
    return results[0]


def run_pending(study, pending, references, jobs):
    """Train and evaluate ``pending`` runs, ``jobs`` at a time, with progress and an ETA."""
    durations, done, lock = [], [0], threading.Lock()

    def one(model, seed):
        started = time.monotonic()
        result = train_and_evaluate(study, model, seed, references)
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


def run_study(args):
    study = Study(args)
    bleu_tokenizer(args.target_lang, args.tokenize)  # a missing extra fails now, not after training
    require_files([args.reference] + ([args.gold, args.source_bpe, args.target_bpe]
                                      if args.gold else []))
    for model in args.models:
        study.flags(model)
        for _, test_positions in study.evaluations(model):
            study.data_bin(model, test_positions)
    # read before the work folder is made; the gold and BPE text, which xlpe-aer reads only
    # after the training, checked now
    references = read_lines(args.reference)
    check_output_directory(args.work)
    check_utf8([args.gold, args.source_bpe, args.target_bpe] if args.gold else [])
    for data_bin in filter(None, (args.data_bin, args.xlpe_data_bin, *study.positions.values())):
        check_dictionaries(data_bin)
    study.check_settings()
    if args.tokenized_reference:
        references = detokenize(references, args.target_lang)

    runs = [(model, seed) for model in args.models for seed in args.seeds]
    pending = [run for run in runs if not finished(study, *run)]
    print(f"xlpe-study: {len(runs)} runs, {len(runs) - len(pending)} already finished",
          file=sys.stderr)
    run_pending(study, pending, references, args.jobs)
    write_report(study, args.models, args.seeds, references)
    print((study.work / "report.md").read_text(encoding="utf-8"), end="")


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
    parser = argparse.ArgumentParser(prog="xlpe-study", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--data-bin", required=True, help="fairseq data-bin of the pair")
    parser.add_argument("--xlpe-data-bin",
                        help="data-bin with reorder positions for every split (XL PE models)")
    parser.add_argument("--source-lang", required=True)
    parser.add_argument("--target-lang", required=True)
    parser.add_argument("--reference", required=True, help="test reference, one sentence a line")
    parser.add_argument("--tokenized-reference", action="store_true",
                        help="the reference is Moses-tokenized: detokenize it like the hypotheses")
    add_tokenize_argument(parser)
    parser.add_argument("--models", nargs="+", default=["transformer", "dpe"],
                        help=f"models to train (default: transformer dpe); any of "
                        f"{', '.join(MODEL_NAMES)}; an XL PE or DPE model as MODEL@SET trains "
                        "on the position set SET (--positions); a --variant's NAME")
    parser.add_argument("--baseline", help="model the others are tested against (default: first)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--profile", choices=sorted(PROFILES), default="cpu-demo",
                        help="model size and optimizer (default: cpu-demo, the demo's settings; "
                        "gpu-iwslt: fairseq's transformer_iwslt_de_en size, 512/1024 6+6, "
                        "in fp16 on one GPU)")
    parser.add_argument("--updates", type=int, help="training updates per run (default: the "
                        "profile's: 500 for cpu-demo, 4000 for gpu-iwslt)")
    parser.add_argument("--cpu", action="store_true", help="train and decode on the CPU "
                        "whatever the profile")
    parser.add_argument("--train-args", default="", help="further fairseq-train options for "
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
    parser.add_argument("--jobs", type=int, default=1,
                        help="runs trained at once (default: 1; on a CPU set OMP_NUM_THREADS to "
                        "cores / jobs)")
    parser.add_argument("--checkpoint", choices=["last", "best"], default="last",
                        help="checkpoint each run is evaluated with (default: last)")
    parser.add_argument("--gen-subset", default="test")
    parser.add_argument("--generate-args", default="--beam 5 --batch-size 100",
                        help="fairseq-generate options, one string (default: %(default)s)")
    parser.add_argument("--gold", help="gold word alignment of the test split: adds AER")
    parser.add_argument("--source-bpe", help="BPE source of the test split (with --gold)")
    parser.add_argument("--target-bpe", help="BPE target of the test split (with --gold)")
    parser.add_argument("--bootstrap-samples", type=int, default=1000)
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
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.baseline and args.baseline not in args.models:
        parser.error(f"--baseline {args.baseline} is not one of --models")
    if args.gold and not (args.source_bpe and args.target_bpe):
        parser.error("--gold needs --source-bpe and --target-bpe")
    run_command(lambda: run_study(args), parser.prog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
