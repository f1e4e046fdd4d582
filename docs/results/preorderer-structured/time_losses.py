"""Training time of an epoch of each preorderer loss, interleaved on the same batches.

    python docs/results/preorderer-structured/time_losses.py BPE_DIR SRC [--rounds R]
        [--threads T] [--batch-tokens B] [--max-length L] [--sentences N] [--device D]

Builds the training batches of BPE_DIR/train.SRC and train.btg.reorder as xlpe-preorder-train
does (sentences of 2 to L tokens, B padded tokens a batch) and, in each of R rounds, trains one
epoch of every loss over the same batches from the same preorderer model, the order of the losses
alternating from round to round, so that machine load and drift hit all losses alike. Prints
each epoch's seconds and, per loss, the median epoch and its ratio to the pairwise one's.
"""
import argparse
import statistics
import time

import torch

from xlpe_fairseq.preordering.btg_search import word_units
from xlpe_fairseq.preordering.corpus import read_source_with_reorder
from xlpe_fairseq.preordering.preorderer import Preorderer, length_batches
from xlpe_fairseq.preordering.train import LOSSES, train_epoch
from xlpe_fairseq.preordering.vocabulary import Vocabulary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bpe")
    parser.add_argument("src")
    parser.add_argument("--rounds", type=int, default=3)
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
    state = {k: v.clone() for k, v in preorderer.scorer.state_dict().items()}
    times = {loss: [] for loss in args.losses}
    for round_ in range(args.rounds):
        order = args.losses if round_ % 2 == 0 else args.losses[::-1]
        for loss in order:
            preorderer.scorer.load_state_dict(state)
            preorderer.to(args.device)
            optimizer = torch.optim.Adam(preorderer.scorer.parameters(), lr=3e-3)
            start = time.perf_counter()
            train_epoch(preorderer, optimizer, encoded, batches, loss, 1.0, args.device)
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            times[loss].append(time.perf_counter() - start)
            print(f"round {round_ + 1} {loss}: {times[loss][-1]:.1f} s "
                  f"({tokens / times[loss][-1]:.0f} tokens/s)", flush=True)
    base = statistics.median(times[args.losses[0]])
    for loss, seconds in times.items():
        ratios = [s / b for s, b in zip(seconds, times[args.losses[0]])]
        print(f"{loss}: median epoch {statistics.median(seconds):.1f} s, "
              f"{statistics.median(seconds) / base:.2f}x {args.losses[0]} "
              f"(per round {', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
