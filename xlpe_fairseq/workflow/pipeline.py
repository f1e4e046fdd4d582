"""The corpus steps of data preparation, from raw parallel text to the data-bins of every
model family (xlpe-prepare runs them, for data_prep/prepare-corpus.sh, every dataset recipe
and the demo's corpus): tokenize (or, for a side tokenized already, normalize spaces), length
filter, BPE, align, DPE and BTG positions, fairseq-preprocess, positions binarized, and the
record of what OUT was made from; the preorderer's steps are preorderer_steps.py's, and
steps.py runs them all (each skipped when made from the same inputs and settings, timed).
Each step is the work of its xlpe-* command, called as a function in this process: only the
aligner (eflomal) and fairseq-preprocess run as programs of their own. xlpe-prepare's OUT
receives
  tok/        tokenized text (train length-filtered as in fairseq's prepare scripts)
  bpe/        BPE text, codes, word alignments, reorder files:
              {train,valid}.dpe.reorder (DPE target), {split}.btg.reorder (BTG oracle),
              {valid,test}.pred.reorder (preorderer predictions from the source alone)
  preorderer.pt, preorderer.test.score (predicted vs oracle BTG order on test; the last
              line of the run says what it means for XL PE),
  preorderer.ceiling (xlpe-reorder-ceiling on train: how much a source-only model can predict)
  data-bin/text  fairseq-preprocess output (baseline Transformer, Reordering Embeddings)
  data-bin/dpe   text + train and valid positions from the DPE rules (transformer_dpe; the
                 validation loss then has the order loss too, as the training loss)
  data-bin/xlpe  text + train positions chosen by XLPE_TRAIN_POSITIONS, preorderer
                 positions for valid/test (transformer_xlpe; the test positions are what a
                 deployed model gets); train positions only without the preorderer
  reference/  {valid,test}.TGT as prepared: what xlpe-evaluate scores against
  recipe.env  SRC, TGT, LOWERCASE, RAW, TOKENIZATION (reversible: tokens that record the
              text's spacing), TOKENIZED where set, for xlpe-evaluate and xlpe-translate
  provenance.json  what OUT was made from, written last, verified by xlpe-train, xlpe-evaluate
              and xlpe-translate --corpus

The settings (``s``, from xlpe-prepare's options and the environment): WORKERS, MERGES,
LOWERCASE, TOKENIZED (the languages whose raw text is tokenized already), MAX_LEN,
RATIO_RULE and MAX_RATIO (the length filter), JOINED_DICT;
PREORDER_SECONDS (a safety cap, checked after each epoch), PREORDER_DEVICE, PREORDER_THREADS
(xlpe-preorder-train's --threads), PREORDER_JOBS (members trained side by side, each a
process of its own: threads of one process stall beside other work on the same cores,
processes do not); PREORDER_LOSS, PREORDER_SEEDS (N > 1: preorderer.seedK.pt combined as
xlpe-preorder-ensemble combines them into preorderer.pt), PREORDER_EPOCHS, PREORDER_BATCH_TOKENS,
PREORDER_MAX_LENGTH and PREORDER_SAMPLE, by the corpus's size unless set
(xlpe_fairseq/workflow/prepare.py's preorderer_defaults); XLPE_TRAIN_POSITIONS: oracle
(BTG positions from the alignment), predicted (the preorderer's, cross-fitted over
PREORDER_FOLDS folds as xlpe-preorder-crossfit does, so that train positions look like test
ones) or mixed (per sentence, oracle or cross-fitted at random, half each).
"""
import os
import shlex
import shutil

from ..io.outputs import atomic_output, open_output
from ..io.provenance import record_corpus as write_corpus_record
from ..preprocessing.binarize import binarize_and_report
from ..preprocessing.bpe import apply_bpe_file, learn_codes
from ..preprocessing.length_filter import filter_and_report
from ..preprocessing.tokenize import tokenize_file, warn_without_rules
from ..preprocessing.word_alignment import align_and_report
from ..reordering.extract import extract_and_report
from ..text.tokenization import TOKENIZATION
from .fairseq_report import launched
from .steps import remove, run_program

