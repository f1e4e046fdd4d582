"""The two-pass Transformer of Zheng et al. (2021, §3.1, Fig. 2), the baseline DPE replaces
(examples/two_pass.sh runs it): a reordering Transformer learns source -> target-ordered source
(the training split's DPE reorder positions applied to its source, xlpe-reorder-text), a
translation Transformer learns target-ordered source -> target; at test time the source goes
through both. Every Transformer is fairseq's transformer at the demo size on the demo schedule
(the model registry's flags, schedules.py's values), trained and decoded as xlpe-train and
xlpe-evaluate do (fairseq_commands.py), and decoded from the average of its last checkpoints.

It reports the four rows of DPE Table 2 (results.md, results.json), in the paper's order:
  1 reordering Transformer  BLEU of its test output against the test source reordered from
                            the test alignment (BPE pieces, @@ marks dropped, as in the
                            paper's Fig. 3 example; no further tokenization)
  2 Transformer             the baseline, trained on source -> target the same way
  3 + reordering Transformer's output   the two-pass system: the translation Transformer fed
                            the first pass's output
  4 + alignment-reordered source        an oracle upper bound: the translation Transformer
                            fed the test source reordered from the test alignment (the paper
                            used FastAlign's; the alignment needs the reference)

  examples/two_pass.sh [--data DIR] [--work DIR] [--updates N] [--src he] [--tgt en]
      [--test-alignment FILE] [--average N] [--model-args "..."] [--gpu]

--data      xlpe-prepare's OUT: bpe/{train,test}.{src,tgt}, bpe/train.dpe.reorder,
            data-bin/text/dict.{src,tgt}.txt, reference/test.{tgt}, recipe.env (default
            work/demo/data, which data_prep/prepare-bible-he-en.sh prepares if missing)
--work      output folder (default work/demo/two-pass), made afresh: results.md and
            results.json (the four rows), bleu.json and generate.out (row 3), reordered.test.
            {src} (the first pass), reference.test.{src}ord (the alignment-reordered test
            source), {baseline,oracle,reordering}.bleu.json (rows 2, 4, 1), and each
            Transformer's checkpoints and train.log in {reordering,translation,baseline}/
--test-alignment  links over the BPE test pair, fairseq i-j (default DATA/bpe/test.align,
            which xlpe-prepare writes)
--updates   training updates per Transformer (default: the demo schedule's)
--average   how many of the last checkpoints to average (default 5); checkpoints are saved
            every updates/20 updates, so 5 span the last fifth of training
--model-args  fairseq-train options appended to the demo's (later options win)
--gpu       train and decode on the GPU, training with --fp16

No Transformer validates during training: only the training split has reorder positions.
"""
import argparse
import contextlib
import json
import os
import shlex
import shutil
import sys
import time
from types import SimpleNamespace

from ..evaluation.average_checkpoints import write_average
from ..evaluation.bleu import score_generate_output
from ..evaluation.generate_output import IncompleteGenerationError, read_hypotheses
from ..io import InputError, atomic_output, read_lines, run_command
from ..io.children import run_child
from ..io.work_folders import check_work_folder
from ..model_registry import flags
from ..reordering.extract import extract_file
from ..reordering.reorder_text import reorder_file
from . import bible_recipe
from .fairseq_commands import decode, generate_command, run_training, train_command
from .fairseq_report import launched
from .prepare_settings import language
from .schedules import schedule
from .script_options import Refused, ScriptHelpFormatter, read_settings, whole, wrapper_name
from .train import shorten

DEFAULT_DATA = os.path.join("work", "demo", "data")
VALUE_OPTIONS = ("--data", "--work", "--updates", "--src", "--tgt", "--test-alignment",
                 "--average", "--model-args")
PATHS = ("--data", "--work", "--test-alignment")


