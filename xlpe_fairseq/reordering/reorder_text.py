"""``xlpe-reorder-text``: the source sentences themselves put into target order.

The data of the DPE paper's two-pass Transformer (Zheng et al. 2021, §3.1, Fig. 2, Table 2):
a first Transformer learns source → target-ordered source from these lines, a second one
translates target-ordered source → target (``examples/two_pass.sh``). Token ``i`` of a line
moves to slot ``positions[i]`` of its reorder line, so the output line holds the same tokens,
each once.
"""
import argparse
import functools
import sys

from ..help_format import HelpFormatter
from ..io import (
    add_parallel_arguments,
    atomic_output,
    check_outputs,
    check_same_line_count,
    parallel_imap,
    read_parallel_chunks,
    run_command,
)
from ..data.reorder_file import parse_reorder_line


def reorder_tokens(tokens, positions):
    """``tokens`` rearranged so that token ``i`` stands at ``positions[i]``."""
    reordered = [None] * len(tokens)
    for token, position in zip(tokens, positions):
        reordered[position] = token
    return reordered


def reorder_chunk(chunk, reorder_path):
    first_lineno, rows = chunk
    lines = []
    for offset, (source, positions_text) in enumerate(rows):
        tokens = source.split()
        positions = parse_reorder_line(positions_text, len(tokens), reorder_path,
                                       first_lineno + offset)
        lines.append(" ".join(reorder_tokens(tokens, positions)) + "\n")
    return lines


def reorder_file(source, reorder, output, workers, chunk_size):
    """Write ``output``: every line of ``source`` in the order its ``reorder`` line gives."""
    check_outputs([output], [source, reorder])
    total = check_same_line_count([source, reorder])
    chunks = read_parallel_chunks([source, reorder], chunk_size)
    with atomic_output(output) as out:
        # a partial, not a lambda: the worker processes receive it pickled
        work = functools.partial(reorder_chunk, reorder_path=reorder)
        for lines in parallel_imap(work, chunks, workers, total=total, desc="reorder text"):
            out.writelines(lines)
    return total


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-reorder-text", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--source", required=True, help="source BPE text, one sentence a line")
    parser.add_argument("--reorder", required=True,
                        help="reorder file of that text (xlpe-reorder output)")
    parser.add_argument("--output", required=True, help="target-ordered source text to write")
    add_parallel_arguments(parser, chunk_size=10000, unit="sentences")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    def body():
        count = reorder_file(args.source, args.reorder, args.output, args.workers,
                             args.chunk_size)
        print(f"xlpe-reorder-text: {count} lines written to {args.output}", file=sys.stderr)

    run_command(body, "xlpe-reorder-text")


if __name__ == "__main__":
    main()