SPLITS = ("train", "valid", "test")
# OUT's folders, where a killed run can have left a temporary file
OUT_FOLDERS = ("", "raw", "tok", "bpe", "reference", os.path.join("data-bin", "text"),
               os.path.join("data-bin", "dpe"), os.path.join("data-bin", "xlpe"))


def tokenize(steps, s, raw, out, split, lang):
    """RAW/SPLIT.LANG tokenized into tok/; a side already tokenized (TOKENIZED) has its spaces
    normalized only."""
    dest = os.path.join(out, "tok", f"train.full.{lang}" if split == "train" else f"{split}.{lang}")
    source = os.path.join(raw, f"{split}.{lang}")
    tokenized = lang in s.get("TOKENIZED", "").split(",")
    tokenizer = "tokenizer=none" if tokenized else f"tokenizer={TOKENIZATION}"
    if steps.fresh([dest], [source], [f"lowercase={s['LOWERCASE']}", tokenizer]):
        steps.skipped(f"tokenize {split}.{lang}")
        return
    if not tokenized:
        warn_without_rules(lang)
    steps.timed(f"tokenize {split}.{lang}", tokenize_file, source, dest, lang,
                lowercase=s["LOWERCASE"] == "1", tokenize=not tokenized,
                workers=int(s["WORKERS"]))
    steps.made(dest)


def clean_train(steps, s, out, src, tgt):
    tok = os.path.join(out, "tok")
    ins = [os.path.join(tok, f"train.full.{lang}") for lang in (src, tgt)]
    outs = [os.path.join(tok, f"train.{lang}") for lang in (src, tgt)]
    rule, ratio = s["RATIO_RULE"], s["MAX_RATIO"]
    if steps.fresh(outs, ins, [f"max_len={s['MAX_LEN']}", f"ratio_rule={rule}",
                               f"max_ratio={ratio}"]):
        steps.skipped("clean train")
        return
    steps.timed(f"clean train (1..{s['MAX_LEN']} tokens, ratio within {ratio} of the {rule} "
                "ratio)", filter_and_report, *ins, *outs, int(s["MAX_LEN"]), float(ratio), rule,
                steps.prog)
    steps.made(outs[0])


def learn_and_apply_bpe(steps, s, text, bpe, src, tgt):
    """Joint BPE codes (MERGES) learned on TEXT/train.{SRC,TGT} into BPE/codes, applied to
    every split of TEXT."""
    codes = os.path.join(bpe, "codes")
    train = [os.path.join(text, f"train.{lang}") for lang in (src, tgt)]
    if steps.fresh([codes], train, [f"merges={s['MERGES']}"]):
        steps.skipped("learn BPE")
    else:
        steps.timed(f"learn BPE ({s['MERGES']} joint merges)", learn_codes, train, codes,
                    int(s["MERGES"]), workers=int(s["WORKERS"]))
        steps.made(codes)
    for split in SPLITS:
        for lang in (src, tgt):
            dest = os.path.join(bpe, f"{split}.{lang}")
            tokens = os.path.join(text, f"{split}.{lang}")
            if steps.fresh([dest], [codes, tokens]):
                steps.skipped(f"apply BPE {split}.{lang}")
                continue
            steps.timed(f"apply BPE {split}.{lang}", apply_bpe_file, codes, tokens, dest,
                        int(s["WORKERS"]))
            steps.made(dest)


def align(steps, s, bpe, src, tgt, splits, name, skip_name, options=None):
    """One aligner run over the pairs of every one of ``splits`` (BPE/SPLIT.{SRC,TGT}), its
    links cut back into BPE/SPLIT.align, so that every split gets the lexical statistics of
    all of them; ``options`` are align_and_report's (xlpe-align's) keywords."""
    ins = [os.path.join(bpe, f"{split}.{lang}") for split in splits for lang in (src, tgt)]
    aligns = [os.path.join(bpe, f"{split}.align") for split in splits]
    if steps.fresh(aligns, ins):
        steps.skipped(skip_name)
        return
    joined = {lang: os.path.join(bpe, f".all.{lang}.{os.getpid()}.tmp") for lang in (src, tgt)}
    alignment = os.path.join(bpe, f".all.align.{os.getpid()}.tmp")
    try:
        for lang, path in joined.items():
            # (a write that fails, a full disk, names the file)
            with open_output(path) as stream:
                for split in splits:
                    with open(os.path.join(bpe, f"{split}.{lang}"), "rb") as part:
                        shutil.copyfileobj(part, stream)
        steps.timed(name, align_and_report, joined[src], joined[tgt], alignment,
                    workers=int(s["WORKERS"]), **(options or {}))
        with open(alignment, "rb") as links:
            for split, dest in zip(splits, aligns):
                with open(os.path.join(bpe, f"{split}.{src}"), "rb") as stream:
                    count = sum(1 for _ in stream)
                with atomic_output(dest, "wb") as stream:
                    for _ in range(count):
                        stream.write(links.readline())
    finally:
        for path in (*joined.values(), alignment):
            remove(path)
    steps.made(aligns[0])


