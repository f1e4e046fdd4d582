"""Training time of an epoch of each preorderer loss, interleaved on the same batches.

    python docs/results/preorderer-structured/time_losses.py BPE_DIR SRC [--epochs E]
        [--threads T] [--batch-tokens B] [--max-length L] [--sentences N] [--device D]

Builds the training batches of BPE_DIR/train.SRC and train.btg.reorder as xlpe-preorder-train
does (sentences of 2 to L tokens, B padded tokens a batch) and trains each loss's own model
(the same initial weights) for E epochs over the same batches, interleaved batch by batch (the
first loss alternating), so that the load of other jobs on the machine hits all losses alike.
Prints each epoch's wall and CPU seconds per loss and their ratios to the first loss's.
"""
import argparse
import copy
import statistics
import time

import torch

from xlpe_fairseq.preordering.btg_search import word_units
from xlpe_fairseq.preordering.corpus import read_source_with_reorder
from xlpe_fairseq.preordering.preorderer import Preorderer, length_batches
from xlpe_fairseq.preordering.train import LOSSES, train_step
from xlpe_fairseq.preordering.vocabulary import Vocabulary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bpe")
    parser.add_argument("src")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-tokens", type=int, default=4000)
    parser.add_argument("--max-length", type=int, default=200)
    parser.add_argument("--sentences", type=int, help="only the first N training sentences")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--losses", nargs="+", choices=LOSSES, default=["pairwise", "structured"])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sentences, positions = read_source_with_reorder(f"{args.bpe}/train.{args.src}",
                                                    f"{args.bpe}/train.btg.reorder")
    examples = [(s, p) for s, p in zip(sentences, positions)
                if 2 <= len(s) <= args.max_length][:args.sentences]
    torch.manual_seed(1)
    preorderer = Preorderer.create(Vocabulary.build((s for s, _ in examples), 30000))
    encoded = [(torch.tensor(preorderer.vocabulary.encode(s)), torch.tensor(p), word_units(s))
               for s, p in examples]
    batches = list(length_batches([len(s) for s, _ in examples], args.batch_tokens))
    tokens = sum(len(s) for s, _ in examples)
    print(f"{len(examples)} sentences, {tokens} tokens, {len(batches)} batches, "
          f"{args.threads} threads, {args.device}")
    models = {loss: copy.deepcopy(preorderer).to(args.device) for loss in args.losses}
    optimizers = {loss: torch.optim.Adam(model.scorer.parameters(), lr=3e-3)
                  for loss, model in models.items()}
    for model in models.values():
        model.scorer.train()
    ratios = []
    for epoch in range(args.epochs):
        # wall seconds and the process's CPU seconds: on a loaded machine the CPU time still
        # counts the work done, where the wall time also counts the waiting
        seconds = {loss: [0.0, 0.0] for loss in args.losses}
        for step, batch in enumerate(batches):
            order = args.losses if (epoch + step) % 2 == 0 else args.losses[::-1]
            for loss in order:
                start, cpu_start = time.perf_counter(), time.process_time()
                train_step(models[loss], optimizers[loss],
                           [encoded[k] for k in batch], loss, 1.0, args.device)
                if args.device.startswith("cuda"):
                    torch.cuda.synchronize()
                seconds[loss][0] += time.perf_counter() - start
                seconds[loss][1] += time.process_time() - cpu_start
        base = seconds[args.losses[0]]
        ratios.append({loss: [s / b for s, b in zip(seconds[loss], base)]
                       for loss in args.losses})
        print(f"epoch {epoch + 1}: " + ", ".join(
            f"{loss} {wall:.1f} s ({tokens / wall:.0f} tokens/s, {wall / base[0]:.2f}x; "
            f"CPU {cpu:.1f} s, {cpu / base[1]:.2f}x)"
            for loss, (wall, cpu) in seconds.items()), flush=True)
    for loss in args.losses[1:]:
        print(f"{loss}: {statistics.median(r[loss][0] for r in ratios):.2f}x "
              f"{args.losses[0]}'s wall time, {statistics.median(r[loss][1] for r in ratios):.2f}x "
              f"its CPU time (medians over {args.epochs} epochs)")


if __name__ == "__main__":
    main()
