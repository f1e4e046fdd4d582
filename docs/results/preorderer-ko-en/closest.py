"""Write, for each sentence, the reordering among a preorderer's k best that is closest to the
oracle's (Kendall's τ; the better-ranked on ties): what a chooser that always found the closest
order among the k best would give XL PE. It reads the reference's alignment, so it is a
yardstick for choosers, not a system.

    python docs/results/preorderer-ko-en/closest.py PREORDERER.pt SOURCE_BPE ORACLE_REORDER
        DICT K OUTPUT

DICT is the source dictionary of the data-bin: tokens outside it are read as ``<unk>``, as
fairseq-generate's ``--preorderer`` reads them, so that the k best are those
``--preorderer-nbest`` chooses from. Prints τ, FRS and exact match of the best and of the
closest reorderings.
"""
import sys

from fairseq.data import Dictionary

from xlpe_fairseq.preordering.corpus import read_reorder, read_tokens
from xlpe_fairseq.preordering.cross_fit import write_reorder
from xlpe_fairseq.preordering.metrics import corpus_scores, kendall_tau
from xlpe_fairseq.preordering.preorderer import Preorderer


def main(preorderer, source, oracle, dictionary, k, output):
    vocabulary = Dictionary.load(dictionary)
    sentences = [[vocabulary[vocabulary.index(t)] for t in tokens]
                 for tokens in read_tokens(source)]
    references = read_reorder(oracle, [len(s) for s in sentences], source)
    kbest = [found or [(0.0, list(range(len(s))))] for found, s in
             zip(Preorderer.load(preorderer).predict_kbest(sentences, int(k)), sentences)]
    closest = [max(enumerate(found), key=lambda c: (kendall_tau(c[1][1], ref), -c[0]))[1][1]
               for found, ref in zip(kbest, references)]
    write_reorder(output, closest)
    for name, orders in (("best", [found[0][1] for found in kbest]), ("closest", closest)):
        scores = corpus_scores(orders, references)
        print(f"{name}: τ {scores['kendall_tau']:.4f} FRS {scores['fuzzy_reordering_score']:.4f} "
              f"exact {scores['exact_match']:.4f}")


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])
