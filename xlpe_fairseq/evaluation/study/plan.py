"""What a study runs: its rows, their data-bins and commands, and the settings it holds to.

A row is a model, a model trained on a named position set (``MODEL@SET``), a ``--variant``, or
a trained row decoded with another set's test positions (``MODEL [test: SET]``); the work
folder keeps the settings and refuses a rerun with other ones.
"""
import json
import os
import shlex
import sys
from pathlib import Path

from ...data.positions_note import positions_note
from ...io import InputError, atomic_output, count_lines, option_value
from ...model_registry import learns_order
from ...user_dir import PLUGIN_DIR
from .profiles import PROFILES, model_flags, profile_settings


def model_and_set(model):
    """``("xlpe-inxl", "monotone")`` of ``xlpe-inxl@monotone`` (a model trained on a named
    position set); ``(model, "")`` of a model without one."""
    base, _, trained_on = model.partition("@")
    return base, trained_on


def test_row(model, test_positions):
    """The report's label of ``model``'s checkpoints decoded with set ``test_positions``."""
    return f"{model} [test: {test_positions}]"


def recipe_file(args, name):
    """OUT/NAME of the recipe whose OUT/data-bin/xlpe is --xlpe-data-bin, if it is there."""
    if not args.xlpe_data_bin:
        return None
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.xlpe_data_bin))),
                        name)
    return path if os.path.isfile(path) else None


def trained_row(label):
    """The row whose checkpoints a label decodes: ``MODEL`` of ``MODEL [test: SET]``."""
    return label.partition(" [test: ")[0]


def split_sentences(data_bin, split, source_lang, target_lang):
    """The sentences of a split of a fairseq data-bin, from its source side's index under
    either direction's name (as fairseq looks it up); None where the split is missing."""
    from fairseq.data import indexed_dataset

    for pair in (f"{source_lang}-{target_lang}", f"{target_lang}-{source_lang}"):
        prefix = os.path.join(data_bin, f"{split}.{pair}.{source_lang}")
        impl = indexed_dataset.infer_dataset_impl(prefix)
        if impl == "raw":
            return count_lines(prefix)
        if impl is not None:
            try:
                return len(indexed_dataset.make_dataset(prefix, impl))
            except Exception:  # fairseq's readers fail on a damaged index in many ways
                raise InputError(f"{prefix}.idx: not a fairseq index (truncated or "
                                 "damaged)") from None
    return None