def align_all(steps, s, out, src, tgt):
    """train+valid+test aligned in one run. valid/test are aligned only for the oracle BTG
    order the preorderer is validated and scored against."""
    align(steps, s, os.path.join(out, "bpe"), src, tgt, SPLITS, "align train+valid+test",
          "align")


def reorder(steps, s, bpe, method, split, src, tgt, dest=None):
    """SPLIT's oracle positions (xlpe-reorder's METHOD) into ``dest`` (default
    BPE/SPLIT.METHOD.reorder)."""
    dest = dest or os.path.join(bpe, f"{split}.{method}.reorder")
    ins = [os.path.join(bpe, name) for name in (f"{split}.{src}", f"{split}.{tgt}",
                                                f"{split}.align")]
    if steps.fresh([dest], ins):
        steps.skipped(f"reorder {split} ({method})")
        return
    steps.timed(f"reorder {split} ({method})", extract_and_report, method, *ins, dest,
                int(s["WORKERS"]))
    steps.made(dest)


def preprocess(steps, s, bpe, bin_dir, src, tgt, settings=(), options=()):
    """fairseq-preprocess of BPE/{train,valid,test}.{SRC,TGT} into ``bin_dir``; ``settings``
    and ``options`` as those of ``Steps.fresh`` and fairseq-preprocess. fairseq's program runs
    as a child (``fairseq_report.launched``): importing fairseq_cli.preprocess sets up the
    logging of the whole process, and its workers are forked from the process that calls it,
    which by then has run the preorderer's torch threads (OpenMP's are not safe to fork)."""
    dictionaries = [os.path.join(bin_dir, f"dict.{lang}.txt") for lang in (src, tgt)]
    ins = [os.path.join(bpe, f"{split}.{lang}") for split in SPLITS for lang in (src, tgt)]
    if steps.fresh([*dictionaries, os.path.join(bin_dir, f"test.{src}-{tgt}.{tgt}.idx")], ins,
                   settings):
        steps.skipped("fairseq-preprocess")
        return
    # fairseq-preprocess refuses to overwrite its dictionaries
    for path in dictionaries:
        remove(path)
    steps.timed("fairseq-preprocess", run_program, launched([
        "fairseq-preprocess", "--source-lang", src, "--target-lang", tgt, "--trainpref",
        os.path.join(bpe, "train"), "--validpref", os.path.join(bpe, "valid"), "--testpref",
        os.path.join(bpe, "test"), "--destdir", bin_dir, "--workers", s["WORKERS"], *options]))
    steps.made(dictionaries[0])


def binarize_text(steps, s, out, src, tgt):
    """fairseq-preprocess into data-bin/text."""
    preprocess(steps, s, os.path.join(out, "bpe"), os.path.join(out, "data-bin", "text"), src,
               tgt, [f"joined_dictionary={s['JOINED_DICT']}"],
               ["--joined-dictionary"] if s["JOINED_DICT"] == "1" else [])


def link_files(names, source, bin_dir):
    """Each of ``names`` in ``bin_dir`` a link to the file of that name in ``source``, a
    sibling folder (relative links: OUT can be moved or copied whole)."""
    os.makedirs(bin_dir, exist_ok=True)
    for name in names:
        link = os.path.join(bin_dir, name)
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(os.path.join("..", os.path.basename(source), name), link)


