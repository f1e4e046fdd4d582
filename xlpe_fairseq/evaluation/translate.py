"""``xlpe-translate``: translate raw text with a trained model, one sentence a line.

Each line goes through the steps the corpus went through: tokenization as in
``xlpe-tokenize`` (Moses rules; jieba words for zh and MeCab words for ja; lowercased if the
corpus was) and the corpus's BPE codes; then fairseq's generation through its hub interface
(``GeneratorHubInterface``: batching, beam search, ensembles), where the ``translation_reorder``
task predicts XL PE's positions from the source with the preorderer; then BPE is removed and the
text detokenized (``detokenize``: as its tokens record the spacing, in any language).
Translations come one a line in the input's order. Every model family works; only XL PE models
need the preorderer.

    xlpe-translate --corpus data/fr-en --checkpoint checkpoints/fr-en/xlpe < new.fr > new.en

``--checkpoint`` takes a checkpoint file, several joined by ':' (an ensemble), or a checkpoint
folder that ``xlpe-evaluate`` scored: the checkpoint it chose there, by its record
(``provenance-test.json``).

``--corpus OUT`` (the OUT of ``xlpe-prepare`` or another recipe) supplies the
dictionaries (OUT/data-bin/text), the BPE codes (OUT/bpe/codes), the preorderer
(OUT/preorderer.pt), the languages, the lowercasing and the sides tokenized already
(OUT/recipe.env); an option given explicitly wins.
"""
import argparse
import logging
import os
import shlex
import sys
import tempfile

from ..help_format import HelpFormatter
from ..io import (
    FINITE,
    InputError,
    language_code,
    load_fairseq_ensemble,
    open_text,
    positive_int,
    require_files,
    run_command,
    text_lines,
)
from ..io.lines import stdin_lines
from ..io.digests import file_digest
from ..io.provenance import read_record, verify_checkpoint_on_corpus, verify_corpus
from ..preprocessing.bpe import bpe_applier, write_checked_codes
from ..text.detokenization import detokenize_line
from ..text.tokenization import check_tokenization, tokenize_line


def read_recipe_env(path):
    """SRC, TGT, LOWERCASE, TOKENIZATION and TOKENIZED of a recipe's recipe.env (lines
    KEY=VALUE, values shell-quoted)."""
    settings = {}
    with open_text(path) as f:
        for line in f:
            key, found, value = line.strip().partition("=")
            if found and key in ("SRC", "TGT", "LOWERCASE", "TOKENIZATION", "TOKENIZED"):
                settings[key] = " ".join(shlex.split(value))
    return settings


def scored_checkpoint(folder):
    """The checkpoint xlpe-evaluate scored in ``folder``, by its test record: which one a
    schedule averages depends on how many checkpoints the training saved."""
    record_path = os.path.join(folder, "provenance-test.json")
    if not os.path.exists(record_path):
        raise InputError(f"{folder} is a folder without {os.path.basename(record_path)}: run "
                         "xlpe-evaluate OUT on it first (it chooses the checkpoint), or "
                         "give a checkpoint file")
    checkpoint = read_record(record_path, "evaluation")["checkpoint"]
    if not os.path.isfile(checkpoint["path"]) or file_digest(checkpoint["path"]) != \
            checkpoint["sha256"]:
        raise InputError(f"{checkpoint['path']}: not the checkpoint {record_path} scored (gone "
                         "or changed since): run xlpe-evaluate again, or give a "
                         "checkpoint file")
    return checkpoint["path"]


