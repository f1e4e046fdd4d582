"""The steps of data preparation, from raw parallel text to the data-bins of every model
family (xlpe-prepare runs them, for data_prep/prepare-corpus.sh and every dataset recipe;
bible_recipe.py those it needs on the demo's corpus and layout): tokenize, length filter,
BPE, align, DPE and BTG positions, the preorderer, fairseq-preprocess, positions binarized,
and the record of what OUT was made from. xlpe-prepare's OUT receives
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
  recipe.env  SRC, TGT, LOWERCASE, RAW, for xlpe-evaluate
  provenance.json  what OUT was made from, written last, verified by xlpe-train, xlpe-evaluate
              and xlpe-translate --corpus

The settings (``s``, from xlpe-prepare's options and the environment): WORKERS, MERGES,
LOWERCASE, MAX_LEN, RATIO_RULE and MAX_RATIO (the length filter), JOINED_DICT;
PREORDER_SECONDS (a safety cap, checked after each epoch), PREORDER_DEVICE, PREORDER_THREADS
(xlpe-preorder-train's --threads), PREORDER_JOBS (members trained side by side, each its own
process: threads of one process stall beside other work on the same cores, processes do
not); PREORDER_LOSS, PREORDER_SEEDS (N > 1: preorderer.seedK.pt combined by
xlpe-preorder-ensemble into preorderer.pt), PREORDER_EPOCHS, PREORDER_BATCH_TOKENS,
PREORDER_MAX_LENGTH and PREORDER_SAMPLE, by the corpus's size unless set
(xlpe_fairseq/workflow/prepare.py's preorderer_defaults); XLPE_TRAIN_POSITIONS: oracle
(BTG positions from the alignment), predicted (the preorderer's, cross-fitted over
PREORDER_FOLDS folds with xlpe-preorder-crossfit, so that train positions look like test
ones) or mixed (per sentence, oracle or cross-fitted at random, half each).

Each step is skipped when its outputs were made from the present content of its inputs and
the same settings, by content, whatever the files' times: a hidden ``.NAME.made-from`` beside
a step's first output holds the digest of what it was made from (the record the shell form
kept, so that an OUT it prepared reruns skipping what is made). Each step runs as a child in
its own process group (no shell), ended with this command; with ``XLPE_STAGE_LOG`` naming a
file, each step's wall time, CPU time and peak memory are appended to it
(xlpe_fairseq/io/stage_usage.py).
"""
import hashlib
import os
import re
import shlex
import shutil
import sys
import time

from ..io.digests import file_digest
from ..io.outputs import _running, atomic_output
from .processes import end_process_group, run_child, start_child

SPLITS = ("train", "valid", "test")
# the preorderer's cost at its defaults (docs/preorderer.md, "Defaults by corpus size")
PREORDERER_TIME = "3 to 13 minutes on 2 fast CPU cores (up to three times that on slow ones)"


class StepFailed(SystemExit):
    """A step's command failed: it has said why; this command ends with its status."""


