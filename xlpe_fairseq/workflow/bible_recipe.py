"""The demo's corpus: Hebrew->English Bible verses (PyPI bible-alignments, manual gold
alignments for valid/test), downloaded by xlpe-bible-corpus and prepared by xlpe-prepare
(data_prep/prepare-bible-he-en.sh runs it; examples/demo.sh reads it).

  prepare-bible-he-en.sh [--xlpe] OUTDIR

OUTDIR/corpus receives {train,valid,test}.{he,en,ids} as xlpe-bible-corpus gives them (already
tokenized: Hebrew morphemes, BSB words and punctuation) and {valid,test}.gold.align, the
manual alignments over exactly these tokens; then xlpe-prepare prepares OUTDIR from it
(OUTDIR/corpus is its RAW_DIR, both sides --tokenized) in its own layout: data-bin/{text,
dpe,xlpe}, bpe/, reference/, recipe.env, provenance.json (docs/pipeline.md), with MERGES
(default 8000) joint BPE merges. Without --xlpe (or XLPE=1) it is prepared for every model
but XL PE's (xlpe-prepare --models), so the preorderer, XL PE's test positions, is not
trained; with it, for every model.

Needs xlpe-fairseq installed in the active environment (xlpe-* and fairseq-preprocess on
PATH). A rerun skips each step whose outputs were made from the present content of its
inputs and from the same settings. One run at a time writes OUTDIR; every step but the
download runs in this command's process (the download, the aligner and fairseq-preprocess as
children ended with it), and Ctrl-C or SIGTERM leaves no temporary file.
Environment: MERGES, XLPE, and xlpe-prepare's settings (WORKERS, XLPE_TRAIN_POSITIONS,
PREORDER_*; xlpe-prepare --help lists them). The output depends only on these settings and
the installed tools (eflomal's build, torch), not on WORKERS, the machine's cores or its load.
"""
import argparse
import os
import sys

from ..io import run_command
from ..io.locks import claim_folder
from ..model_registry import TRAIN_MODELS, reads_positions
from ..preprocessing import bible_corpus
from . import prepare as xlpe_prepare
from .prepare_settings import settings_of
from .script_options import Refused, ScriptHelpFormatter, one_of, whole, wrapper_name
from .steps import Steps, remove_stale_temporaries_of

SRC, TGT = "he", "en"
SPLITS = ("train", "valid", "test")
USAGE = "[--xlpe] OUTDIR"
# the models OUTDIR is prepared for without --xlpe: all but those that read the preorderer's
# positions
WITHOUT_XLPE = ",".join(model for model in TRAIN_MODELS if not reads_positions(model))


def parse_arguments(argv, prog, environ):
    """(OUTDIR, xlpe-prepare's arguments): the options and the environment, every value
    checked before any work (xlpe-prepare's own settings by xlpe-prepare), a bad one one line
    and status 2."""
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
    merges = whole(1)(environ.get("MERGES") or "8000", "MERGES")
    xlpe = one_of(("0", "1"))(xlpe, "XLPE")
    out = operands[0]
    # a folder named like an option (after --) is passed on as a path, not as an option
    out = out if not out.startswith("-") else os.path.join(".", out)
    arguments = ["--src", SRC, "--tgt", TGT, "--tokenized", f"{SRC},{TGT}", "--merges", merges,
                 *([] if xlpe == "1" else ["--models", WITHOUT_XLPE]),
                 "--", os.path.join(out, "corpus"), out]
    options, _ = xlpe_prepare.parse_arguments(arguments, prog)
    settings_of(options, environ)
    return out, arguments


def prepare(argv, prog):
    name = os.path.basename(prog)
    out, arguments = parse_arguments(argv, prog, os.environ)
    xlpe_prepare.check_name(out, "OUTDIR")
    # held for xlpe-prepare too, which this process runs
    claim_folder(out, "write", "the corpus (OUTDIR)", name)
    corpus = os.path.join(out, "corpus")
    remove_stale_temporaries_of(out, ("corpus",))
    get_corpus(Steps(name, os.environ.get("XLPE_STAGE_LOG") or None), corpus)
    xlpe_prepare.prepare(arguments, prog)
    print(f"{name}: gold word alignments of valid and test: {corpus}/{{valid,test}}.gold.align",
          file=sys.stderr)


def get_corpus(steps, corpus):
    """xlpe-bible-corpus's corpus into CORPUS, in this process: already tokenized on both
    sides (Hebrew morphemes, BSB words and punctuation), and the gold alignments index
    exactly these tokens."""
    os.makedirs(corpus, exist_ok=True)
    files = [os.path.join(corpus, f"{split}.{name}") for split in SPLITS
             for name in (SRC, TGT, "ids")]
    files += [os.path.join(corpus, f"{split}.gold.align") for split in ("valid", "test")]
    if steps.fresh(files, []):
        steps.skipped("corpus")
        return
    steps.timed("corpus", bible_corpus.write_corpus, corpus, bible_corpus.default_cache())
    steps.made(files[0])


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    prog, argv = wrapper_name(argv, "prepare-bible-he-en.sh")
    run_command(lambda: prepare(argv, prog), os.path.basename(prog))
    return 0


if __name__ == "__main__":
    sys.exit(main())
