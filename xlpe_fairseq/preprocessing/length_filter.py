"""The length filter of tokenized training pairs: empty or too long sides, and lengths out of
proportion, judged against the corpus's own ratio.

fairseq's prepare scripts run Moses' clean-corpus-n with ``-ratio 1.5``: a pair goes when one
side has more than 1.5 times the tokens of the other. That assumes the two languages give
about as many tokens for the same text; MeCab gives Japanese about 1.4 times English's tokens
(the catalogs of docs/pipeline.md), so the fixed rule dropped 38% of an English→Japanese corpus,
nearly all good pairs. ``--ratio-rule corpus`` (the default) measures the corpus's typical
ratio first, the median of ``target tokens / source tokens`` over the pairs weighted by their
tokens (long pairs say more about it than one-word labels; a median, so that misaligned pairs
do not move it), and drops a pair whose ratio is more than ``--max-ratio`` times off that
typical ratio, either way. Token counts of short pairs are coarse (a one-word label translated
by three tokens is a ratio of 3), so each side's count gets ``SHORT_PAIR_SLACK`` tokens added
before the ratio is taken: that decides short pairs and leaves long ones to the ratio. A pair
of 4 against 20 tokens still goes. ``--ratio-rule fixed`` is Moses' rule as it was (typical
ratio 1, no slack), which the published recipes keep so that their data stay as measured.

    python -m xlpe_fairseq.preprocessing.length_filter --source tok/train.full.en \\
        --target tok/train.full.ja --out-source tok/train.en --out-target tok/train.ja \\
        --max-len 175

Two passes over the files, memory bounded by the histogram of lengths (at most ``max_len``²
entries), so millions of pairs take no more memory than a hundred. It says ``== kept K of N
training pairs``, warns when more than 5% go (how many for each reason), and fails in one line,
writing nothing, when none is left.
"""
import argparse
import collections
import sys

from ..help_format import HelpFormatter
from ..io import (
    InputError,
    Number,
    atomic_outputs,
    check_outputs,
    check_same_line_count,
    positive_int,
    run_command,
    text_lines,
)

DEFAULT_MAX_RATIO = 1.5
SHORT_PAIR_SLACK = 5
WARN_SHARE = 0.05
RULES = ("corpus", "fixed")


def token_counts(source, target):
    """``(source tokens, target tokens)`` of each pair of the two files, streamed."""
    with text_lines(source) as source_lines, text_lines(target) as target_lines:
        for source_line, target_line in zip(source_lines, target_lines):
            yield len(source_line.split()), len(target_line.split())


def typical_ratio(histogram):
    """The median of ``nt / ns`` over ``{(ns, nt): pairs}``, each pair weighted by its tokens
    ``ns + nt``; None for no pairs."""
    weighted = sorted(((nt / ns, pairs * (ns + nt)) for (ns, nt), pairs in histogram.items()))
    half = sum(weight for _, weight in weighted) / 2
    seen = 0
    for ratio, weight in weighted:
        seen += weight
        if seen >= half:
            return ratio
    return None


class LengthRule:
    """Which pairs stay: 1..``max_len`` tokens a side and a length ratio within ``max_ratio``
    of ``ratio`` (either way), after ``slack`` tokens are added to each side."""

    def __init__(self, max_len, max_ratio, ratio=1.0, slack=0):
        self.max_len, self.max_ratio, self.ratio, self.slack = max_len, max_ratio, ratio, slack

    def reason(self, ns, nt):
        """Why the pair goes (``empty``, ``long``, ``ratio``), or None if it stays."""
        if ns < 1 or nt < 1:
            return "empty"
        if ns > self.max_len or nt > self.max_len:
            return "long"
        expected = self.ratio * ns + self.slack
        found = nt + self.slack
        if found > self.max_ratio * expected or expected > self.max_ratio * found:
            return "ratio"
        return None

    def describe(self):
        if self.slack == 0 and self.ratio == 1.0:
            return f"a length ratio over {self.max_ratio:g}"
        return (f"a length ratio more than {self.max_ratio:g} times off the corpus's "
                f"{self.ratio:.2f} target tokens a source token")


def corpus_rule(source, target, max_len, max_ratio):
    """The rule of ``--ratio-rule corpus``: the typical ratio measured on the pairs that fit
    ``max_len``."""
    histogram = collections.Counter((ns, nt) for ns, nt in token_counts(source, target)
                                    if 1 <= ns <= max_len and 1 <= nt <= max_len)
    ratio = typical_ratio(histogram)
    return LengthRule(max_len, max_ratio, ratio or 1.0, SHORT_PAIR_SLACK)


