"""Your own parallel corpus, from raw text to the data-bins of every model family
(xlpe-prepare; data_prep/prepare-corpus.sh runs it).

  xlpe-prepare --src SRC --tgt TGT [options] RAW_DIR OUT

RAW_DIR holds untokenized text, one sentence a line, line i of one language the translation
of line i of the other: train.SRC and train.TGT, and valid.* and test.* if you have them.
A missing valid or test split is held out of train at random (seed 1; each min(1000, 5%)
of the pairs), written with the rest of train to OUT/raw. Any language pair works:
Moses rules tokenize every language, zh is segmented with jieba and ja with MeCab
(pip install 'xlpe-fairseq[zh]' / '[ja]'); languages written without spaces other than these
two are not segmented. OUT receives (docs/pipeline.md has the details)
  data-bin/text   transformer, re-encoder, re-decoder, re-both
  data-bin/dpe    dpe: DPE target positions of train and valid from the word alignment
  data-bin/xlpe   xlpe-*: BTG oracle positions for train, the preorderer's for valid/test
  bpe/codes, preorderer.pt, recipe.env: what xlpe-translate --corpus OUT and
                  xlpe-evaluate read; reference/: the references xlpe-evaluate scores
  provenance.json what OUT was made from (written last; checked by xlpe-train, xlpe-evaluate
                  and xlpe-translate). OUT may not be empty, /, a system folder or a file,
                  nor have a line break in its name, and one run at a time writes it
                  (docs/input-rules.md, "Provenance")
Next: xlpe-train MODEL OUT/data-bin CHECKPOINTS, xlpe-evaluate OUT CHECKPOINTS
--model MODEL, and xlpe-translate --corpus OUT --checkpoint ... for new text.

Options (in any order, before or after the operands; after --, operands only):
  --merges N            joint BPE merges (default by the training pairs P left after the
                        split: 5000 under 20k, 10000 under 200k as fairseq's IWSLT'14,
                        20000 under 1M, else 32000 as the WMT setups)
  --max-len N           train pairs with more tokens a side are dropped (default:
                        175 under 1M pairs as fairseq's IWSLT'14, else 250 as its WMT'14)
  --max-ratio R         train pairs whose length ratio (target tokens per source token)
                        is more than R times off the typical ratio, either way, are dropped
                        (default 1.5; under the corpus rule a short pair gets 5 tokens of
                        slack a side)
  --ratio-rule RULE     corpus (default): the typical ratio is the corpus's own, measured
                        first (MeCab gives Japanese ~1.4 times English's tokens); fixed: 1,
                        Moses' clean-corpus-n as fairseq's scripts run it. The run says how
                        many pairs it kept and warns when over 5% go (docs/pipeline.md)
  --lowercase           lowercase both sides (evaluation then scores lowercased text)
  --tokenized L[,L]     the languages whose raw text is already tokenized (e.g. he,en
                        of the Bible corpus): only its spaces are normalized (and
                        --lowercase applied), as xlpe-tokenize --no-tokenize does; a
                        tokenized target's references are detokenized before scoring,
                        and xlpe-translate takes a tokenized source's input as tokenized
  --joined-dictionary   one dictionary for both sides (scripts that share most symbols);
                        xlpe-train then shares all embeddings
  --models M[,M...]     the models OUT is for (xlpe-train's names; default: all).
                        Without an XL PE model (xlpe, xlpe-*, encoder-free-inxl) no
                        preorderer is trained: data-bin/xlpe then holds train positions
                        only, and training or evaluating XL PE from OUT is refused
  --workers N           processes (default and most: all cores)
  -h, --help            this text
The preorderer (XL PE's test positions) follows the corpus: an ensemble of PREORDER_SEEDS=4
structured-loss models (3 from 35,000 to 50,000 pairs), PREORDER_EPOCHS=9,
PREORDER_BATCH_TOKENS=2000, PREORDER_MAX_LENGTH=150, trained as one-thread processes side
by side (PREORDER_THREADS=1, PREORDER_JOBS=the cores); above 50,000 training pairs the same
four members on one seeded sample of PREORDER_SAMPLE=35000 pairs, so 3 to 13 minutes on 2
fast CPU cores (up to three times that on slow ones) at any size (docs/preorderer.md). Each
of them, and the other environment settings (xlpe_fairseq/workflow/pipeline.py), can be
set:
PREORDER_SECONDS=3600 (a cap), PREORDER_DEVICE=cpu (or cuda), PREORDER_LOSS (pairwise,
structured or both), XLPE_TRAIN_POSITIONS=oracle (or predicted, mixed), PREORDER_FOLDS=2.
An option wins over its variable (MERGES, MAX_LEN, MAX_RATIO, RATIO_RULE, LOWERCASE,
TOKENIZED, JOINED_DICT, WORKERS). Every value is checked before any work starts.
A rerun into the same OUT skips each step whose inputs and settings are those its outputs
were made from (by content, whatever the files' times) and redoes the others.
At the end, the advice line names the model to train beside the baseline, with the command:
xlpe-inxl where the preorderer's test positions close 10% or more of the way from the source
order to the alignment's, re-both where they do not (docs/preorderer.md); without a
preorderer it says that it cannot judge XL PE.
Every step runs in this command's process (the aligner and fairseq-preprocess as children
ended with it); Ctrl-C or SIGTERM leaves no temporary file, and one a killed run left is
removed by the next.
"""
import argparse
import os
import re
import sys

