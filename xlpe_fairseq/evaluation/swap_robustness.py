"""``xlpe-swap-robustness``: BLEU when a share of the test source words is swapped.

Chen et al. (2019), "Neural Machine Translation with Reordering Embeddings", §6.5 and
Figs. 3-5: the words of every test source sentence are randomly swapped at increasing
percentages and each model translates the damaged test set; a model that holds more
reordering information degrades more slowly.

Swapping, precisely: a sentence of n words (a word is its BPE pieces, ``@@``-continued
pieces kept together, so plain tokenized text works too) moves ``k = floor(p·n + 0.5)``
words. The k word positions are the first k of one seeded random order of the sentence's
positions, so the words moved at 20% include those moved at 10%; the words at those
positions move one step along a cycle in that random order, so every chosen position
receives another word. A single word cannot move alone: k = 1 moves nothing. The share
actually moved is reported next to each percentage.

The swapped source goes through the normal generation pipeline: ``fairseq-preprocess
--only-source --srcdict`` into a temporary data-bin, then ``fairseq-generate`` with the
plugin, scored with detokenized sacreBLEU like ``xlpe-bleu``. XL PE models read reorder
positions: pass ``--preorderer``; with no reorder file in the temporary data-bin the task
predicts them from the swapped source, as a deployed system would.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..help_format import HelpFormatter
from ..io import (
    SEED,
    InputError,
    Number,
    ToolError,
    atomic_output,
    check_dictionaries,
    check_output_directory,
    check_same_line_count,
    language_code,
    positive_int,
    read_lines,
    run_command,
)
from ..user_dir import PLUGIN_DIR
from .bleu import add_tokenize_argument, bleu_tokenizer, detokenize, score
from .compare import named_path
from .curves import markdown_table, plot_curves
from .generate_output import read_hypotheses

BPE_CONTINUATION = "@@"
DEFAULT_PERCENTAGES = list(range(0, 101, 10))


def group_words(tokens):
    """Split BPE pieces into words: a piece ending in ``@@`` continues into the next one."""
    words, current = [], []
    for token in tokens:
        current.append(token)
        if not token.endswith(BPE_CONTINUATION):
            words.append(current)
            current = []
    if current:  # a dangling ``@@`` piece at the end still belongs to a word
        words.append(current)
    return words


def words_to_move(word_count, fraction):
    """``floor(fraction·n + 0.5)``, or 0 where that is 1 (one word cannot move alone)."""
    count = int(fraction * word_count + 0.5)
    return count if count >= 2 else 0


def swap_words(tokens, fraction, rng):
    """Return ``(tokens with a share fraction of words swapped, number of words moved)``.

    ``rng`` is a ``random.Random``; see the module docstring for the exact procedure.
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"swap fraction must be in [0, 1], got {fraction}")
    words = group_words(tokens)
    order = rng.sample(range(len(words)), len(words))
    chosen = order[:words_to_move(len(words), fraction)]
    swapped = list(words)
    for source, destination in zip(chosen, chosen[1:] + chosen[:1]):
        swapped[destination] = words[source]
    return [piece for word in swapped for piece in word], len(chosen)


def swap_corpus(lines, fraction, seed):
    """Swap every line; line i's random order depends on ``seed`` and i only.

    Returns ``(swapped lines, share of all words that moved)``.
    """
    swapped, moved, total = [], 0, 0
    for index, line in enumerate(lines):
        tokens = line.split()
        new_tokens, count = swap_words(tokens, fraction, random.Random(f"{seed}:{index}"))
        swapped.append(" ".join(new_tokens))
        moved += count
        total += len(group_words(tokens))
    return swapped, (moved / total if total else 0.0)


def read_first_lines(path, limit):
    lines = read_lines(path)
    return lines if limit is None else lines[:limit]


