"""``xlpe-reorder``: write ``{split}.reorder`` from BPE-level source, target and alignment.

Each output line holds one integer per source BPE token (EOS excluded): the 0-based position
of that token in the target-ordered source, a permutation of 0..n-1 (see reorder_file); with
``--method dpe --unaligned skip``, -1 for unaligned tokens and 0..m-1 for the m others.
Methods are looked up in METHODS: ``dpe`` (Zheng et al. 2021) and ``btg`` (a BTG tree
consistent with the alignment, for XL PE, Ding et al. 2020); others register the same way.
"""
import argparse
import collections
import functools
import re
import sys

from ..help_format import HelpFormatter
from ..io import (
    InputError,
    add_parallel_arguments,
    atomic_output,
    check_length,
    check_outputs,
    check_same_line_count,
    parallel_imap,
    read_parallel_chunks,
    run_command,
)
from .btg_rules import RULE_NAMES, btg_positions, btg_positions_of_columns
from .dpe_rules import UNALIGNED_CHOICES, UNALIGNED_KEEP, alignment_cases, dpe_positions

# BTG extraction is quadratic in sentence length on a scattered alignment (8,000 tokens take
# 16 s); the longest source sentence it takes, the same as the aligner's
MAX_BTG_TOKENS = 1023

# method name -> function(n_src, links) -> positions (a permutation of range(n_src)); btg takes
# the source tokens instead of n_src (it moves the BPE pieces of a word together)
METHODS = {"dpe": dpe_positions, "btg": btg_positions}
# sentence pairs per work unit
CHUNK_SIZE = 10000


# what the aligners write: i-j links separated by single spaces; other lines take the
# field-by-field path, which also names the first bad link
CANONICAL_LINKS = re.compile(r"[0-9]+-[0-9]+(?: [0-9]+-[0-9]+)*")


def parse_links(text, n_src, n_tgt):
    """Parse fairseq ``i-j`` links and check each one lies inside the sentence pair."""
    links = []
    for field in text.split():
        i, sep, j = field.partition("-")
        # ASCII digits only: str.isdigit also takes superscripts, which int() refuses
        if not (sep and _is_index(i) and _is_index(j)):
            raise InputError(f"link {field!r} is not of the form i-j")
        i, j = int(i), int(j)
        if i >= n_src or j >= n_tgt:
            raise InputError(
                f"link {field!r} is out of range for source length {n_src} "
                f"and target length {n_tgt}"
            )
        links.append((i, j))
    return links


def _is_index(text):
    return text.isascii() and text.isdigit()


def parse_link_columns(text, n_src, n_tgt):
    """Like :func:`parse_links`, as two lists: the source and the target index of each link."""
    if CANONICAL_LINKS.fullmatch(text):
        # the numbers in C-level passes, no (i, j) tuple built: btg wants the columns
        numbers = list(map(int, text.replace("-", " ").split(" ")))
        sources, targets = numbers[::2], numbers[1::2]
        if max(sources) < n_src and max(targets) < n_tgt:
            return sources, targets
    links = parse_links(text, n_src, n_tgt)  # names the first bad link
    return [i for i, _ in links], [j for _, j in links]


def add_positions_and_cases(method, n_src, links, cases, unaligned=UNALIGNED_KEEP):
    """Positions of one sentence by a method other than btg; adds its source tokens, by DPE
    alignment case, to ``cases`` (see format_cases). ``unaligned`` is dpe's keep/skip choice.
    """
    cases.update(alignment_cases(n_src, links))
    if method == "dpe":
        return dpe_positions(n_src, links, unaligned)
    return METHODS[method](n_src, links)


def extract_chunk(chunk, method, paths, unaligned=UNALIGNED_KEEP):
    """Reorder lines of one chunk of (source, target, alignment) rows, as one string (one
    object to send back from a worker, not thousands), their count, and rule statistics."""
    first_lineno, rows = chunk
    source_path, target_path, alignment_path = paths
    lines = []
    cases = collections.Counter()
    fired_rules = []  # btg: the rules each sentence fired, counted once for the chunk
    n_tokens = 0
    for offset, (source, target, alignment) in enumerate(rows):
        source_tokens = source.split()
        n_src, n_tgt = len(source_tokens), len(target.split())
        try:
            sources, targets = parse_link_columns(alignment, n_src, n_tgt)
        except InputError as error:
            raise InputError(f"{alignment_path} line {first_lineno + offset} "
                             f"(sources {source_path}, {target_path}): {error}") from None
        if method == "btg":
            check_length(source_path, first_lineno + offset, n_src, MAX_BTG_TOKENS,
                         "--method btg")
            positions, rules = btg_positions_of_columns(source_tokens, sources, targets)
            fired_rules.extend(rules)
            n_tokens += n_src
        else:
            positions = add_positions_and_cases(method, n_src, list(zip(sources, targets)),
                                                cases, unaligned)
        lines.append(" ".join(map(str, positions)))
    if method == "btg":  # btg counts each sentence once under each rule that changed it
        cases.update(fired_rules)
        cases["tokens"] = n_tokens
    lines.append("")
    return "\n".join(lines), len(rows), cases