class Steps:
    """Runs the steps of one preparation: skipping, timing, logging, failing as one."""

    def __init__(self, prog, stage_log=None):
        self.prog = prog
        self.stage_log = stage_log
        self._pending = {}
        self._digests = {}

    def say(self, text):
        print(text, file=sys.stderr, flush=True)

    # freshness by content, as data_prep/lib.sh's fresh and made
    def fresh(self, outs, ins, settings=()):
        """Whether every one of ``outs`` exists and was made from the present content of
        ``ins`` and these ``settings`` (words such as "max_len=175")."""
        digest = "".join(f"{self._content_digest(path)} " for path in ins)
        text = "".join(f"{line}\n" for line in (digest, *settings))
        value = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
        record = made_from_file(outs[0])
        self._pending[record] = value
        if not all(os.path.exists(out) for out in outs):
            return False
        try:
            with open(record, encoding="utf-8") as stream:
                if stream.read().strip() == value:
                    return True
        except OSError:
            pass
        # outputs of other inputs: the step reruns, and a failure leaves no record of them
        remove(record)
        return False

    def made(self, out):
        """Record that the step whose first output is ``out`` has finished."""
        record = made_from_file(out)
        with atomic_output(record) as stream:
            stream.write(self._pending[record] + "\n")

    def _content_digest(self, path):
        try:
            stat = os.stat(path)
        except OSError:
            return "missing"
        key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, path)
        if key not in self._digests:
            self._digests[key] = file_digest(path)
        return self._digests[key]

    def skipped(self, name):
        self.say(f"== {name}: up to date, skipped")

    def timed(self, name, command, **streams):
        """Run a step's command, saying its name and then its wall time."""
        start = time.monotonic()
        self.say(f"== {name}")
        self.measured(name, command, **streams)
        self.say(f"== {name}: {time.monotonic() - start:.1f} s")

    def measured(self, name, command, **streams):
        """Run ``command``; a failure ends the run with its status."""
        status = run_child(self.logged(name, command), **streams)
        if status:
            raise StepFailed(status if status > 0 else 128 - status)

    def logged(self, name, command):
        """``command``, run through the stage log when XLPE_STAGE_LOG names one."""
        if not self.stage_log:
            return command
        return [sys.executable, "-m", "xlpe_fairseq.io.stage_usage", "--log", self.stage_log,
                "--name", name, "--", *command]

    def stamp(self, path, text):
        """``path`` holds ``text``, rewritten only when it changes: settings a step reads as
        an input file."""
        try:
            with open(path, encoding="utf-8") as stream:
                if stream.read() == text + "\n":
                    return
        except OSError:
            pass
        with atomic_output(path) as stream:
            stream.write(text + "\n")


# a temporary file of a step: .NAME.PID.SUFFIX (atomic_output's and align_all's)
TEMPORARY = re.compile(r"\..+\.([0-9]+)\.[A-Za-z0-9_]+")
OUT_FOLDERS = ("", "raw", "tok", "bpe", "reference", os.path.join("data-bin", "text"),
               os.path.join("data-bin", "dpe"), os.path.join("data-bin", "xlpe"))


def remove_stale_temporaries_of(out, folders=OUT_FOLDERS):
    """Remove the temporary files a run that was killed (SIGKILL) left in OUT's ``folders``:
    those of a process that no longer runs."""
    for folder in folders:
        try:
            entries = list(os.scandir(os.path.join(out, folder)))
        except OSError:
            continue
        for entry in entries:
            match = TEMPORARY.fullmatch(entry.name)
            pid = int(match.group(1)) if match else 0
            if 0 < pid < 2**31 and entry.is_file(follow_symlinks=False) and not _running(pid):
                remove(entry.path)


def made_from_file(out):
    directory, name = os.path.split(out)
    return os.path.join(directory, f".{name}.made-from")


def remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def module(name, *args):
    return [sys.executable, "-m", name, *args]


def tokenize(steps, s, raw, out, split, lang):
    dest = os.path.join(out, "tok", f"train.full.{lang}" if split == "train" else f"{split}.{lang}")
    source = os.path.join(raw, f"{split}.{lang}")
    if steps.fresh([dest], [source], [f"lowercase={s['LOWERCASE']}", "tokenizer=placeholders"]):
        steps.skipped(f"tokenize {split}.{lang}")
        return
    steps.timed(f"tokenize {split}.{lang}", [
        "xlpe-tokenize", "--lang", lang, *(["--lowercase"] if s["LOWERCASE"] == "1" else []),
        "--input", source, "--output", dest, "--workers", s["WORKERS"]])
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
                "ratio)", module(
                    "xlpe_fairseq.preprocessing.length_filter", "--source", ins[0], "--target",
                    ins[1], "--out-source", outs[0], "--out-target", outs[1], "--max-len",
                    s["MAX_LEN"], "--max-ratio", ratio, "--ratio-rule", rule, "--prog",
                    steps.prog))
    steps.made(outs[0])