from ..data.positions_note import NO_PREORDERER
from ..io import check_text, count_lines, default_workers, require_files, run_command
from ..io.children import program
from ..io.locks import claim_folder
from ..io.outputs import atomic_output
from ..preordering.advice import advice, read_score_file, recipe_folder
from ..preprocessing.check_raw import check_bpe, check_raw, check_train
from ..preprocessing.split_corpus import split_and_report
from ..preprocessing.word_alignment import find_tool
from . import pipeline
from .preorderer_steps import PREORDERER_TIME, preorder
from .prepare_settings import (
    language,
    models,
    preorderer_defaults,
    ratio,
    settings_of,
    wants_preorderer,
)
from .script_options import (
    Refused,
    ScriptHelpFormatter,
    check_folder_name,
    one_of,
    whole,
    wrapper_name,
)
from .steps import Steps, remove, remove_stale_temporaries_of

USAGE = ("--src SRC --tgt TGT [--merges N] [--max-len N] [--max-ratio R] "
         "[--ratio-rule corpus|fixed] [--lowercase] [--tokenized L[,L]] [--joined-dictionary] "
         "[--models M[,M...]] [--workers N] RAW_DIR OUT")
VALUE_OPTIONS = ("--src", "--tgt", "--merges", "--max-len", "--max-ratio", "--ratio-rule",
                 "--tokenized", "--models", "--workers")
UNSEGMENTED = ("th", "lo", "km", "my", "bo")


def help_parser(prog):
    """The help as argparse prints it (every command's --help is argparse's); the options are
    listed in the description, and read by ``parse_arguments``."""
    return argparse.ArgumentParser(prog=prog, usage=f"%(prog)s {USAGE}", description=__doc__,
                                   formatter_class=ScriptHelpFormatter, add_help=False)