def parse_arguments(argv, prog):
    """The options, each value checked as it is read, an empty one too: one line and status
    2 for the first that is bad."""
    o = SimpleNamespace(data=DEFAULT_DATA, work=os.path.join("work", "demo", "two-pass"),
                        updates=None, src="he", tgt="en", test_alignment=None, average="5",
                        model_args=[], gpu=False)
    index = 0
    while index < len(argv):
        word = argv[index]
        if word in VALUE_OPTIONS:
            if index + 1 >= len(argv):
                raise Refused(f"{word} needs a value", 2)
            value = argv[index + 1]
            index += 2
            if word in PATHS and not value:
                raise Refused(f"{word} must name a file or folder, not ''", 2)
            if word in ("--updates", "--average"):
                value = whole(1)(value, word)
            elif word in ("--src", "--tgt"):
                value = language(word, value)
            elif word == "--model-args":
                try:
                    value = shlex.split(value)
                except ValueError as err:
                    raise Refused(f"--model-args must be options for fairseq-train, not "
                                  f"'{value}' ({err})", 2) from None
            setattr(o, word[2:].replace("-", "_"), value)
        elif word == "--gpu":
            o.gpu, index = True, index + 1
        elif word in ("-h", "--help"):
            argparse.ArgumentParser(prog=prog, usage=argparse.SUPPRESS, description=__doc__,
                                    formatter_class=ScriptHelpFormatter,
                                    add_help=False).print_help()
            raise SystemExit(0)
        else:
            raise Refused(f"unknown option {word} (see {prog} --help)", 2)
    o.values = schedule("demo", "demo", o.tgt)
    updates = o.updates or str(o.values.max_update)
    if int(updates) < int(o.average):
        raise Refused(f"--updates {updates}: fewer updates than the {o.average} checkpoints to "
                      "average", 2)
    # the schedule at this budget, as xlpe-train shortens it; a checkpoint every twentieth of
    # the budget, the last AVERAGE of them kept
    shorten(o.values, SimpleNamespace(max_update=updates, warmup=None, lr=None,
                                      max_tokens=None))
    o.values.interval, o.values.keep = max(1, int(updates) // 20), int(o.average)
    return o


def two_pass(argv, prog):
    name = os.path.basename(prog)
    o = parse_arguments(argv, prog)
    data, src, tgt = o.data, o.src, o.tgt
    if data == DEFAULT_DATA and not os.path.isfile(os.path.join(data, "provenance.json")):
        bible_recipe.prepare([data], os.path.normpath(os.path.join(
            os.path.dirname(prog), "..", "data_prep", "prepare-bible-he-en.sh")))
    bpe = os.path.join(data, "bpe")
    dictionaries = os.path.join(data, "data-bin", "text")
    test_alignment = o.test_alignment or os.path.join(bpe, "test.align")
    reference = os.path.join(data, "reference", f"test.{tgt}")
    for path in (*[os.path.join(bpe, f"{split}.{lang}") for split in ("train", "test")
                   for lang in (src, tgt)], os.path.join(bpe, "train.dpe.reorder"),
                 *[os.path.join(dictionaries, f"dict.{lang}.txt") for lang in (src, tgt)],
                 reference, test_alignment):
        if not os.path.isfile(path):
            raise Refused(f"{path}: no such file (see {prog} --help)", 2)
    recipe = read_settings(os.path.join(data, "recipe.env"), ("LOWERCASE", "TOKENIZED"))
    tokenized_reference = (recipe.get("LOWERCASE", "0") not in ("", "0")
                           or tgt in recipe.get("TOKENIZED", "").split(","))

    work = check_work_folder(o.work, "the output folder (--work)")
    shutil.rmtree(work, ignore_errors=True)
    text = os.path.join(work, "text")
    os.makedirs(text)
    # the target-ordered source is a language of its own to fairseq, with the source dictionary
    order = f"{src}ord"
    for split in ("train", "test"):
        for lang in (src, tgt):
            os.symlink(os.path.realpath(os.path.join(bpe, f"{split}.{lang}")),
                       os.path.join(text, f"{split}.{lang}"))
    reorder_file(os.path.join(bpe, f"train.{src}"), os.path.join(bpe, "train.dpe.reorder"),
                 os.path.join(text, f"train.{order}"), 1, 20000)
    # the reference reordering of the test source: DPE's rules on the test alignment
    extract_file("dpe", os.path.join(bpe, f"test.{src}"), os.path.join(bpe, f"test.{tgt}"),
                 test_alignment, os.path.join(work, "test.reorder"), 1, 20000)
    reference_order = os.path.join(work, f"reference.test.{order}")
    reorder_file(os.path.join(bpe, f"test.{src}"), os.path.join(work, "test.reorder"),
                 reference_order, 1, 20000)
    os.symlink(os.path.realpath(reference_order), os.path.join(text, f"test.{order}"))

    def dictionary(lang):
        """The corpus's dictionary of ``lang``: the target-ordered source takes the source's."""
        return os.path.join(dictionaries, f"dict.{src if lang in (src, order) else tgt}.txt")

    def binarize(pair_src, pair_tgt, dest, *options):
        """fairseq-preprocess of a pair with the corpus's dictionaries."""
        command = ["fairseq-preprocess", "--source-lang", pair_src, "--target-lang", pair_tgt,
                   "--srcdict", dictionary(pair_src), "--tgtdict", dictionary(pair_tgt),
                   "--destdir", dest, *options]
        with open(f"{dest}.log", "w", encoding="utf-8") as log:
            if run_child(launched(command), stdout=log, stderr=log):
                raise Refused(f"fairseq-preprocess failed; its report: {dest}.log", 1)
        # --only-source writes no target dictionary, which fairseq-generate still reads
        if not os.path.isfile(os.path.join(dest, f"dict.{pair_tgt}.txt")):
            shutil.copy(dictionary(pair_tgt), os.path.join(dest, f"dict.{pair_tgt}.txt"))
        return dest

    bins = {row: binarize(pair_src, pair_tgt, os.path.join(work, f"bin-{row}"), "--trainpref",
                          os.path.join(text, "train"), "--testpref", os.path.join(text, "test"))
            for pair_src, pair_tgt, row in ((src, order, "reordering"),
                                            (order, tgt, "translation"), (src, tgt, "baseline"))}
    pairs = {"reordering": (src, order), "translation": (order, tgt), "baseline": (src, tgt)}
    device = ["--fp16"] if o.gpu else ["--cpu"]

    def train(row):
        """fairseq's transformer at the demo size, no validation; then the average of its last
        AVERAGE checkpoints, ROW/checkpoint_avg.pt."""
        pair = pairs[row]
        save_dir = os.path.join(work, row)
        os.makedirs(save_dir)
        print(f"== train the {row} Transformer ({' -> '.join(pair)}, {o.values.max_update} "
              "updates)", file=sys.stderr)
        command = train_command(bins[row], *pair, flags("transformer", "demo"),
                                "--share-decoder-input-output-embed", o.values, save_dir,
                                extra=["--disable-validation", *device, *o.model_args])
        # fairseq's report into ROW/train.log only; the progress on stderr
        with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
            run_training(command, save_dir, o.values.max_update, name)
        averaged, _ = write_average(save_dir, int(o.average),
                                    os.path.join(save_dir, "checkpoint_avg.pt"))
        with open(os.path.join(save_dir, "train.log"), "a", encoding="utf-8") as log:
            log.write(f"checkpoint_avg.pt = mean of "
                      f"{', '.join(os.path.basename(path) for path in averaged)}\n")

    def translate(row, data_bin, output, *options):
        """The test split through ROW's averaged model, into ``output``."""
        decode(generate_command(data_bin, *pairs[row], "test",
                                os.path.join(work, row, "checkpoint_avg.pt"), 5, "1.0",
                                [*options, *(["--cpu"] if not o.gpu else [])]),
               output, f"{output}.log", name)

    def scored(row, output, result_file):
        result, _ = score_generate_output(output, reference, tgt, tokenized_reference)
        result["name"] = row
        report(result)
        with atomic_output(result_file) as out:
            json.dump(result, out, indent=2)

    start = time.monotonic()
    train("reordering")
    train("translation")
    # the two-pass system's training time: both of its Transformers
    write_line(os.path.join(work, "train_seconds"), f"{time.monotonic() - start:.0f}")
    write_line(os.path.join(work, "updates"), str(o.values.max_update))
    train("baseline")

    print("== row 1: the reordering Transformer reorders the test source", file=sys.stderr)
    first_pass = os.path.join(work, "reordering.generate.out")
    translate("reordering", bins["reordering"], first_pass)
    # hypotheses in test order, BPE kept: they are the second pass's source
    source = os.path.join(bpe, f"test.{src}")
    try:
        hypotheses = read_hypotheses(first_pass, len(read_lines(source)), source)
    except IncompleteGenerationError as err:
        raise InputError(f"first pass: {err}") from None
    reordered = os.path.join(work, f"reordered.test.{src}")
    with atomic_output(reordered) as out:
        out.writelines(line + "\n" for line in hypotheses)
    reordering_score(reordered, reference_order, os.path.join(work, "reordering.bleu.json"))

    print("== row 2: the baseline Transformer", file=sys.stderr)
    translate("baseline", bins["baseline"], os.path.join(work, "baseline.generate.out"),
              "--remove-bpe")
    scored("baseline", os.path.join(work, "baseline.generate.out"),
           os.path.join(work, "baseline.bleu.json"))

    print("== row 3: the translation Transformer fed the first pass's output (two-pass)",
          file=sys.stderr)
    first = os.path.join(work, "first-pass")
    os.makedirs(first)
    os.symlink(os.path.realpath(reordered), os.path.join(first, f"test.{order}"))
    two_pass_bin = binarize(order, tgt, os.path.join(work, "bin-two-pass"), "--only-source",
                            "--testpref", os.path.join(first, "test"))
    translate("translation", two_pass_bin, os.path.join(work, "generate.out"), "--remove-bpe")
    scored("two-pass", os.path.join(work, "generate.out"), os.path.join(work, "bleu.json"))

    print("== row 4: the translation Transformer fed the alignment-reordered test source "
          "(oracle)", file=sys.stderr)
    translate("translation", bins["translation"], os.path.join(work, "oracle.generate.out"),
              "--remove-bpe")
    scored("oracle", os.path.join(work, "oracle.generate.out"),
           os.path.join(work, "oracle.bleu.json"))
    write_results(work, src, tgt, o.values.max_update, o.average)


def report(result):
    print(f"{result['name']}: BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}  "
          f"({result['sentences']} sentences)\nBLEU: {result['bleu_signature']}\n"
          f"chrF: {result['chrf_signature']}")


def reordering_score(hypotheses, references, output):
    """Row 1: BPE pieces with their @@ marks dropped (DPE Fig. 3: "mr hn sch you this
    represented ."): a reordering may part the pieces of a word, so they are not joined
    back."""
    import sacrebleu

    hypotheses, references = ([line.replace("@@", "") for line in read_lines(path)]
                              for path in (hypotheses, references))
    bleu, chrf = sacrebleu.metrics.BLEU(tokenize="none"), sacrebleu.metrics.CHRF()
    result = {
        "name": "reordering",
        "bleu": round(bleu.corpus_score(hypotheses, [references]).score, 2),
        "chrf": round(chrf.corpus_score(hypotheses, [references]).score, 2),
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
        "sentences": len(hypotheses),
    }
    report(result)
    with atomic_output(output) as out:
        json.dump(result, out, indent=2)


def write_line(path, text):
    with atomic_output(path) as out:
        out.write(text + "\n")


def write_results(work, src, tgt, updates, average):
    """results.md and results.json: the four rows."""
    rows = [
        ("1", "Reordering Transformer", f"{src} → {src} reordered", "reordering.bleu.json"),
        ("2", "Transformer", f"{src} → {tgt}", "baseline.bleu.json"),
        ("3", "+ fed with the output of the reordering Transformer", f"{src} reordered → {tgt}",
         "bleu.json"),
        ("4", "+ fed with the alignment-reordered source (oracle)", f"{src} reordered → {tgt}",
         "oracle.bleu.json"),
    ]
    scores = {}
    for *_, file in rows:
        with open(os.path.join(work, file), encoding="utf-8") as stream:
            scores[file] = json.load(stream)
    lines = [f"DPE Table 2 rows ({updates} updates a Transformer, the last {average} checkpoints "
             "averaged)", "", "| row | model | data | BLEU | chrF |", "|---|---|---|---|---|"]
    for row, model, data, file in rows:
        lines.append(f"| {row} | {model} | {data} | {scores[file]['bleu']:.2f} "
                     f"| {scores[file]['chrf']:.2f} |")
    lines += ["", "row 1 (BPE pieces, @@ dropped):",
              f"BLEU: {scores['reordering.bleu.json']['bleu_signature']}",
              f"chrF: {scores['reordering.bleu.json']['chrf_signature']}", "rows 2-4:",
              f"BLEU: {scores['bleu.json']['bleu_signature']}",
              f"chrF: {scores['bleu.json']['chrf_signature']}"]
    table = "\n".join(lines) + "\n"
    with atomic_output(os.path.join(work, "results.md")) as out:
        out.write(table)
    with atomic_output(os.path.join(work, "results.json")) as out:
        json.dump([{"row": int(row), "model": model, "data": data, **scores[file]}
                   for row, model, data, file in rows], out, indent=2)
    print(table)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    prog, argv = wrapper_name(argv, "two_pass.sh")
    run_command(lambda: two_pass(argv, prog), os.path.basename(prog))
    return 0


if __name__ == "__main__":
    sys.exit(main())