def dropped_summary(counts, rule):
    parts = {"long": f"{counts['long']} longer than {rule.max_len} tokens",
             "empty": f"{counts['empty']} with an empty side",
             "ratio": f"{counts['ratio']} with {rule.describe()}"}
    return ", ".join(text for reason, text in parts.items() if counts[reason])


def nothing_left_hint(dropped, rule):
    if not dropped:
        return "the files are empty"
    if dropped["ratio"] and not rule.slack:
        hint = ("judge the ratio against the corpus's own with --ratio-rule corpus "
                "(RATIO_RULE=corpus)")
    elif dropped["ratio"] or dropped["long"]:
        hint = ("check that line i of one file translates line i of the other, or raise "
                "--max-ratio or --max-len (MAX_RATIO, MAX_LEN)")
    else:
        hint = "every pair has an empty side"
    return f"{dropped_summary(dropped, rule)}: {hint}"


def filter_pairs(source, target, out_source, out_target, max_len, max_ratio=DEFAULT_MAX_RATIO,
                 rule="corpus"):
    """Write the pairs that stay; return ``(kept, total, LengthRule, Counter of reasons)``.
    InputError, and no output, when none stays."""
    total = check_same_line_count([source, target])
    check_outputs([out_source, out_target], [source, target])
    if rule == "corpus":
        length_rule = corpus_rule(source, target, max_len, max_ratio)
    else:
        length_rule = LengthRule(max_len, max_ratio)
    dropped = collections.Counter()
    kept = 0
    with atomic_outputs([out_source, out_target]) as (source_out, target_out), \
            text_lines(source) as source_lines, text_lines(target) as target_lines:
        for source_line, target_line in zip(source_lines, target_lines):
            reason = length_rule.reason(len(source_line.split()), len(target_line.split()))
            if reason:
                dropped[reason] += 1
                continue
            source_out.write(source_line + "\n")
            target_out.write(target_line + "\n")
            kept += 1
        if not kept:
            raise InputError(f"{source}, {target}: none of the {total} training pairs is left "
                             f"after the length filter ({nothing_left_hint(dropped, length_rule)})")
    return kept, total, length_rule, dropped


def report(kept, total, rule, dropped, prog):
    typical = f" (typical ratio {rule.ratio:.2f} target tokens a source token)" if rule.slack else ""
    print(f"== kept {kept} of {total} training pairs{typical}", file=sys.stderr)
    if total and (total - kept) / total > WARN_SHARE:
        print(f"{prog}: warning: dropped {total - kept} of {total} training pairs "
              f"({(total - kept) / total:.1%}): {dropped_summary(dropped, rule)}",
              file=sys.stderr)


def filter_and_report(source, target, out_source, out_target, max_len,
                      max_ratio=DEFAULT_MAX_RATIO, rule="corpus", prog="length_filter"):
    """``filter_pairs``, then what it kept and dropped said (``report``) under ``prog``."""
    report(*filter_pairs(source, target, out_source, out_target, max_len, max_ratio, rule), prog)


def build_parser():
    parser = argparse.ArgumentParser(prog="length_filter", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--source", required=True, help="tokenized source side")
    parser.add_argument("--target", required=True, help="tokenized target side")
    parser.add_argument("--out-source", required=True, help="the source side of the kept pairs")
    parser.add_argument("--out-target", required=True, help="the target side of the kept pairs")
    parser.add_argument("--max-len", required=True, type=positive_int,
                        help="most tokens a side")
    parser.add_argument("--max-ratio", type=Number(float, above=1, maximum=1e6),
                        default=DEFAULT_MAX_RATIO,
                        help="how far a pair's length ratio may be from the typical one, as a "
                        "factor either way (default: %(default)s)")
    parser.add_argument("--ratio-rule", choices=RULES, default="corpus",
                        help="corpus: judge the ratio against the corpus's typical ratio; "
                        "fixed: against 1, as Moses' clean-corpus-n (default: %(default)s)")
    parser.add_argument("--prog", default="length_filter", help="the name warnings and errors "
                        "start with (the recipe that runs the filter)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    run_command(lambda: filter_and_report(args.source, args.target, args.out_source,
                                          args.out_target, args.max_len, args.max_ratio,
                                          args.ratio_rule, args.prog), args.prog)


if __name__ == "__main__":
    main()