def parse_arguments(argv, prog):
    """The options as the shell entry points read them: each value checked as it is read (an
    empty one too), a bad one one line and status 2. Returns (options, operands)."""
    options, operands, index = {}, [], 0
    while index < len(argv):
        word = argv[index]
        if word in VALUE_OPTIONS:
            if index + 1 >= len(argv):
                raise Refused(f"{word} needs a value", 2)
            value = argv[index + 1]
            if word in ("--src", "--tgt"):
                options[word[2:].upper()] = language(word, value)
            elif word == "--merges":
                options["MERGES"] = whole(1)(value, word)
            elif word == "--max-len":
                options["MAX_LEN"] = whole(1)(value, word)
            elif word == "--max-ratio":
                options["MAX_RATIO"] = ratio(word, value)
            elif word == "--ratio-rule":
                options["RATIO_RULE"] = one_of(("corpus", "fixed"))(value, word)
            elif word == "--models":
                options["MODELS"] = models(word, value)
            elif word == "--tokenized":
                options["TOKENIZED"] = value
            else:
                options["WORKERS"] = whole(1, default_workers())(value, word)
            index += 2
        elif word == "--lowercase":
            options["LOWERCASE"], index = "1", index + 1
        elif word == "--joined-dictionary":
            options["JOINED_DICT"], index = "1", index + 1
        elif word in ("-h", "--help"):
            help_parser(prog).print_help()
            raise SystemExit(0)
        elif word == "--":
            operands += argv[index + 1:]
            break
        elif word.startswith("-"):
            raise Refused(f"unknown option {word} (--help lists them)", 2)
        else:
            operands.append(word)
            index += 1
    if len(operands) != 2:
        raise Refused(f"usage: {prog} {USAGE}", 2)
    if not options.get("SRC") or not options.get("TGT"):
        raise Refused("--src and --tgt are required", 2)
    if options["SRC"] == options["TGT"]:
        raise Refused(f"--src and --tgt are both '{options['SRC']}'", 2)
    return options, operands


def need_files(paths):
    """Each of ``paths`` a file with something in it (a directory, FIFO or device named as
    what it is)."""
    require_files(paths)
    for path in paths:
        if os.path.getsize(path) == 0:
            raise Refused(f"{path}: empty (expected one sentence a line)", 1)


def same_count_lines(first, second):
    counts = count_lines(first), count_lines(second)
    if counts[0] != counts[1]:
        raise Refused(f"{first} has {counts[0]} lines, {second} has {counts[1]}: the sides of a "
                      "parallel corpus need one line per sentence pair", 1)


def check_name(path, what):
    """A line break in a folder's name is refused: fairseq's outputs and every message are
    read line by line."""
    if "\n" in path or "\r" in path:
        raise Refused(f"{path!r}: {what} has a line break in its name, which messages and "
                      "fairseq's outputs cannot carry: rename it", 1)


def check_inputs(raw_dir, src, tgt):
    """Every raw file the run reads, before anything is written: train there, each split
    there complete and parallel, every line under the line rule (UTF-8, line ends), a word
    in train, the user's valid and test lines each with a word and no longer than the aligner
    takes. Returns the splits to hold out of train."""
    given = {lang: os.path.join(raw_dir, f"train.{lang}") for lang in (src, tgt)}
    if not any(os.path.lexists(path) for path in given.values()):
        raise Refused(f"{given[src]} and {given[tgt]}: no such files (raw text, one sentence a "
                      "line)", 1)
    held_out, present = [], []
    for split in pipeline.SPLITS:
        pair = [os.path.join(raw_dir, f"{split}.{lang}") for lang in (src, tgt)]
        if split != "train" and not any(os.path.lexists(path) for path in pair):
            held_out.append(split)
            continue
        need_files(pair)
        # a line end the rule refuses (a lone \r) named as such, before the lines are counted
        check_text(pair)
        same_count_lines(*pair)
        present.append(split)
    check_train(list(given.values()))
    check_raw([os.path.realpath(os.path.join(raw_dir, f"{split}.{lang}"))
               for split in present if split != "train" for lang in (src, tgt)])
    return held_out


def check_programs():
    """The programs of the steps, found before anything is written (not after the first
    steps): the aligner, and fairseq's binarizer."""
    find_tool("eflomal-align")
    program("fairseq-preprocess")