def resolve_arguments(args):
    """Fill what ``--corpus`` supplies into the options not given, and check the files.
    Raises InputError naming what is missing."""
    if args.corpus:
        recipe_env = os.path.join(args.corpus, "recipe.env")
        require_files([recipe_env])
        settings = read_recipe_env(recipe_env)
        check_tokenization(recipe_env, settings.get("TOKENIZATION"))
        args.source_lang = args.source_lang or settings.get("SRC")
        args.target_lang = args.target_lang or settings.get("TGT")
        args.lowercase = args.lowercase or settings.get("LOWERCASE") == "1"
        # a source the corpus had tokenized already (xlpe-prepare --tokenized) is taken as
        # tokenized: its spaces normalized only
        args.tokenized = args.source_lang in settings.get("TOKENIZED", "").split(",")
        args.data_bin = args.data_bin or os.path.join(args.corpus, "data-bin", "text")
        args.bpe_codes = args.bpe_codes or os.path.join(args.corpus, "bpe", "codes")
        preorderer = os.path.join(args.corpus, "preorderer.pt")
        if not args.preorderer and os.path.isfile(preorderer):
            args.preorderer = preorderer
    if not args.bpe_codes:
        raise InputError("give --bpe-codes (the corpus's bpe/codes) or --corpus")
    checkpoints = [scored_checkpoint(path) if os.path.isdir(path) else path
                   for path in args.checkpoint.split(os.pathsep)]
    require_files([*checkpoints, args.bpe_codes] + ([args.preorderer] if args.preorderer else [])
                  + ([args.input] if args.input else []))
    if args.data_bin:
        for lang in filter(None, (args.source_lang, args.target_lang)):
            require_files([os.path.join(args.data_bin, f"dict.{lang}.txt")])
    return checkpoints


def load_translator(args, checkpoints):
    # fairseq and torch are imported here: they take seconds, which --help and a wrong
    # argument need not wait for
    import torch
    from fairseq.data.data_utils import post_process
    from fairseq.hub_utils import GeneratorHubInterface

    from .. import criterions, models, tasks  # noqa: F401  (registers the plugin with fairseq)

    # fairseq logs its dictionaries and batching at INFO; a translation command prints only
    # translations and errors
    logging.getLogger("fairseq").setLevel(logging.WARNING)

    class RawTextTranslator(GeneratorHubInterface):
        """fairseq's hub interface with the corpus's own tokenization, BPE and detokenization."""

        def __init__(self, cfg, task, ensemble):
            super().__init__(cfg, task, ensemble)
            with tempfile.TemporaryDirectory(prefix=".xlpe-translate.") as folder:
                self.bpe_applier = bpe_applier(write_checked_codes(args.bpe_codes, folder))

        def tokenize(self, sentence):
            return tokenize_line(sentence, args.source_lang, args.lowercase, not args.tokenized)

        def apply_bpe(self, sentence):
            return self.bpe_applier.apply([sentence])[0] if sentence else sentence

        def remove_bpe(self, sentence):
            return post_process(sentence, "subword_nmt")

        def detokenize(self, sentence):
            return detokenize_line(sentence)

    # N best reorderings need a preorderer; a model that reads no positions has none
    overrides = {"preorderer": args.preorderer,
                 "preorderer_nbest": args.preorderer_nbest if args.preorderer else 1,
                 "preorderer_nbest_weight": args.preorderer_nbest_weight}
    if args.data_bin:
        overrides["data"] = args.data_bin
    for key in ("source_lang", "target_lang"):
        if getattr(args, key):
            overrides[key] = getattr(args, key)
    if args.corpus:
        # the corpus as prepared, and checkpoints trained on it (not on another corpus or an
        # earlier preparation of this one)
        verify_corpus(args.corpus, "text")
        for checkpoint in checkpoints:
            verify_checkpoint_on_corpus(checkpoint, args.corpus)
    ensemble, cfg, task = load_fairseq_ensemble(checkpoints, overrides)
    args.source_lang, args.target_lang = cfg.task.source_lang, cfg.task.target_lang
    if getattr(task, "reorder_role", None) == "input" and not args.preorderer:
        raise InputError(f"{checkpoints[0]} is an XL PE model: it reads reorder positions, which "
                         "the preorderer predicts; give --preorderer PREORDERER.pt (or --corpus)")
    cfg.dataset.batch_size = args.batch_size
    cfg.dataset.max_tokens = None
    translator = RawTextTranslator(cfg, task, ensemble).eval()
    if not args.cpu and torch.cuda.is_available():
        translator.cuda()
    return translator