def link_text_bin(out, src, tgt, variant):
    """data-bin/VARIANT with fairseq's text files linked from data-bin/text (one copy on
    disk); each variant adds its own positions."""
    text = os.path.join(out, "data-bin", "text")
    link_files([name for name in sorted(os.listdir(text))
                if (name.startswith("dict.") and name.endswith(".txt"))
                or (f".{src}-{tgt}." in name and name.endswith((".bin", ".idx")))],
               text, os.path.join(out, "data-bin", variant))


def binarize_reorder(steps, jobs, src, tgt, title):
    """Each stale one of ``jobs`` binarized (xlpe-binarize's work), in one step. A job is
    (destdir, split, positions, source, inputs, skipped, name): SPLIT's ``positions`` over the
    BPE text ``source`` into DESTDIR/SPLIT.reorder.SRC-TGT.{bin,idx}, made from ``inputs``;
    ``skipped`` the step's name when it is up to date, ``name`` its part of ``title``
    (formatted with the names run)."""
    stale, names = [], []
    for destdir, split, positions, source, inputs, skipped, name in jobs:
        dest = os.path.join(destdir, f"{split}.reorder.{src}-{tgt}")
        if steps.fresh([f"{dest}.bin", f"{dest}.idx"], inputs):
            steps.skipped(skipped)
            continue
        stale.append((positions, source, destdir, split, src, tgt))
        names.append(name)
    if stale:
        steps.timed(title.format(" ".join(names)), binarize_each, stale)
        for _, _, destdir, split, _, _ in stale:
            steps.made(os.path.join(destdir, f"{split}.reorder.{src}-{tgt}.bin"))


def binarize_each(jobs):
    """binarize_and_report for each ``(reorder, source, destdir, split, src, tgt)``."""
    for job in jobs:
        binarize_and_report(*job)


def binarize_positions(steps, out, src, tgt, jobs):
    """Each stale one of ``jobs``, (variant, split, reorder file), binarized."""
    binarize_reorder(steps, [
        (os.path.join(out, "data-bin", variant), split, positions,
         os.path.join(out, "bpe", f"{split}.{src}"),
         [positions, os.path.join(out, "bpe", f"{split}.{src}")],
         f"binarize {variant} {split} positions", f"{variant}/{split}")
        for variant, split, positions in jobs],
        src, tgt, "binarize positions ({})")


RECORDED_SETTINGS = (
    "MERGES", "MAX_LEN", "MAX_RATIO", "RATIO_RULE", "LOWERCASE", "TOKENIZED", "JOINED_DICT",
    "XLPE_TRAIN_POSITIONS", "PREORDER_LOSS", "PREORDER_SEEDS", "PREORDER_EPOCHS",
    "PREORDER_BATCH_TOKENS", "PREORDER_MAX_LENGTH", "PREORDER_SAMPLE", "PREORDER_THREADS",
    "PREORDER_FOLDS", "PREORDER_SECONDS", "PREORDER_DEVICE", "MODELS")


def record_corpus(steps, s, raw, out, src, tgt, given, command):
    """The last step: the references evaluation scores against, copied into OUT/reference (a
    lowercased corpus is scored against its lowercased tokenized text), recipe.env, and
    OUT/provenance.json, what OUT was made from. A run that fails earlier changes neither."""
    origin = os.path.join(out, "tok") if s["LOWERCASE"] == "1" else raw
    for split in ("valid", "test"):
        with open(os.path.join(origin, f"{split}.{tgt}"), "rb") as source, \
                atomic_output(os.path.join(out, "reference", f"{split}.{tgt}"), "wb") as dest:
            shutil.copyfileobj(source, dest)
    with atomic_output(os.path.join(out, "recipe.env")) as stream:
        stream.write(f"SRC={src}\nTGT={tgt}\nLOWERCASE={s['LOWERCASE']}\n"
                     f"RAW={shlex.quote(os.path.realpath(raw))}\nTOKENIZATION={TOKENIZATION}\n")
        if s.get("TOKENIZED"):
            stream.write(f"TOKENIZED={s['TOKENIZED']}\n")
    # MODELS only where it is not all, so that a default run's record is the shell form's
    settings = {name: s[name] for name in RECORDED_SETTINGS if s.get(name) and s[name] != "all"}
    # the user's folder too, where valid and test were held out of its train
    steps.measured("record provenance", write_corpus_record, out, raw, src, tgt, settings,
                   command, given if given and given != os.path.realpath(raw) else None)