def learn_and_apply_bpe(steps, s, text, bpe, src, tgt):
    """Joint BPE codes (MERGES) learned on TEXT/train.{SRC,TGT} into BPE/codes, applied to
    every split of TEXT."""
    codes = os.path.join(bpe, "codes")
    train = [os.path.join(text, f"train.{lang}") for lang in (src, tgt)]
    if steps.fresh([codes], train, [f"merges={s['MERGES']}"]):
        steps.skipped("learn BPE")
    else:
        steps.timed(f"learn BPE ({s['MERGES']} joint merges)", [
            "xlpe-bpe", "learn", "--merges", s["MERGES"], "--input", *train, "--codes", codes,
            "--workers", s["WORKERS"]])
        steps.made(codes)
    for split in SPLITS:
        for lang in (src, tgt):
            dest = os.path.join(bpe, f"{split}.{lang}")
            tokens = os.path.join(text, f"{split}.{lang}")
            if steps.fresh([dest], [codes, tokens]):
                steps.skipped(f"apply BPE {split}.{lang}")
                continue
            steps.timed(f"apply BPE {split}.{lang}", [
                "xlpe-bpe", "apply", "--codes", codes, "--input", tokens, "--output", dest,
                "--workers", s["WORKERS"]])
            steps.made(dest)


def align(steps, s, bpe, src, tgt, splits, name, skip_name, options=()):
    """One aligner run over the pairs of every one of ``splits`` (BPE/SPLIT.{SRC,TGT}), its
    links cut back into BPE/SPLIT.align, so that every split gets the lexical statistics of
    all of them; ``options`` go to xlpe-align."""
    ins = [os.path.join(bpe, f"{split}.{lang}") for split in splits for lang in (src, tgt)]
    aligns = [os.path.join(bpe, f"{split}.align") for split in splits]
    if steps.fresh(aligns, ins):
        steps.skipped(skip_name)
        return
    joined = {lang: os.path.join(bpe, f".all.{lang}.{os.getpid()}.tmp") for lang in (src, tgt)}
    alignment = os.path.join(bpe, f".all.align.{os.getpid()}.tmp")
    try:
        for lang, path in joined.items():
            with open(path, "wb") as stream:
                for split in splits:
                    with open(os.path.join(bpe, f"{split}.{lang}"), "rb") as part:
                        shutil.copyfileobj(part, stream)
        steps.timed(name, [
            "xlpe-align", "--source", joined[src], "--target", joined[tgt], "--output",
            alignment, "--workers", s["WORKERS"], *options])
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
    """SPLIT's oracle positions (xlpe-reorder --method METHOD) into ``dest`` (default
    BPE/SPLIT.METHOD.reorder)."""
    dest = dest or os.path.join(bpe, f"{split}.{method}.reorder")
    ins = [os.path.join(bpe, name) for name in (f"{split}.{src}", f"{split}.{tgt}",
                                                f"{split}.align")]
    if steps.fresh([dest], ins):
        steps.skipped(f"reorder {split} ({method})")
        return
    steps.timed(f"reorder {split} ({method})", [
        "xlpe-reorder", "--method", method, "--source", ins[0], "--target", ins[1],
        "--alignment", ins[2], "--output", dest, "--workers", s["WORKERS"]])
    steps.made(dest)


def preorderer_training(s):
    return ["--epochs", s["PREORDER_EPOCHS"], "--max-seconds", s["PREORDER_SECONDS"], "--loss",
            s["PREORDER_LOSS"], "--device", s["PREORDER_DEVICE"], "--batch-tokens",
            s["PREORDER_BATCH_TOKENS"], "--max-train-length", s["PREORDER_MAX_LENGTH"],
            "--threads", s["PREORDER_THREADS"]]


