"""The demo's corpus: Hebrew->English Bible verses (PyPI bible-alignments, manual gold
alignments for valid/test) prepared for fairseq-train --task translation_reorder with DPE
reorder positions (data_prep/prepare-bible-he-en.sh runs it; examples/demo.sh reads it).

  prepare-bible-he-en.sh [--xlpe] OUTDIR

--xlpe (or XLPE=1) also prepares XL PE (Ding et al. 2020, step 6): BTG oracle positions,
a source-only preorderer trained on them and scored on test, and OUTDIR/data-bin-xlpe.

OUTDIR receives
  corpus/         {train,valid,test}.{he,en,ids} as xlpe-bible-corpus gives them (already
                  tokenized: Hebrew morphemes, BSB words and punctuation), and
                  {valid,test}.gold.align, the manual alignments over exactly these tokens
  bpe/            codes, BPE text, {train,valid}.align (eflomal; with --xlpe test too),
                  {train,valid}.reorder (DPE positions); with --xlpe {split}.btg.reorder
                  (BTG oracle), {valid,test}.pred.reorder (the preorderer's)
  data-bin/       fairseq-preprocess output + train and valid DPE positions
  data-bin-xlpe/  (--xlpe) data-bin's text, linked, + pos_XL for every split
  preorderer.pt, preorderer.test-score.txt  (--xlpe) the preorderer and its score on test

Needs xlpe-fairseq installed in the active environment (xlpe-* and fairseq-preprocess on
PATH). A rerun skips each step whose outputs were made from the present content of its
inputs and from the same settings, whatever the files' times (xlpe_fairseq/workflow/
pipeline.py). One run at a time writes OUTDIR; every step runs as a process of its own,
ended with this command (Ctrl-C, SIGTERM), and no temporary file is left.
Environment: WORKERS (default: all cores), MERGES (default: 8000), XLPE (1: as --xlpe),
XLPE_TRAIN_POSITIONS (oracle, the default: BTG positions from the alignment for train;
predicted: the preorderer's, as at test time, cross-fitted over PREORDER_FOLDS (default 2)
folds by xlpe-preorder-crossfit; mixed: oracle or cross-fitted per sentence, half each),
ALIGN_SEED (eflomal's seed, default 1), PREORDER_EPOCHS (default 3), PREORDER_THREADS (the
preorderer's torch threads, default 2).

The output depends only on these settings and the installed tools (eflomal's build, torch),
not on WORKERS, the machine's cores or its load: every step but eflomal and the preorderer
is deterministic, eflomal runs seeded, and the preorderer trains a fixed number of epochs
with a fixed thread count (torch rounds differently with another one).
"""
import argparse
import os
import sys

from ..io import default_workers, run_command
from ..io.locks import claim_folder
from . import pipeline
from .preorderer_steps import cross_fit
from .prepare_settings import check_train_positions
from .script_options import (
    Refused,
    ScriptHelpFormatter,
    check_folder_name,
    one_of,
    whole,
    wrapper_name,
)
from .steps import Steps, remove_stale_temporaries_of, report

SRC, TGT = "he", "en"
SPLITS = pipeline.SPLITS
USAGE = "[--xlpe] OUTDIR"
# where a killed run can have left a temporary file
FOLDERS = ("", "corpus", "bpe", "data-bin", "data-bin-xlpe")
# the file of train's XL PE positions by XLPE_TRAIN_POSITIONS
TRAIN_POSITIONS = {"oracle": "train.btg.reorder", "predicted": "train.pred.reorder",
                   "mixed": "train.mixed.reorder"}


def parse_arguments(argv, prog, environ):
    """(OUTDIR, settings): the options and the environment, every value checked in the
    order the shell recipe checked them, a bad one one line and status 2."""
    xlpe, operands, index = environ.get("XLPE") or "0", [], 0
    while index < len(argv):
        word = argv[index]
        index += 1
        if word == "--xlpe":
            xlpe = "1"
        elif word in ("-h", "--help"):
            argparse.ArgumentParser(prog=prog, usage=f"%(prog)s {USAGE}", description=__doc__,
                                    formatter_class=ScriptHelpFormatter,
                                    add_help=False).print_help()
            raise SystemExit(0)
        elif word == "--":
            operands += argv[index:]
            break
        elif word.startswith("-"):
            raise Refused(f"unknown option {word} (see {prog} --help)", 2)
        else:
            operands.append(word)
    if len(operands) != 1 or not operands[0]:
        raise Refused(f"usage: {prog} {USAGE}", 2)
    s = {name: environ.get(name) or default for name, default in (
        ("XLPE_TRAIN_POSITIONS", "oracle"), ("PREORDER_EPOCHS", "3"), ("PREORDER_THREADS", "2"),
        ("ALIGN_SEED", "1"), ("WORKERS", str(default_workers())), ("MERGES", "8000"),
        ("PREORDER_FOLDS", "2"))}
    check_train_positions(s["XLPE_TRAIN_POSITIONS"])
    s["XLPE"] = one_of(("0", "1"))(xlpe, "XLPE")
    # (PREORDER_THREADS' default of 2, which the README's numbers were measured with, runs on
    # one core too)
    for name, minimum, maximum in (
            ("WORKERS", 1, default_workers()), ("MERGES", 1, None), ("PREORDER_EPOCHS", 1, None),
            ("PREORDER_THREADS", 1, max(default_workers(), 2)), ("ALIGN_SEED", 0, 4294967295),
            ("PREORDER_FOLDS", 2, None)):
        s[name] = whole(minimum, maximum)(s[name], name)
    out = operands[0]
    # a folder named like an option (after --) is passed on as a path, not as an option
    return out if not out.startswith("-") else os.path.join(".", out), s