def prepare(argv, prog):
    name = os.path.basename(prog)
    options, (raw_dir, out) = parse_arguments(argv, prog)
    s = settings_of(options, os.environ)
    src, tgt = s["SRC"], s["TGT"]
    check_name(raw_dir, "RAW_DIR")
    # the rule of every command that hands OUT to fairseq (xlpe-train, xlpe-evaluate)
    check_folder_name(out, "the corpus (OUT)")
    if not os.path.isdir(raw_dir):
        raise Refused(f"{raw_dir}: no such folder", 1)
    # a folder named like an option (after --) is passed on as ./-NAME, which no command parses
    raw_dir = raw_dir if not raw_dir.startswith("-") else os.path.join(".", raw_dir)
    raw_abs = os.path.realpath(raw_dir)
    for lang in (src, tgt):
        if lang in UNSEGMENTED:
            print(f"{name}: warning: {lang} is written without spaces and no segmenter is wired "
                  f"in for it: its 'words' will be whole phrases", file=sys.stderr)
    held_out = check_inputs(raw_dir, src, tgt)
    check_programs()
    out = out if not out.startswith("-") else os.path.join(".", out)
    if held_out and os.path.realpath(os.path.join(out, "raw")) == raw_abs:
        raise Refused(f"{raw_dir} is where the held-out splits go: keep the raw files "
                      "elsewhere", 1)

    # everything read is checked: a folder of the user's own, and no other run in it
    claim_folder(out, "write", "the corpus (OUT)", name)
    remove_stale_temporaries_of(out, pipeline.OUT_FOLDERS)
    steps = Steps(name, os.environ.get("XLPE_STAGE_LOG") or None)
    given = {lang: os.path.join(raw_dir, f"train.{lang}") for lang in (src, tgt)}
    raw = raw_abs
    if held_out:
        raw = os.path.join(out, "raw")
        os.makedirs(raw, exist_ok=True)
        outputs = [os.path.join(raw, f"{split}.{lang}") for split in ("train", *held_out)
                   for lang in (src, tgt)]
        if steps.fresh(outputs, [given[src], given[tgt]], [f"held_out={' '.join(held_out)}"]):
            steps.skipped(f"hold out {' '.join(held_out)}")
        else:
            steps.timed(f"hold out {' '.join(held_out)} (seed 1)", split_and_report, given[src],
                        given[tgt], raw, held_out)
            steps.made(outputs[0])
        for split in pipeline.SPLITS:
            if split != "train" and split not in held_out:
                for lang in (src, tgt):
                    link = os.path.join(raw, f"{split}.{lang}")
                    if os.path.lexists(link):
                        os.unlink(link)
                    os.symlink(os.path.join(raw_abs, f"{split}.{lang}"), link)

    # size-dependent defaults, from the training pairs before the length filter
    pairs = count_lines(os.path.join(raw, f"train.{src}"))
    if "MERGES" not in s:
        s["MERGES"] = ("5000" if pairs < 20000 else "10000" if pairs < 200000
                       else "20000" if pairs < 1000000 else "32000")
    s.setdefault("MAX_LEN", "175" if pairs < 1000000 else "250")
    print(f"{name}: {src}-{tgt}, {pairs} training pairs: {s['MERGES']} BPE merges, at most "
          f"{s['MAX_LEN']} tokens a side", file=sys.stderr)
    prepare_corpus(steps, s, raw, out, src, tgt, raw_abs, [prog, *argv])