def preorder(steps, s, out, src):
    """Train the source-only preorderer on the BTG oracle, predict valid/test, score it."""
    bpe = os.path.join(out, "bpe")
    training, sampling = preorderer_training(s), s["PREORDER_SAMPLING"]
    settings = os.path.join(out, "preorderer.settings")
    # a member depends on its seed and these settings, not on how many members there are
    steps.stamp(settings, " ".join([*training, *sampling]))
    preorderer = os.path.join(out, "preorderer.pt")
    seeds = int(s["PREORDER_SEEDS"])
    data = [os.path.join(bpe, name) for name in (f"train.{src}", "train.btg.reorder",
                                                 f"valid.{src}", "valid.btg.reorder")]
    if seeds == 1:
        train_preorderers(steps, s, [(preorderer, 1)], data, settings)
    else:
        members = [os.path.join(out, f"preorderer.seed{seed}.pt") for seed in range(1, seeds + 1)]
        train_preorderers(steps, s, list(zip(members, range(1, seeds + 1))), data, settings)
        if steps.fresh([preorderer], [*members, data[2], data[3]]):
            steps.skipped("ensemble preorderers")
        else:
            steps.timed(f"ensemble {seeds} preorderers", [
                "xlpe-preorder-ensemble", "--preorderers", *members, "--valid-source", data[2],
                "--valid-reorder", data[3], "--device", s["PREORDER_DEVICE"], "--threads",
                s["PREORDER_THREADS"], "--save", preorderer])
            steps.made(preorderer)
    if s["XLPE_TRAIN_POSITIONS"] != "oracle":
        cross_fit(steps, s, bpe, src, data, training)
    calls, predicted = [], []
    for split in ("valid", "test"):
        dest = os.path.join(bpe, f"{split}.pred.reorder")
        if steps.fresh([dest], [preorderer, os.path.join(bpe, f"{split}.{src}")]):
            steps.skipped(f"preorder {split}")
            continue
        calls += [*(["--then"] if calls else []), "--preorderer", preorderer, "--source",
                  os.path.join(bpe, f"{split}.{src}"), "--output", dest]
        predicted.append(dest)
    if calls:
        # as many threads as training took: more stall beside other work on the cores
        steps.timed("preorder valid/test", module(
            "xlpe_fairseq.in_one_process", "xlpe_fairseq.preordering.predict", *calls),
            env={**os.environ, "OMP_NUM_THREADS": s["PREORDER_THREADS"]})
        for dest in predicted:
            steps.made(dest)
    report(steps, os.path.join(out, "preorderer.test.score"), "score preorderer",
           "preorderer on test", [os.path.join(bpe, "test.pred.reorder"),
                                  os.path.join(bpe, "test.btg.reorder")],
           ["xlpe-reorder-score", "--hypothesis", os.path.join(bpe, "test.pred.reorder"),
            "--reference", os.path.join(bpe, "test.btg.reorder")])
    report(steps, os.path.join(out, "preorderer.ceiling"), "preorderer ceiling",
           "the oracle of repeated train sources scored on each other", data[:2],
           ["xlpe-reorder-ceiling", "--source", data[0], "--reorder", data[1]])