class Study:
    """The runs of one study and where their files go (see the package docstring)."""

    def __init__(self, args):
        self.args = args
        self.profile = PROFILES[args.profile]
        self.work = Path(args.work)
        self.updates = args.updates or self.profile["updates"]
        self.positions = dict(args.positions)
        self.variants = dict(args.variants)
        # with --preorderer-nbest N above 1, XL PE runs are also decoded choosing among the
        # preorderer's N best reorderings, in a row of its own beside the best reordering's
        self.preorderer = args.preorderer or recipe_file(args, "preorderer.pt")
        self.nbest = args.preorderer_nbest if self.preorderer else 1
        self.nbest_set = f"preorderer-{self.nbest}best" if self.nbest > 1 else None

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
        if test_positions == self.nbest_set:
            test_positions = None
        if not self.reads_positions(model):
            if not trained_on:
                return self.args.data_bin
            if not learns_order(base):
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
                             "--xlpe-data-bin (e.g. OUT/data-bin/xlpe of xlpe-prepare)")
        return self.args.xlpe_data_bin

    def evaluations(self, model):
        """``(label, test position set)`` of every evaluation of one run's checkpoint."""
        trained_on = self.definition(model)[1]
        extra = self.args.test_positions if self.reads_positions(model) else []
        # a row trained on a position set is a control, decoded with that set
        nbest = ([self.nbest_set] if self.nbest_set and self.reads_positions(model)
                 and not trained_on else [])
        return [(model, None)] + [(test_row(model, name), name) for name in [*extra, *nbest]
                                  if name != trained_on]

    def generate_options(self, test_positions):
        """fairseq-generate's options that make an evaluation's test positions."""
        if test_positions and test_positions == self.nbest_set:
            return ["--preorderer", self.preorderer, "--preorderer-nbest", str(self.nbest)]
        return []

    def check_positions(self, model):
        """InputError unless the data-bin ``model`` trains on holds the reorder positions it
        learns from (DPE's order targets, in train) or reads (XL PE's, in train and valid):
        found before any training, not once the row's training has started."""
        reads = self.reads_positions(model)
        if (not reads and not learns_order(self.definition(model)[0])) or "--preorderer" in shlex.split(
                self.args.train_args):
            return
        data_bin = self.data_bin(model)
        pair = f"{self.args.source_lang}-{self.args.target_lang}"
        for split in ("train", "valid") if reads else ("train",):
            note = positions_note(data_bin, split)
            index = os.path.join(data_bin, f"{split}.reorder.{pair}.idx")
            if note or not os.path.isfile(index):
                raise InputError(note or f"{index}: no such file; {model} trains on the reorder "
                                 f"positions of the {split} split, which {data_bin} lacks (give "
                                 "a data-bin with them, e.g. xlpe-prepare's data-bin/dpe or "
                                 "data-bin/xlpe)")

    def check_test_split(self, data_bin, reference, lines):
        """InputError unless ``data_bin`` holds the split to decode with a sentence for each of
        the ``lines`` of the ``reference``: a mismatch is found now, not after the training."""
        args = self.args
        sentences = split_sentences(data_bin, args.gen_subset, args.source_lang,
                                    args.target_lang)
        if sentences is None:
            raise InputError(f"{data_bin}: no {args.gen_subset} split "
                             f"({args.gen_subset}.{args.source_lang}-{args.target_lang}."
                             f"{args.source_lang}.idx); --gen-subset names the split to decode")
        if sentences != lines:
            raise InputError(f"{reference}: {lines} lines, but the {args.gen_subset} split of "
                             f"{data_bin} has {sentences} sentences: give the reference of "
                             "that split")

    def run_dir(self, model, seed):
        return self.work / "runs" / model / f"seed{seed}"

    def train_command(self, model, seed, max_update=None):
        """The fairseq-train command of one run (``max_update`` overrides the budget)."""
        args = self.args
        base, _, options = self.definition(model)
        train_args = shlex.split(args.train_args)
        # the profile's validation interval is a default: --train-args may set its own
        asked = option_value(train_args, "--validate-interval-updates")
        interval = asked or str(self.profile["validate_every"])
        validate = [] if asked else ["--validate-interval-updates", interval]
        # fairseq updates checkpoint_best.pt only when it saves, and it saves at epoch ends and
        # --save-interval-updates: without a save at each validation "best" can be the last
        if args.checkpoint != "last" and not option_value(train_args, "--save-interval-updates"):
            validate += ["--save-interval-updates", interval]
        keep = option_value(train_args, "--keep-interval-updates")
        wanted = args.average_last if args.checkpoint == "average" else 1
        if args.checkpoint != "last" and not keep:
            validate += ["--keep-interval-updates", str(wanted)]
        elif args.checkpoint == "average" and keep.isdigit() and 0 < int(keep) < wanted:
            raise InputError(f"--train-args keeps {keep} interval checkpoints "
                             f"(--keep-interval-updates), fewer than the {wanted} that "
                             "--average-last averages")
        return [
            sys.executable, "-m", "fairseq_cli.train", str(self.data_bin(model)),
            "--user-dir", PLUGIN_DIR, "--task", "translation_reorder",
            "--source-lang", args.source_lang, "--target-lang", args.target_lang,
            *profile_settings(base, self.profile), *model_flags(base, self.profile)[0], *options,
            "--seed", str(seed), "--max-update", str(max_update or self.updates), *validate,
            "--save-dir", str(self.run_dir(model, seed) / "checkpoints"),
            *self.device_flags("device"), *train_args,
        ]

    def device_flags(self, key):
        return ["--cpu"] if self.args.cpu else self.profile[key]

    def gpus_per_run(self):
        """The GPUs one run trains on: none on the CPU."""
        return 0 if "--cpu" in self.device_flags("device") else self.args.gpus_per_run

    def settings(self):
        """What makes two runs of the study comparable; stored in WORK/settings.json."""
        return {
            "profile": self.args.profile, "profile_settings": self.profile["settings"],
            "updates": self.updates, "train_args": self.args.train_args,
            "data_bin": os.path.abspath(self.args.data_bin),
            "xlpe_data_bin": self.args.xlpe_data_bin and os.path.abspath(self.args.xlpe_data_bin),
            "source_lang": self.args.source_lang, "target_lang": self.args.target_lang,
            "generate_args": self.args.generate_args, "checkpoint": self.args.checkpoint,
            # absent from folders made before averaging was an option: None is their value
            "average_last": self.args.average_last if self.args.checkpoint == "average" else None,
            "cpu": self.args.cpu,
            # DDP over G GPUs trains on G times the batch; absent from folders made before,
            # None is one GPU's value
            "gpus_per_run": self.gpus_per_run() if self.gpus_per_run() > 1 else None,
            # an explicit --tokenize (None: the target language's, which target_lang fixes)
            "tokenize": self.args.tokenize,
            "positions": {name: os.path.abspath(path) for name, path in self.positions.items()}
            or None,
            "variants": {name: shlex.join([spec, *options])
                         for name, (spec, options) in self.variants.items()} or None,
            "preorderer_nbest": self.nbest_set and {
                self.nbest_set: os.path.abspath(self.preorderer)},
        }

    def check_settings(self):
        """Write WORK/settings.json, or refuse a work folder made with other settings.

        A new ``--positions`` set, ``--variant`` or k-best row (``--preorderer-nbest``) may join
        a study (its runs or evaluations are new; the finished ones keep their data), but none
        may change under its name.
        """
        path = self.work / "settings.json"
        settings = self.settings()
        if path.exists():
            with open(path, encoding="utf-8") as f:
                previous = json.load(f)
            named = ("positions", "variants", "preorderer_nbest")
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
