"""τ, FRS and exact match of the preorderer's best reordering and of the closest to the oracle
among its k best (an upper bound for any chooser: it reads the reference's alignment).

    python docs/results/preorderer-tr-en/closest_of_k.py work/lo-tr-en/preorderer.pt \
        work/lo-tr-en/bpe/test.tr work/lo-tr-en/bpe/test.btg.reorder
"""
import sys

from xlpe_fairseq.preordering.corpus import read_reorder, read_tokens
from xlpe_fairseq.preordering.metrics import corpus_scores, kendall_tau, monotone_scores
from xlpe_fairseq.preordering.preorderer import Preorderer


def main(checkpoint, source, oracle):
    sentences = read_tokens(source)
    references = read_reorder(oracle, [len(s) for s in sentences], source)
    candidates = [found or [(0.0, [])]
                  for found in Preorderer.load(checkpoint).predict_kbest(sentences, 8)]
    monotone = monotone_scores(references)["kendall_tau"]
    print("| candidates | Kendall's τ | FRS | exact | τ gap closed |")
    print("|---|---|---|---|---|")
    for k in (1, 2, 4, 8):
        closest = [max(found[:k], key=lambda c: kendall_tau(c[1], reference))[1]
                   for found, reference in zip(candidates, references)]
        scores = corpus_scores(closest, references)
        gap = (scores["kendall_tau"] - monotone) / (1 - monotone)
        print(f"| closest of the {k} best | {scores['kendall_tau']:.4f} | "
              f"{scores['fuzzy_reordering_score']:.4f} | {scores['exact_match']:.4f} | "
              f"{100 * gap:.1f}% |")


if __name__ == "__main__":
    main(*sys.argv[1:])
