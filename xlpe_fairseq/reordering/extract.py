"""``xlpe-reorder``: write ``{split}.reorder`` from BPE-level source, target and alignment.

Each output line holds one integer per source BPE token (EOS excluded): the 0-based position
of that token in the target-ordered source, a permutation of 0..n-1 (see reorder_file).
Methods are looked up in METHODS: ``dpe`` (Zheng et al. 2021) and ``btg`` (a BTG tree
consistent with the alignment, for XL PE, Ding et al. 2020); others register the same way.
"""
import argparse
import collections
import functools
import sys

from ..preprocessing.io_utils import (
    InputError,
    atomic_output,
    check_not_inputs,
    check_same_line_count,
    default_workers,
    parallel_imap,
    read_parallel_chunks,
    run_command,
)
from .btg_rules import btg_positions
from .dpe_rules import alignment_cases, dpe_positions

# method name -> function(n_src, links) -> positions (a permutation of range(n_src))
METHODS = {"dpe": dpe_positions, "btg": btg_positions}


def parse_links(text, n_src, n_tgt, where):
    """Parse fairseq ``i-j`` links and check each one lies inside the sentence pair.

    ``where`` describes the line for error messages (file, line, the two side files).
    """
    links = []
    for field in text.split():
        i, sep, j = field.partition("-")
        if not (sep and i.isdigit() and j.isdigit()):
            raise InputError(f"{where}: link {field!r} is not of the form i-j")
        i, j = int(i), int(j)
        if i >= n_src or j >= n_tgt:
            raise InputError(
                f"{where}: link {field!r} is out of range for source length {n_src} "
                f"and target length {n_tgt}"
            )
        links.append((i, j))
    return links


def extract_chunk(chunk, method, paths):
    """Reorder lines and rule statistics for one chunk of (source, target, alignment) rows."""
    first_lineno, rows = chunk
    source_path, target_path, alignment_path = paths
    position_fn = METHODS[method]
    lines = []
    cases = collections.Counter()
    for offset, (source, target, alignment) in enumerate(rows):
        n_src, n_tgt = len(source.split()), len(target.split())
        where = (
            f"{alignment_path} line {first_lineno + offset} "
            f"(sources {source_path}, {target_path})"
        )
        links = parse_links(alignment, n_src, n_tgt, where)
        lines.append(" ".join(map(str, position_fn(n_src, links))) + "\n")
        cases.update(alignment_cases(n_src, links))
    return lines, cases


def extract_file(method, source, target, alignment, output, workers, chunk_size):
    """Stream the three inputs through ``method`` into ``output``; return the case counts."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; known: {', '.join(sorted(METHODS))}")
    paths = (source, target, alignment)
    total = check_same_line_count(paths)
    check_not_inputs([output], paths)
    cases = collections.Counter()
    work = functools.partial(extract_chunk, method=method, paths=paths)
    with atomic_output(output) as out:
        chunks = read_parallel_chunks(paths, chunk_size)
        results = parallel_imap(work, chunks, workers, total=total, desc="reorder",
                                unit="pairs", size=lambda result: len(result[0]))
        for lines, chunk_cases in results:
            out.writelines(lines)
            cases.update(chunk_cases)
    cases["pairs"] = total
    return cases


def format_cases(cases):
    """One-line summary of how often each DPE rule applied, as fractions of source tokens."""
    tokens = max(cases["tokens"], 1)
    return (
        f"{cases['pairs']} pairs, {cases['tokens']} source tokens: "
        f"unaligned {cases['unaligned'] / tokens:.1%}, "
        f"one-to-many {cases['one_to_many'] / tokens:.1%}, "
        f"many-to-one {cases['many_to_one'] / tokens:.1%}"
    )


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-reorder",
        description="Extract target-ordered source positions ({split}.reorder) from a "
        "BPE-level word alignment.",
    )
    parser.add_argument("--method", choices=sorted(METHODS), default="dpe",
                        help="extraction method (default: dpe, Zheng et al. 2021 Sec. 3.1; "
                        "btg: a BTG tree consistent with the alignment, for XL PE)")
    parser.add_argument("--source", required=True, help="source BPE text, one sentence a line")
    parser.add_argument("--target", required=True, help="target BPE text, one sentence a line")
    parser.add_argument("--alignment", required=True,
                        help="alignment over the BPE tokens, fairseq i-j links a line")
    parser.add_argument("--output", required=True, help="reorder file to write")
    parser.add_argument("--workers", type=int, default=default_workers(),
                        help="worker processes (default: all cores)")
    parser.add_argument("--chunk-size", type=int, default=10000,
                        help="sentence pairs per work unit (default: 10000)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    def body():
        cases = extract_file(args.method, args.source, args.target, args.alignment,
                             args.output, args.workers, args.chunk_size)
        print(f"xlpe-reorder: {format_cases(cases)}", file=sys.stderr)

    run_command(body, "xlpe-reorder")


if __name__ == "__main__":
    main()