def batches(lines, size):
    batch = []
    for line in lines:
        batch.append(line.rstrip("\n"))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def translate(translator, lines, args, out, name):
    """Translate ``lines`` (of the input ``name``) ``--buffer-size`` at a time, writing each
    translation as it comes."""
    max_source = translator.max_positions[0]
    first = 1
    for batch in batches(lines, args.buffer_size):
        encoded = [translator.encode(sentence) for sentence in batch]
        for number, tokens in enumerate(encoded, first):
            if len(tokens) > max_source:
                raise InputError(f"{name} line {number}: {len(tokens)} tokens after BPE, more "
                                 f"than the model's {max_source}")
        hypotheses = translator.generate(encoded, beam=args.beam, lenpen=args.lenpen)
        for best in hypotheses:
            out.write(translator.decode(best[0]["tokens"]) + "\n")
        out.flush()
        first += len(batch)


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-translate", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--checkpoint", required=True,
                        help="model checkpoint (several joined by ':' translate as an ensemble), "
                        "or a folder xlpe-evaluate scored: the checkpoint it chose there")
    parser.add_argument("--corpus", help="the recipe's OUT folder, which supplies the defaults "
                        "of --data-bin, --bpe-codes, --preorderer (OUT/preorderer.pt) and, from "
                        "OUT/recipe.env, the languages and --lowercase")
    parser.add_argument("--data-bin", help="folder with the dictionaries dict.SRC.txt and "
                        "dict.TGT.txt (default: OUT/data-bin/text, else the training's)")
    parser.add_argument("--bpe-codes", help="the corpus's BPE codes (default: OUT/bpe/codes)")
    parser.add_argument("--source-lang", type=language_code,
                        help="default: the corpus's, else the checkpoint's")
    parser.add_argument("--target-lang", type=language_code,
                        help="default: the corpus's, else the checkpoint's")
    parser.add_argument("--lowercase", action="store_true",
                        help="lowercase the input (default: if the corpus was lowercased)")
    # --corpus sets it where the corpus's source was tokenized already
    parser.set_defaults(tokenized=False)
    parser.add_argument("--preorderer", help="xlpe-preorder-train checkpoint, for XL PE models "
                        "(default: OUT/preorderer.pt)")
    parser.add_argument("--preorderer-nbest", type=positive_int, default=1,
                        help="XL PE models: translate each sentence with each of the "
                        "preorderer's N best reorderings and keep the best-scoring translation, "
                        "for about N times the decoding time (default: %(default)s, the best "
                        "reordering only, as fast as a Transformer; 4 took 2.7 times as long "
                        "for +0.05 to +0.32 BLEU on the pairs it was tuned on and -0.02 and "
                        "+0.06 on two held out, docs/preorderer.md)")
    parser.add_argument("--preorderer-nbest-weight", type=FINITE, default=0.1,
                        help="weight of the reordering's search score in that choice "
                        "(default: %(default)s)")
    parser.add_argument("--input", help="raw source text, one sentence a line (default: stdin)")
    parser.add_argument("--beam", type=positive_int, default=5, help="beam size (default: %(default)s)")
    parser.add_argument("--lenpen", type=FINITE, default=1.0,
                        help="length penalty (default: %(default)s)")
    parser.add_argument("--batch-size", type=positive_int, default=64,
                        help="sentences per batch (default: %(default)s)")
    parser.add_argument("--buffer-size", type=positive_int, default=1000,
                        help="lines read before translating them (default: %(default)s; 1 "
                        "translates each line as it comes)")
    parser.add_argument("--cpu", action="store_true", help="translate on the CPU even if a GPU "
                        "is there")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)

    def body():
        sys.stdout.reconfigure(encoding="utf-8")
        checkpoints = resolve_arguments(args)
        translator = load_translator(args, checkpoints)
        # the line rule of every command, stdin's too: strict UTF-8, a lone \r refused
        if args.input:
            with text_lines(args.input) as lines:
                translate(translator, lines, args, sys.stdout, args.input)
        else:
            translate(translator, stdin_lines(), args, sys.stdout, "<stdin>")

    run_command(body, parser.prog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