def prepare(argv, prog):
    name = os.path.basename(prog)
    out, s = parse_arguments(argv, prog, os.environ)
    check_folder_name(out, "the corpus (OUTDIR)")
    claim_folder(out, "write", "the corpus (OUTDIR)", name)
    remove_stale_temporaries_of(out, FOLDERS)
    steps = Steps(name, os.environ.get("XLPE_STAGE_LOG") or None)
    corpus, bpe, bin_dir = (os.path.join(out, folder) for folder in ("corpus", "bpe", "data-bin"))
    for folder in (corpus, bpe, bin_dir):
        os.makedirs(folder, exist_ok=True)
    get_corpus(steps, corpus)
    # joint BPE codes learned on the training text of both sides, applied to every split
    pipeline.learn_and_apply_bpe(steps, s, corpus, bpe, SRC, TGT)
    align(steps, s, bpe)
    # DPE reorder positions: train's supervise the order loss; valid's measure it on held-out
    # text. Test needs none (DPE takes no side input).
    for split in ("train", "valid"):
        pipeline.reorder(steps, s, bpe, "dpe", split, SRC, TGT,
                         os.path.join(bpe, f"{split}.reorder"))
    # separate dictionaries: Hebrew and English share no symbols, so a joined dictionary
    # would only enlarge both embedding tables and the output softmax
    pipeline.preprocess(steps, s, bpe, bin_dir, SRC, TGT)
    pipeline.binarize_reorder(steps, [
        (bin_dir, split, os.path.join(bpe, f"{split}.reorder"),
         os.path.join(bpe, f"{split}.{SRC}"),
         [os.path.join(bpe, f"{split}.reorder"), os.path.join(bpe, f"{split}.{SRC}")],
         f"binarize {split}.reorder", f"{split}.reorder") for split in ("train", "valid")],
        SRC, TGT, "binarize {}")
    steps.say(f"== done: {bin_dir} (gold word alignments: {corpus}/{{valid,test}}.gold.align)")
    if s["XLPE"] == "1":
        prepare_xlpe(steps, s, out)


def get_corpus(steps, corpus):
    """xlpe-bible-corpus into CORPUS: already tokenized on both sides (Hebrew morphemes, BSB
    words and punctuation), and the gold alignments index exactly these tokens, so there is
    no tokenization step."""
    files = [os.path.join(corpus, f"{split}.{name}") for split in SPLITS
             for name in (SRC, TGT, "ids")]
    files += [os.path.join(corpus, f"{split}.gold.align") for split in ("valid", "test")]
    if steps.fresh(files, []):
        steps.skipped("corpus")
        return
    steps.timed("corpus", ["xlpe-bible-corpus", "--out", corpus])
    steps.made(files[0])


def align(steps, s, bpe):
    """Word alignment over BPE tokens (eflomal, grow-diag-final-and, seeded). DPE needs
    train, and valid for its order loss on held-out text (the learning diagnostics of the
    criterion). XL PE also needs a BTG oracle for test (the preorderer's score). eflomal
    estimates its lexical statistics from the corpus it is given, so the 1000-pair test set
    aligned on its own aligns worse (AER against the gold links .58, against .49 aligned with
    train and valid): the splits that need links are aligned in one run. Switching XL PE on
    over a default preparation realigns train too (and so redoes the DPE positions)."""
    splits = SPLITS if s["XLPE"] == "1" else ("train", "valid")
    name = f"align {' '.join(splits)}"
    pipeline.align(steps, s, bpe, SRC, TGT, splits, name, name,
                   ["--seed", s["ALIGN_SEED"], "--verbose"])