def train_preorderers(steps, s, members, data, settings):
    """Each stale member (SAVE, SEED) trained, PREORDER_JOBS processes at a time. Threads of
    one process stall beside a busy process on the same cores; processes side by side do
    not. With more than one at a time each member's output goes to its log
    (OUT/preorderer.seedK.log), which ends with the member's wall time as a step's output
    does and is shown when all have ended; a member that failed fails the step once the
    others have ended."""
    stale = []
    for save, seed in members:
        if steps.fresh([save], [*data, settings]):
            steps.skipped(f"train preorderer (seed {seed})")
        else:
            stale.append((save, seed))
    jobs = int(s["PREORDER_JOBS"])
    command = [
        "xlpe-preorder-train", "--source", data[0], "--reorder", data[1], "--valid-source",
        data[2], "--valid-reorder", data[3], *preorderer_training(s), *s["PREORDER_SAMPLING"]]
    title = (f"at most {s['PREORDER_EPOCHS']} epochs, {s['PREORDER_SECONDS']}s")
    if jobs == 1 or len(members) == 1:
        for save, seed in stale:
            steps.timed(f"train preorderer (seed {seed}, {title})",
                        [*command, "--seed", str(seed), "--save", save])
            steps.made(save)
        return
    if not stale:
        return
    steps.say(f"== train {len(members)} preorderers, {jobs} side by side "
              f"({s['PREORDER_THREADS']} thread(s) each; logs: "
              f"{members[0][0][:-len('.seed1.pt')]}.seedK.log)")
    children, running = [], []
    try:
        for save, seed in stale:
            while len(running) >= jobs:
                running = ended_members(running)
                time.sleep(0.2)
            name, start = f"train preorderer (seed {seed}, {title})", time.monotonic()
            with open(save[:-len(".pt")] + ".log", "w", encoding="utf-8") as log:
                log.write(f"== {name}\n")
                log.flush()
                child = start_child(steps.logged(name, [*command, "--seed", str(seed),
                                                        "--save", save]), stderr=log)
            children.append((child, save, seed))
            running.append((child, log.name, name, start))
        while running:
            running = ended_members(running)
            time.sleep(0.2)
    except BaseException:
        for child, _, _ in children:
            if child.poll() is None:
                end_process_group(child)
        raise
    failed = []
    for child, save, seed in children:
        log = save[:-len(".pt")] + ".log"
        with open(log, encoding="utf-8", errors="replace") as stream:
            sys.stderr.write(stream.read())
        status = child.returncode if child.returncode >= 0 else 128 - child.returncode
        if status:
            failed.append(f"seed {seed} (status {status}, {log})")
        else:
            steps.made(save)
    if failed:
        steps.say(f"{steps.prog}: error: preorderer training failed: {'; '.join(failed)}")
        raise StepFailed(1)


def ended_members(running):
    """The members of ``running`` (child, log, step name, start) still running; the log of
    each one that succeeded ends as a step's output does, with ``== NAME: N s``."""
    still = []
    for member in running:
        child, log, name, start = member
        if child.poll() is None:
            still.append(member)
        elif child.returncode == 0:
            with open(log, "a", encoding="utf-8") as stream:
                stream.write(f"== {name}: {time.monotonic() - start:.1f} s\n")
    return still


def cross_fit(steps, s, bpe, src, data, training):
    """XL PE train positions as at test time: each of PREORDER_FOLDS folds predicted by a
    preorderer trained on the others (train.pred.reorder), and train.mixed.reorder."""
    folds = s["PREORDER_FOLDS"]
    settings = os.path.join(bpe, "train.pred.settings")
    steps.stamp(settings, " ".join([f"folds={folds}", *training]))
    outs = [os.path.join(bpe, "train.pred.reorder"), os.path.join(bpe, "train.mixed.reorder")]
    if steps.fresh(outs, [*data, settings]):
        steps.skipped("cross-fit train positions")
        return
    steps.timed(f"cross-fit train positions ({folds} folds)", module(
        "xlpe_fairseq.preordering.cross_fit", "--source", data[0], "--reorder", data[1],
        "--valid-source", data[2], "--valid-reorder", data[3], "--folds", folds, *training,
        "--output", outs[0], "--mixed-output", outs[1]))
    steps.made(outs[0])


def report(steps, dest, step, title, ins, command, shown_when_skipped=False):
    """``command``'s output written atomically to ``dest`` and shown under ``title`` (when
    the step is skipped too, with ``shown_when_skipped``)."""
    if steps.fresh([dest], ins):
        steps.skipped(step)
        if not shown_when_skipped:
            return
    else:
        with atomic_output(dest) as stream:
            stream.flush()
            steps.timed(step, command, stdout=stream)
        steps.made(dest)
    steps.say(f"== {title}:")
    with open(dest, encoding="utf-8", errors="replace") as stream:
        sys.stderr.write(stream.read())


