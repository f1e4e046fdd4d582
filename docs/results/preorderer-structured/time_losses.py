"""Training time per batch of the preorderer's losses, interleaved on the same batches.

    python docs/results/preorderer-structured/time_losses.py BPE_DIR SRC [BATCHES]

Draws BATCHES (default 40) training batches of 4,000 padded tokens (as xlpe-preorder-train
builds them) and times one Adam step of each loss on each batch in turn, so that machine
load hits all losses alike; prints the median seconds per batch and the ratio to pairwise.
"""
import random
import statistics
import sys
import time

import torch

from xlpe_fairseq.preordering.btg_search import word_units
from xlpe_fairseq.preordering.corpus import read_source_with_reorder
from xlpe_fairseq.preordering.preorderer import Preorderer, length_batches
from xlpe_fairseq.preordering.train import LOSSES, _collate, training_loss
from xlpe_fairseq.preordering.vocabulary import Vocabulary


def main(bpe, src, count=40):
    torch.set_num_threads(1)
    sentences, positions = read_source_with_reorder(f"{bpe}/train.{src}",
                                                    f"{bpe}/train.btg.reorder")
    examples = [(s, p) for s, p in zip(sentences, positions) if 2 <= len(s) <= 200]
    preorderer = Preorderer.create(Vocabulary.build((s for s, _ in examples), 30000))
    scorer = preorderer.scorer
    optimizer = torch.optim.Adam(scorer.parameters(), lr=3e-3)
    batches = list(length_batches([len(s) for s, _ in examples], 4000))
    random.Random(1).shuffle(batches)
    times = {loss: [] for loss in LOSSES}
    for batch in batches[:count]:
        items = [(torch.tensor(preorderer.vocabulary.encode(examples[k][0])),
                  torch.tensor(examples[k][1]), word_units(examples[k][0])) for k in batch]
        tokens, reference, lengths = _collate(items, preorderer.vocabulary.pad_index, "cpu")
        units = [u for _, _, u in items]
        for loss in times:
            start = time.perf_counter()
            value = training_loss(scorer, tokens, reference, lengths, units, loss, 1.0)
            optimizer.zero_grad()
            value.backward()
            optimizer.step()
            times[loss].append(time.perf_counter() - start)
    base = statistics.median(times["pairwise"])
    for loss, seconds in times.items():
        print(f"{loss}: {statistics.median(seconds):.3f} s a batch, "
              f"{statistics.median(seconds) / base:.2f}x pairwise, total {sum(seconds):.1f} s")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:]))