def prepare_xlpe(steps, s, out):
    """XL PE. Training takes pos_XL from a BTG tree consistent with the alignment; valid and
    test, as any new source text, from the source-only preorderer trained on those trees."""
    bpe, xbin = os.path.join(out, "bpe"), os.path.join(out, "data-bin-xlpe")
    for split in SPLITS:
        pipeline.reorder(steps, s, bpe, "btg", split, SRC, TGT)
    data = [os.path.join(bpe, name) for name in (f"train.{SRC}", "train.btg.reorder",
                                                 f"valid.{SRC}", "valid.btg.reorder")]
    preorderer = os.path.join(out, "preorderer.pt")
    training = ["--epochs", s["PREORDER_EPOCHS"], "--threads", s["PREORDER_THREADS"]]
    # torch's thread count changes its sums' order, so a model trained on other threads is
    # another model
    settings = os.path.join(out, "preorderer.settings")
    steps.stamp(settings, f"epochs={s['PREORDER_EPOCHS']} threads={s['PREORDER_THREADS']}")
    if steps.fresh([preorderer], [*data, settings]):
        steps.skipped("train preorderer")
    else:
        # xlpe-preorder-train writes its checkpoint atomically, and the record of what it was
        # made from follows it: an interrupted run leaves nothing a rerun takes as finished
        steps.timed(f"train preorderer ({s['PREORDER_EPOCHS']} epochs)", [
            "xlpe-preorder-train", "--source", data[0], "--reorder", data[1], "--valid-source",
            data[2], "--valid-reorder", data[3], *training, "--save", preorderer])
        steps.made(preorderer)
    # predicted positions are BTG-consistent (xlpe-preorder always searches BTG trees), the
    # shape of the oracle ones the translation model trains on, as the BTG parser of Ding et
    # al. gives
    for split in ("valid", "test"):
        dest = os.path.join(bpe, f"{split}.pred.reorder")
        source = os.path.join(bpe, f"{split}.{SRC}")
        if steps.fresh([dest], [preorderer, source]):
            steps.skipped(f"predict {split} positions")
            continue
        steps.timed(f"predict {split} positions", [
            "xlpe-preorder", "--preorderer", preorderer, "--source", source, "--output", dest],
            env={**os.environ, "OMP_NUM_THREADS": s["PREORDER_THREADS"]})
        steps.made(dest)
    # train positions as at test time: each fold predicted by a preorderer trained on the others
    if s["XLPE_TRAIN_POSITIONS"] != "oracle":
        cross_fit(steps, s, bpe, SRC, data, training)
    score = os.path.join(out, "preorderer.test-score.txt")
    hypothesis, reference = (os.path.join(bpe, f"test.{kind}.reorder") for kind in ("pred", "btg"))
    report(steps, score, "score preorderer", f"preorderer on test vs the BTG oracle ({score})",
           [hypothesis, reference],
           ["xlpe-reorder-score", "--hypothesis", hypothesis, "--reference", reference],
           shown_when_skipped=True)
    # fairseq's dictionaries and binarized text are those of data-bin
    pipeline.link_files([f"dict.{lang}.txt" for lang in (SRC, TGT)] + [
        f"{split}.{SRC}-{TGT}.{lang}.{ext}" for split in SPLITS for lang in (SRC, TGT)
        for ext in ("bin", "idx")], os.path.join(out, "data-bin"), xbin)
    # rewritten only when XLPE_TRAIN_POSITIONS changes, so that switching it rebinarizes train
    # although neither positions file changed
    stamp = os.path.join(xbin, "train.reorder.positions")
    steps.stamp(stamp, s["XLPE_TRAIN_POSITIONS"])
    jobs = []
    for split in SPLITS:
        positions = os.path.join(bpe, f"{split}.pred.reorder")
        inputs = []
        if split == "train":
            positions = os.path.join(bpe, TRAIN_POSITIONS[s["XLPE_TRAIN_POSITIONS"]])
            inputs = [stamp]
        source = os.path.join(bpe, f"{split}.{SRC}")
        jobs.append((xbin, split, positions, source, [*inputs, positions, source],
                     f"binarize {split}.reorder (xlpe)",
                     f"{split}.reorder from {os.path.basename(positions)}"))
    pipeline.binarize_reorder(steps, jobs, SRC, TGT, "binarize (xlpe) {}")
    steps.say(f"== done: {xbin} (train pos_XL: {s['XLPE_TRAIN_POSITIONS']}; valid/test: "
              "preorderer)")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    prog, argv = wrapper_name(argv, "prepare-bible-he-en.sh")
    run_command(lambda: prepare(argv, prog), os.path.basename(prog))
    return 0


if __name__ == "__main__":
    sys.exit(main())
