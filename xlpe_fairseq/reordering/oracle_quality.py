"""How well a reorder permutation follows the alignment: split BPE words and realized inversions.

Used to check the BTG oracle (``btg_rules``) against the alignment it comes from:

- a **split word** is a multi-piece BPE word whose pieces do not take consecutive positions in
  their own order (the oracle must split none);
- an **alignment-implied inversion** is a pair of aligned source words ``u`` before ``v`` whose
  target spans are strictly ordered the other way round (every target position of ``v``, the
  union of its pieces' links, precedes every target position of ``u``); it is **realized** when
  every piece of ``v`` comes before every piece of ``u`` in the permutation.

``mean_sort_positions`` is the reference point: pieces sorted by the mean of their own target
positions (unaligned pieces next to the previous aligned one) and made BTG-reachable by the same
greedy repair as the oracle.

``python -m xlpe_fairseq.reordering.oracle_quality --source S --target T --alignment A`` prints
both figures for the BTG oracle and for that reference, and the oracle's speed.
"""
import argparse
import collections
import time

from ..help_format import HelpFormatter
from ..io import check_same_line_count, read_parallel_chunks, run_command
from .btg_rules import btg_positions, make_btg_reachable, words
from .extract import parse_links

METHODS = {"btg": btg_positions,
           "mean-sort": lambda source_tokens, links: mean_sort_positions(len(source_tokens), links)}


def split_words(source_tokens, positions):
    """(multi-piece words, how many of them ``positions`` splits or reorders inside)."""
    multi = split = 0
    for pieces in _word_pieces(source_tokens):
        if len(pieces) > 1:
            multi += 1
            first = positions[pieces[0]]
            split += [positions[i] for i in pieces] != list(range(first, first + len(pieces)))
    return multi, split


def implied_inversions(source_tokens, links, positions):
    """(alignment-implied inversions between source words, how many ``positions`` realizes)."""
    word_of = words(source_tokens)
    low = {}
    high = {}
    for i, j in links:
        w = word_of[i]
        low[w] = min(low.get(w, j), j)
        high[w] = max(high.get(w, j), j)
    pieces = _word_pieces(source_tokens)
    first = [min(positions[i] for i in word) for word in pieces]
    last = [max(positions[i] for i in word) for word in pieces]
    aligned = sorted(low)
    implied = realized = 0
    for a, u in enumerate(aligned):
        for v in aligned[a + 1:]:
            if high[v] < low[u]:
                implied += 1
                realized += last[v] < first[u]
    return implied, realized


def _word_pieces(source_tokens):
    """The piece indices of each word."""
    pieces = []
    for i, w in enumerate(words(source_tokens)):
        if w == len(pieces):
            pieces.append([])
        pieces[w].append(i)
    return pieces


def mean_sort_positions(n_src, links):
    """Pieces sorted by the mean of their target positions, unaligned pieces keyed like the
    aligned piece before them (or, at the start, after them), then made BTG-reachable."""
    sums = [0] * n_src
    counts = [0] * n_src
    for i, j in set(links):
        sums[i] += j
        counts[i] += 1
    keys = [sums[i] / counts[i] if counts[i] else None for i in range(n_src)]
    previous = next((key for key in keys if key is not None), 0)
    for i, key in enumerate(keys):
        if key is None:
            keys[i] = previous
        else:
            previous = key
    positions = [0] * n_src
    for rank, i in enumerate(sorted(range(n_src), key=keys.__getitem__)):
        positions[i] = rank
    return make_btg_reachable(positions)[0]


def score_corpus(source, target, alignment):
    """Per method of ``METHODS``: multi-piece words, split words, implied and realized
    inversions, and the seconds (CPU) the method took, summed over the corpus."""
    paths = (source, target, alignment)
    check_same_line_count(paths)
    scores = {method: collections.Counter() for method in METHODS}
    for first_lineno, rows in read_parallel_chunks(paths, 10000):
        parsed = [(source_line.split(), parse_links(links, len(source_line.split()),
                                                    len(target_line.split())))
                  for source_line, target_line, links in rows]
        for method, positions_of in METHODS.items():
            score = scores[method]
            start = time.process_time()
            all_positions = [positions_of(tokens, links) for tokens, links in parsed]
            score["seconds"] += time.process_time() - start
            for (tokens, links), positions in zip(parsed, all_positions):
                multi, split = split_words(tokens, positions)
                implied, realized = implied_inversions(tokens, links, positions)
                score.update(pairs=1, multi_piece_words=multi, split_words=split,
                             implied_inversions=implied, realized_inversions=realized)
    return scores


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m xlpe_fairseq.reordering.oracle_quality",
        description="Split BPE words and realized alignment-implied inversions of the BTG oracle "
        "and of a mean-target-position sort with the same BTG repair.",
        formatter_class=HelpFormatter)
    parser.add_argument("--source", required=True, help="source BPE text, one sentence a line")
    parser.add_argument("--target", required=True, help="target BPE text, one sentence a line")
    parser.add_argument("--alignment", required=True, help="fairseq i-j links over BPE tokens")
    args = parser.parse_args(argv)

    def body():
        for method, score in score_corpus(args.source, args.target, args.alignment).items():
            print(f"{method}: {score['pairs']} pairs; split words {score['split_words']} of "
                  f"{score['multi_piece_words']} "
                  f"({score['split_words'] / max(score['multi_piece_words'], 1):.1%}); "
                  f"realized inversions {score['realized_inversions']} of "
                  f"{score['implied_inversions']} "
                  f"({score['realized_inversions'] / max(score['implied_inversions'], 1):.2%}); "
                  f"{score['pairs'] / max(score['seconds'], 1e-9):,.0f} pairs/s (one core)")

    run_command(body, "oracle_quality")


if __name__ == "__main__":
    main()