def prepare_corpus(steps, s, raw, out, src, tgt, given, command):
    """Every step, from RAW's {train,valid,test}.{SRC,TGT} to OUT's data-bins and record."""
    preordered = wants_preorderer(s["MODELS"])
    bpe = os.path.join(out, "bpe")
    for folder in ("tok", "bpe", os.path.join("data-bin", "text")):
        os.makedirs(os.path.join(out, folder), exist_ok=True)
    for split in pipeline.SPLITS:
        for lang in (src, tgt):
            pipeline.tokenize(steps, s, raw, out, split, lang)
    pipeline.clean_train(steps, s, out, src, tgt)
    summary = preorderer_defaults(s, count_lines(os.path.join(out, "tok", f"train.{src}")))
    if preordered:
        steps.say(summary)
    pipeline.learn_and_apply_bpe(steps, s, os.path.join(out, "tok"), bpe, src, tgt)
    # BPE can split a line that fitted into more pieces than the aligner takes
    check_bpe([(os.path.join(bpe, f"{split}.{lang}"),
                os.path.realpath(os.path.join(raw, f"{split}.{lang}")))
               for split in ("valid", "test") for lang in (src, tgt)])
    pipeline.align_all(steps, s, out, src, tgt)
    pipeline.reorder(steps, s, bpe, "dpe", "train", src, tgt)
    pipeline.reorder(steps, s, bpe, "dpe", "valid", src, tgt)
    for split in pipeline.SPLITS:
        pipeline.reorder(steps, s, bpe, "btg", split, src, tgt)
    if preordered:
        steps.say(f"the preorderer (XL PE's test positions): expected to take "
                  f"{PREORDERER_TIME} at its defaults; a run for other models can "
                  "skip it with --models (e.g. --models transformer,dpe,re-both)")
        preorder(steps, s, out, src)
    else:
        steps.say("the preorderer: not trained (--models names no XL PE model); data-bin/xlpe "
                  "holds train positions only, and XL PE cannot be trained or evaluated from "
                  "OUT")
    mark_preorderer(out, preordered)
    pipeline.binarize_text(steps, s, out, src, tgt)
    pipeline.link_text_bin(out, src, tgt, "dpe")
    pipeline.link_text_bin(out, src, tgt, "xlpe")
    train_positions = {"oracle": "train.btg.reorder", "predicted": "train.pred.reorder",
                       "mixed": "train.mixed.reorder"}[s["XLPE_TRAIN_POSITIONS"]]
    jobs = [("dpe", "train", os.path.join(bpe, "train.dpe.reorder")),
            ("dpe", "valid", os.path.join(bpe, "valid.dpe.reorder"))]
    if preordered or s["XLPE_TRAIN_POSITIONS"] == "oracle":
        jobs.append(("xlpe", "train", os.path.join(bpe, train_positions)))
    if preordered:
        jobs += [("xlpe", split, os.path.join(bpe, f"{split}.pred.reorder"))
                 for split in ("valid", "test")]
    pipeline.binarize_positions(steps, out, src, tgt, jobs)
    pipeline.record_corpus(steps, s, raw, out, src, tgt, given, command)
    steps.say(f"== done: {out}/data-bin/{{text,dpe,xlpe}}")
    if preordered:
        score = os.path.join(out, "preorderer.test.score")
        steps.say(advice(read_score_file(score), recipe_folder(score)))
    else:
        steps.say("advice: cannot judge XL PE without the preorderer (OUT was prepared with "
                  f"--models {s['MODELS']}): rerun with an XL PE model among --models (or "
                  "without --models) to have it; re-both needs no preorderer (docs/preorderer.md)")


def mark_preorderer(out, preordered):
    """data-bin/xlpe as this run leaves it: without the preorderer, its valid and test
    positions of an earlier run removed (the record would not cover them) and a note that
    the task and xlpe-evaluate read to refuse XL PE in one line; with it, no note."""
    xlpe = os.path.join(out, "data-bin", "xlpe")
    os.makedirs(xlpe, exist_ok=True)
    note = os.path.join(xlpe, NO_PREORDERER)
    if preordered:
        remove(note)
        return
    for name in os.listdir(xlpe):
        if re.fullmatch(r"(valid|test)\.reorder\..*\.(bin|idx)", name):
            remove(os.path.join(xlpe, name))
    with atomic_output(note) as stream:
        stream.write("it was prepared without the preorderer (xlpe-prepare --models named no "
                     "XL PE model): rerun xlpe-prepare into the same OUT without --models (or "
                     "with an XL PE model among them) to train it\n")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    prog, argv = wrapper_name(argv, "xlpe-prepare")
    run_command(lambda: prepare(argv, prog), os.path.basename(prog))
    return 0


if __name__ == "__main__":
    sys.exit(main())