def _run(command, what):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise ToolError(f"{what} failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return result.stdout


def binarize_source(source_path, data_bin, source_lang, target_lang, destdir):
    """fairseq-preprocess the source alone with the model's dictionary; the target
    dictionary is copied because fairseq-generate builds the task from both."""
    _run([sys.executable, "-m", "fairseq_cli.preprocess", "--only-source",
          "--source-lang", source_lang, "--target-lang", target_lang,
          "--srcdict", os.path.join(data_bin, f"dict.{source_lang}.txt"),
          "--testpref", os.path.splitext(source_path)[0], "--destdir", destdir,
          "--workers", "1"], f"fairseq-preprocess of {source_path}")
    shutil.copy(os.path.join(data_bin, f"dict.{target_lang}.txt"), destdir)


def generate(data_bin, checkpoint, args, output_path):
    """fairseq-generate the test split; its stdout is written to ``output_path``."""
    command = [
        sys.executable, "-m", "fairseq_cli.generate", data_bin, "--user-dir", args.user_dir,
        "--task", "translation_reorder", "--source-lang", args.source_lang,
        "--target-lang", args.target_lang, "--gen-subset", "test", "--path", checkpoint,
        "--remove-bpe", "--required-batch-size-multiple", "1", "--num-workers", "0",
        *args.generate_args.split(),
    ]
    if args.preorderer:
        command += ["--preorderer", args.preorderer]
    stdout = _run(command, f"fairseq-generate with {checkpoint}")
    with atomic_output(output_path) as out:
        out.write(stdout)


def swap_robustness(args):
    """Run the whole grid; return the result dict written as JSON."""
    checkpoints = dict(args.checkpoint)
    tokenize = bleu_tokenizer(args.target_lang, args.tokenize)
    for path in (args.source, args.reference, args.preorderer, *checkpoints.values()):
        if path and not os.path.isfile(path):
            raise InputError(f"{path}: no such file")
    for lang in (args.source_lang, args.target_lang):
        if not os.path.isfile(os.path.join(args.data_bin, f"dict.{lang}.txt")):
            raise InputError(f"{os.path.join(args.data_bin, f'dict.{lang}.txt')}: no such file")
    check_dictionaries(args.data_bin)
    check_same_line_count([args.source, args.reference])
    source = read_first_lines(args.source, args.limit)
    references = read_first_lines(args.reference, args.limit)
    if args.tokenized_reference:
        references = detokenize(references)
    output = Path(args.output_dir)
    result = {"source": args.source, "reference": args.reference, "sentences": len(source),
              "seed": args.seed, "moved_share": {}, "bleu": {name: {} for name in checkpoints},
              "chrf": {name: {} for name in checkpoints}, "checkpoints": checkpoints}
    with tempfile.TemporaryDirectory(prefix="xlpe-swap.") as tmp:
        for percentage in args.percentages:
            swapped, moved_share = swap_corpus(source, percentage / 100, args.seed)
            result["moved_share"][percentage] = round(moved_share, 4)
            swapped_path = output / "swapped" / f"{percentage}.{args.source_lang}"
            with atomic_output(swapped_path) as out:
                out.write("".join(line + "\n" for line in swapped))
            # fairseq-preprocess takes a prefix: give it test.{src} in its own folder
            prefix_dir = Path(tmp) / f"{percentage}"
            prefix_dir.mkdir()
            shutil.copy(swapped_path, prefix_dir / f"test.{args.source_lang}")
            bin_dir = prefix_dir / "data-bin"
            binarize_source(str(prefix_dir / f"test.{args.source_lang}"), args.data_bin,
                            args.source_lang, args.target_lang, str(bin_dir))
            for name, checkpoint in checkpoints.items():
                generate_path = output / "generate" / f"{name}.{percentage}.out"
                generate(str(bin_dir), checkpoint, args, generate_path)
                hypotheses = detokenize(read_hypotheses(generate_path, len(source)))
                scores = score(hypotheses, references, tokenize)
                result["bleu"][name][percentage] = scores["bleu"]
                result["chrf"][name][percentage] = scores["chrf"]
                result["bleu_signature"] = scores["bleu_signature"]
                print(f"{name} {percentage}% swapped ({moved_share:.1%} of words moved): "
                      f"BLEU {scores['bleu']:.2f}", file=sys.stderr)
    return result


def write_outputs(result, output_dir):
    """swap_robustness.{json,md,png} in ``output_dir``; returns the markdown table."""
    output = Path(output_dir)
    table = markdown_table(result["bleu"], "% words swapped", "{:g}")
    moved = ", ".join(f"{p}%: {share:.1%}" for p, share in result["moved_share"].items())
    table += (f"\nBLEU on {result['sentences']} sentences of {result['source']}, seed "
              f"{result['seed']}; words actually moved: {moved}\n"
              f"sacreBLEU: {result['bleu_signature']}\n")
    with atomic_output(output / "swap_robustness.json") as out:
        json.dump(result, out, indent=2)
    with atomic_output(output / "swap_robustness.md") as out:
        out.write(table)
    plot_curves(output / "swap_robustness.png", result["bleu"], "% of source words swapped",
                "Swapped source words (Chen et al. 2019, §6.5)")
    return table


PERCENTAGE = Number(float, minimum=0, maximum=100)


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-swap-robustness",
                                     description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--checkpoint", nargs="+", required=True, type=named_path,
                        metavar="NAME=PATH", help="checkpoints, one line each in the plot "
                        "(a bare PATH is named after its file stem)")
    parser.add_argument("--data-bin", required=True,
                        help="data-bin the checkpoints were trained on (its dict.*.txt are used)")
    parser.add_argument("--source", required=True,
                        help="test source exactly as the model reads it (BPE text, "
                        "e.g. bpe/test.he)")
    parser.add_argument("--reference", required=True, help="reference translations, one per line")
    parser.add_argument("--tokenized-reference", action="store_true",
                        help="the reference is tokenized (xlpe-tokenize): detokenize it like the "
                        "hypotheses")
    parser.add_argument("--source-lang", required=True, type=language_code,
                        help="source language code, e.g. he")
    parser.add_argument("--target-lang", required=True, type=language_code,
                        help="target language code, e.g. en")
    add_tokenize_argument(parser)
    parser.add_argument("--percentages", type=PERCENTAGE, nargs="+", default=DEFAULT_PERCENTAGES,
                        help="percentages of words to swap in every sentence")
    parser.add_argument("--limit", type=positive_int, help="use only the first N test sentences")
    parser.add_argument("--seed", type=SEED, default=1, help="seed of the random swaps")
    parser.add_argument("--preorderer",
                        help="preorderer for XL PE checkpoints: positions are predicted from "
                        "the swapped source")
    parser.add_argument("--generate-args", default="--beam 5 --batch-size 100",
                        help="further fairseq-generate options, one string (add --cpu or --fp16 "
                        "as needed)")
    parser.add_argument("--user-dir", default=PLUGIN_DIR,
                        help="fairseq --user-dir of the plugin (default: the installed plugin's "
                        "folder, which xlpe-user-dir prints)")
    parser.add_argument("--output-dir", required=True,
                        help="writes swap_robustness.{json,md,png}, swapped/ and generate/")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    # 10 rather than 10.0 in file names and tables; a repeated percentage is run once
    args.percentages = list(dict.fromkeys(
        int(p) if float(p).is_integer() else p for p in args.percentages))
    if any(not 0 <= p <= 100 for p in args.percentages):
        parser.error("--percentages must lie in [0, 100]")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be positive")

    def body():
        check_output_directory(args.output_dir)
        print(write_outputs(swap_robustness(args), args.output_dir))

    run_command(body, parser.prog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