def preprocess(steps, s, bpe, bin_dir, src, tgt, settings=(), options=()):
    """fairseq-preprocess of BPE/{train,valid,test}.{SRC,TGT} into ``bin_dir``; ``settings``
    and ``options`` as those of ``Steps.fresh`` and fairseq-preprocess."""
    dictionaries = [os.path.join(bin_dir, f"dict.{lang}.txt") for lang in (src, tgt)]
    ins = [os.path.join(bpe, f"{split}.{lang}") for split in SPLITS for lang in (src, tgt)]
    if steps.fresh([*dictionaries, os.path.join(bin_dir, f"test.{src}-{tgt}.{tgt}.idx")], ins,
                   settings):
        steps.skipped("fairseq-preprocess")
        return
    # fairseq-preprocess refuses to overwrite its dictionaries
    for path in dictionaries:
        remove(path)
    steps.timed("fairseq-preprocess", [
        "fairseq-preprocess", "--source-lang", src, "--target-lang", tgt, "--trainpref",
        os.path.join(bpe, "train"), "--validpref", os.path.join(bpe, "valid"), "--testpref",
        os.path.join(bpe, "test"), "--destdir", bin_dir, "--workers", s["WORKERS"], *options])
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
    """xlpe-binarize each stale one of ``jobs`` in one process (importing fairseq costs
    seconds a call). A job is (destdir, split, positions, source, inputs, skipped, name):
    SPLIT's ``positions`` over the BPE text ``source`` into
    DESTDIR/SPLIT.reorder.SRC-TGT.{bin,idx}, made from ``inputs``; ``skipped`` the step's name
    when it is up to date, ``name`` its part of ``title`` (formatted with the names run)."""
    calls, names, dests = [], [], []
    for destdir, split, positions, source, inputs, skipped, name in jobs:
        dest = os.path.join(destdir, f"{split}.reorder.{src}-{tgt}")
        if steps.fresh([f"{dest}.bin", f"{dest}.idx"], inputs):
            steps.skipped(skipped)
            continue
        calls += [*(["--then"] if calls else []), "--reorder", positions, "--source", source,
                  "--destdir", destdir, "--split", split, "--source-lang", src,
                  "--target-lang", tgt]
        names.append(name)
        dests.append(f"{dest}.bin")
    if calls:
        steps.timed(title.format(" ".join(names)), module(
            "xlpe_fairseq.in_one_process", "xlpe_fairseq.preprocessing.binarize", *calls))
        for dest in dests:
            steps.made(dest)


def binarize_positions(steps, out, src, tgt, jobs):
    """xlpe-binarize each stale one of ``jobs``, (variant, split, reorder file)."""
    binarize_reorder(steps, [
        (os.path.join(out, "data-bin", variant), split, positions,
         os.path.join(out, "bpe", f"{split}.{src}"),
         [positions, os.path.join(out, "bpe", f"{split}.{src}")],
         f"binarize {variant} {split} positions", f"{variant}/{split}")
        for variant, split, positions in jobs],
        src, tgt, "binarize positions ({})")


RECORDED_SETTINGS = (
    "MERGES", "MAX_LEN", "MAX_RATIO", "RATIO_RULE", "LOWERCASE", "JOINED_DICT",
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
                     f"RAW={shlex.quote(os.path.realpath(raw))}\n")
    # MODELS only where it is not all, so that a default run's record is the shell form's
    settings = [word for name in RECORDED_SETTINGS if s.get(name) and s[name] != "all"
                for word in ("--setting", f"{name}={s[name]}")]
    # the user's folder too, where valid and test were held out of its train
    if given and given != os.path.realpath(raw):
        settings += ["--given", given]
    steps.measured("record provenance", [
        "xlpe-provenance", "corpus", out, "--raw", raw, "--src", src, "--tgt", tgt, *settings,
        "--", *command])

