"""``xlpe-noise-curve``: BLEU of XL PE models trained on noisy reorder positions.

Ding et al. (2020), "Self-Attention with Cross-Lingual Position Representation", §4.5 and
Fig. 4: models are trained with a ratio of their training tokens given a wrong reorder
position by random swaps of two positions (``translation_reorder --reorder-noise`` 0, 0.05,
0.1, 0.15, 0.2: the expected share of corrupted tokens, 2 per swap); BLEU that falls as the
noise grows shows the gain comes from the positions, not from noise as a regularizer.
``examples/noise_attack.sh`` trains and decodes those models, then calls this command.

A model's curve comes either from a results file (``NAME=FILE``: a TSV of ``noise BLEU``
lines, or a JSON object ``{"noise": BLEU}``) or from fairseq-generate outputs scored
against a reference (``--generate-outputs NOISE=FILE ...`` with ``--name``), with the same
detokenized sacreBLEU as ``xlpe-bleu``. Several models share one table and plot.
"""
import argparse
import json
import os
import sys
from pathlib import Path

from ..help_format import HelpFormatter
from ..io import (
    InputError,
    atomic_output,
    check_output_directory,
    language_code,
    open_text,
    read_lines,
    run_command,
)
from .bleu import add_tokenize_argument, bleu_tokenizer, detokenize, score
from .curves import markdown_table, plot_curves
from .generate_output import IncompleteGenerationError, read_hypotheses


def _number(text, path, lineno=None):
    try:
        return float(text)
    except ValueError:
        where = f"{path}:{lineno}" if lineno else path
        raise InputError(f"{where}: {text!r} is not a number") from None


def _split_spec(spec, what):
    key, separator, value = spec.partition("=")
    if not separator or not key or not value:
        raise InputError(f"{spec!r}: expected {what}")
    return key, value


def read_results(path):
    """``{noise: BLEU}`` from a JSON object or from ``noise BLEU`` lines (a header line
    and ``#`` comments are skipped)."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    with open_text(path) as f:
        text = f.read()
    if path.endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(f"{path}: not valid JSON ({err})") from None
        if not isinstance(data, dict):
            raise InputError(f"{path}: expected a JSON object {{noise: BLEU}}")
        return {_number(noise, path): _number(bleu, path) for noise, bleu in data.items()}
    points = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2:
            raise InputError(f"{path}:{lineno}: expected two fields 'noise BLEU', got {line!r}")
        if not points and lineno == 1 and not fields[0].replace(".", "", 1).isdigit():
            continue  # a header line
        noise = _number(fields[0], path, lineno)
        if noise in points:
            raise InputError(f"{path}:{lineno}: noise {fields[0]} given twice")
        points[noise] = _number(fields[1], path, lineno)
    if not points:
        raise InputError(f"{path}: no 'noise BLEU' lines")
    return points


def score_generate_outputs(specs, reference, target_lang, tokenized_reference, tokenize=None):
    """``{noise: BLEU}`` of ``NOISE=FILE`` fairseq-generate outputs (run with --remove-bpe);
    sacreBLEU's tokenizer ``tokenize``, or the target language's."""
    tokenize = bleu_tokenizer(target_lang, tokenize)
    if not os.path.isfile(reference):
        raise InputError(f"{reference}: no such file")
    references = read_lines(reference)
    if tokenized_reference:
        references = detokenize(references)
    points = {}
    for spec in specs:
        noise, path = _split_spec(spec, "NOISE=GENERATE_OUTPUT")
        if not os.path.isfile(path):
            raise InputError(f"{path}: no such file")
        try:
            hypotheses = detokenize(read_hypotheses(path, len(references)))
        except IncompleteGenerationError as err:
            raise InputError(str(err)) from None
        points[_number(noise, spec)] = score(hypotheses, references, tokenize)["bleu"]
    return points


def noise_curves(args):
    """``{model name: {noise: BLEU}}`` from every input of the command line."""
    series = {}
    for spec in args.results or []:
        name, path = _split_spec(spec, "NAME=FILE")
        series[name] = read_results(path)
    if args.generate_outputs:
        series[args.name] = score_generate_outputs(
            args.generate_outputs, args.reference, args.target_lang, args.tokenized_reference,
            args.tokenize,
        )
    for name, points in series.items():
        bad = [noise for noise in points if not 0.0 <= noise <= 1.0]
        if bad:
            raise InputError(f"{name}: noise ratios must lie in [0, 1], got {bad}")
    return series


def write_outputs(series, output_dir):
    """noise_curve.{json,md,png} in ``output_dir``; returns the markdown table."""
    output = Path(output_dir)
    table = markdown_table(series, "reorder noise", "{:g}")
    with atomic_output(output / "noise_curve.json") as out:
        json.dump({name: {f"{noise:g}": bleu for noise, bleu in sorted(points.items())}
                   for name, points in series.items()}, out, indent=2)
    with atomic_output(output / "noise_curve.md") as out:
        out.write(table)
    plot_curves(output / "noise_curve.png", series,
                "ratio of noisy reorder positions in training (--reorder-noise)",
                "Noise attack on reorder positions (Ding et al. 2020, Fig. 4)")
    return table


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-noise-curve", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--results", nargs="+", metavar="NAME=FILE",
                        help="per model, a TSV of 'noise BLEU' lines or a JSON {noise: BLEU}")
    parser.add_argument("--generate-outputs", nargs="+", metavar="NOISE=FILE",
                        help="fairseq-generate outputs (with --remove-bpe) of the models "
                        "trained with --reorder-noise NOISE, scored against --reference")
    parser.add_argument("--name", default="XL PE",
                        help="model name of the --generate-outputs curve")
    parser.add_argument("--reference", help="reference text for --generate-outputs")
    parser.add_argument("--target-lang", type=language_code,
                        help="target language code for detokenization and sacreBLEU's tokenizer")
    add_tokenize_argument(parser)
    parser.add_argument("--tokenized-reference", action="store_true",
                        help="the reference is tokenized (xlpe-tokenize): detokenize it like the "
                        "hypotheses")
    parser.add_argument("--output-dir", required=True,
                        help="writes noise_curve.json, noise_curve.md and noise_curve.png")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.results and not args.generate_outputs:
        parser.error("give --results and/or --generate-outputs")
    if args.generate_outputs and not (args.reference and args.target_lang):
        parser.error("--generate-outputs needs --reference and --target-lang")

    def body():
        check_output_directory(args.output_dir)
        print(write_outputs(noise_curves(args), args.output_dir))

    run_command(body, parser.prog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
