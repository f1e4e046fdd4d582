"""``xlpe-preorder``: predict reorder positions for source BPE text with a trained preorderer.

Writes one reorder line per source line (the format of ``{split}.reorder``), e.g. the
``pos_XL`` of valid and test sets for XL PE (Ding et al. 2020), where no alignment exists.
"""
import argparse
import sys

from ..help_format import HelpFormatter
from ..io import (
    atomic_output,
    check_length,
    check_outputs,
    positive_int,
    require_files,
    require_lines,
    run_command,
)
from ..data.reorder_file import validate_permutation
from .corpus import read_tokens
from .preorderer import MAX_TOKENS, Preorderer, check_device


def predict_file(preorderer, source, output, max_tokens=20000):
    """Write the predicted positions of every line of ``source`` to ``output``, atomically."""
    check_outputs([output], [source])
    sentences = read_tokens(source)
    require_lines(source, len(sentences))
    for lineno, sentence in enumerate(sentences, start=1):
        check_length(source, lineno, len(sentence), MAX_TOKENS, "the preorderer")
    predictions = preorderer.predict(sentences, max_tokens=max_tokens)
    with atomic_output(output) as out:
        for lineno, (sentence, positions) in enumerate(zip(sentences, predictions), start=1):
            validate_permutation(positions, len(sentence), f"prediction for {source} line {lineno}")
            out.write(" ".join(map(str, positions)) + "\n")
    return len(sentences)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-preorder",
        description="Predict target-ordered source positions (a reorder file) from source "
        "BPE text alone, with a preorderer trained by xlpe-preorder-train. Every prediction "
        "is BTG-consistent (the best BTG tree under the preorderer's pair scores).",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--preorderer", required=True, help="checkpoint from xlpe-preorder-train")
    parser.add_argument("--source", required=True, help="source BPE text, one sentence a line")
    parser.add_argument("--output", required=True, help="reorder file to write")
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
    parser.add_argument("--max-tokens", type=positive_int, default=20000,
                        help="padded source tokens per batch")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    def body():
        require_files([args.preorderer, args.source])
        check_outputs([args.output], [args.preorderer, args.source])
        check_device(args.device)
        preorderer = Preorderer.load(args.preorderer, device=args.device)
        count = predict_file(preorderer, args.source, args.output, args.max_tokens)
        print(f"xlpe-preorder: wrote {count} lines to {args.output}", file=sys.stderr)

    run_command(body, "xlpe-preorder")


if __name__ == "__main__":
    main()