def extract_file(method, source, target, alignment, output, workers=1, chunk_size=CHUNK_SIZE,
                 unaligned=UNALIGNED_KEEP):
    """Stream the three inputs through ``method`` into ``output``; return the case counts.

    ``unaligned`` (dpe only): ``keep`` unaligned words in their slots, or ``skip`` them
    (NO_ORDER_TARGET, -1, in the output; see dpe_rules)."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; known: {', '.join(sorted(METHODS))}")
    paths = (source, target, alignment)
    total = check_same_line_count(paths)
    check_outputs([output], paths)
    cases = collections.Counter()
    work = functools.partial(extract_chunk, method=method, paths=paths, unaligned=unaligned)
    with atomic_output(output) as out:
        chunks = read_parallel_chunks(paths, chunk_size)
        results = parallel_imap(work, chunks, workers, total=total, desc="reorder",
                                unit="pairs", size=lambda result: result[1])
        for text, _, chunk_cases in results:
            out.write(text)
            cases.update(chunk_cases)
    cases["pairs"] = total
    return cases


def format_cases(cases, method="dpe", unaligned=UNALIGNED_KEEP):
    """One-line summary of how often each rule applied: for btg the share of sentences each
    BTG rule changed, otherwise the share of source tokens under each DPE case (with
    ``--unaligned skip``, the unaligned ones are those without an order target)."""
    header = f"{cases['pairs']} pairs, {cases['tokens']} source tokens: "
    if method == "btg":
        pairs = max(cases["pairs"], 1)
        return header + "sentences touched by " + ", ".join(
            f"{rule} {cases[rule] / pairs:.1%}" for rule in RULE_NAMES)
    tokens = max(cases["tokens"], 1)
    skipped = " (no order target)" if unaligned != UNALIGNED_KEEP else ""
    return header + (
        f"unaligned {cases['unaligned'] / tokens:.1%}{skipped}, "
        f"one-to-many {cases['one_to_many'] / tokens:.1%}, "
        f"many-to-one {cases['many_to_one'] / tokens:.1%}"
    )


def extract_and_report(method, source, target, alignment, output, workers=1,
                       chunk_size=CHUNK_SIZE, unaligned=UNALIGNED_KEEP):
    """``xlpe-reorder``: ``extract_file``, then how often each rule applied said."""
    cases = extract_file(method, source, target, alignment, output, workers, chunk_size,
                         unaligned)
    print(f"xlpe-reorder: {format_cases(cases, method, unaligned)}", file=sys.stderr)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-reorder",
        description="Extract target-ordered source positions ({split}.reorder) from a "
        "BPE-level word alignment.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--method", choices=sorted(METHODS), default="dpe",
                        help="extraction method (default: dpe, Zheng et al. 2021 Sec. 3.1; "
                        "btg: a BTG tree consistent with the alignment, for XL PE)")
    parser.add_argument("--unaligned", choices=UNALIGNED_CHOICES,
                        help="dpe only: keep (default) pins an unaligned word to its slot and "
                        "supervises it there (the paper's rule); skip writes -1 (no order "
                        "target) for it and ranks the aligned words 0..m-1 among themselves "
                        "(the authors' public code). -1 lines are order-loss targets only: "
                        "XL PE, the preorderer and xlpe-reorder-text refuse them")
    parser.add_argument("--source", required=True, help="source BPE text, one sentence a line")
    parser.add_argument("--target", required=True, help="target BPE text, one sentence a line")
    parser.add_argument("--alignment", required=True,
                        help="alignment over the BPE tokens, fairseq i-j links a line")
    parser.add_argument("--output", required=True, help="reorder file to write")
    add_parallel_arguments(parser, chunk_size=CHUNK_SIZE, unit="sentence pairs")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.unaligned is not None and args.method != "dpe":
        parser.error(f"--unaligned applies to --method dpe only (btg attaches unaligned "
                     f"words to a neighbour), not to --method {args.method}")
    unaligned = args.unaligned or UNALIGNED_KEEP

    run_command(lambda: extract_and_report(args.method, args.source, args.target,
                                           args.alignment, args.output, args.workers,
                                           args.chunk_size, unaligned), "xlpe-reorder")


if __name__ == "__main__":
    main()
