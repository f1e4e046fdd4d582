"""``xlpe-preorder-train``: fit a source-only preorderer to oracle reorder positions.

The oracle positions are the training set's BTG positions (``xlpe-reorder --method btg``,
Ding et al. 2020 / Neubig et al. 2012); the fitted preorderer predicts them for sentences
without a target, i.e. valid and test sets.
"""
import argparse
import random
import sys
import time

import torch

from ..preprocessing.io_utils import check_not_inputs, run_command
from .corpus import read_source_with_reorder
from .metrics import corpus_scores, monotone_scores
from .preorderer import Preorderer, length_batches
from .vocabulary import Vocabulary


def train_preorderer(sentences, positions, valid=None, *, embed_dim=64, hidden_dim=128,
                     num_layers=1, dropout=0.1, max_vocab=30000, epochs=3, max_seconds=None,
                     batch_tokens=2000, max_train_length=200, lr=3e-3, seed=1, save=None,
                     log=None):
    """Train a Preorderer on token lists and their oracle positions; return the best one.

    ``valid`` is an optional ``(sentences, positions)`` pair: after each epoch the model is
    scored on it (Kendall's tau) and the best epoch is kept (and written to ``save``, if
    given); without it the last epoch is kept. Training stops after ``epochs`` epochs or
    once ``max_seconds`` have passed at the end of an epoch. Sentences longer than
    ``max_train_length`` are skipped in training: the pairwise loss is quadratic in length.
    ``log`` receives one line of text per epoch.
    """
    torch.manual_seed(seed)
    rng = random.Random(seed)
    log = log or (lambda line: None)
    examples = [(s, p) for s, p in zip(sentences, positions) if 2 <= len(s) <= max_train_length]
    if not examples:
        raise ValueError("no training sentence of 2 to max_train_length tokens")
    preorderer = Preorderer.create(Vocabulary.build((s for s, _ in examples), max_vocab),
                                   embed_dim=embed_dim, hidden_dim=hidden_dim,
                                   num_layers=num_layers, dropout=dropout)
    scorer = preorderer.scorer
    optimizer = torch.optim.Adam(scorer.parameters(), lr=lr)
    batches = list(length_batches([len(s) for s, _ in examples], batch_tokens))
    if valid is not None:
        log(f"valid monotone: {_format(monotone_scores(valid[1]))}")
    best_tau = None
    best_state = None
    start = time.monotonic()
    for epoch in range(1, epochs + 1):
        scorer.train()
        rng.shuffle(batches)
        total_loss = 0.0
        for batch in batches:
            tokens, lengths = preorderer.encode_batch([examples[k][0] for k in batch])
            reference = torch.zeros_like(tokens)
            for row, k in enumerate(batch):
                reference[row, :lengths[row]] = torch.tensor(examples[k][1])
            loss = scorer.pairwise_loss(scorer(tokens, lengths), reference, lengths)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(scorer.parameters(), 1.0)
            optimizer.step()
            total_loss += loss.item()
        message = (f"epoch {epoch}: loss {total_loss / len(batches):.4f}, "
                   f"{time.monotonic() - start:.0f} s")
        if valid is not None:
            scores = corpus_scores(preorderer.predict(valid[0]), valid[1])
            message += f", valid {_format(scores)}"
            if best_tau is None or scores["kendall_tau"] > best_tau:
                best_tau = scores["kendall_tau"]
                best_state = {k: v.detach().clone() for k, v in scorer.state_dict().items()}
                if save is not None:
                    preorderer.save(save)
                message += " (best)"
        log(message)
        if max_seconds is not None and time.monotonic() - start > max_seconds:
            break
    if best_state is not None:
        scorer.load_state_dict(best_state)
    elif save is not None:
        preorderer.save(save)
    scorer.eval()
    return preorderer


def _format(scores):
    return f"tau {scores['kendall_tau']:.4f} FRS {scores['fuzzy_reordering_score']:.4f}"


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-preorder-train",
        description="Train a source-only preorderer (BiLSTM scorer, pairwise ranking loss) on "
        "source BPE text and its oracle reorder positions.",
    )
    parser.add_argument("--source", required=True, help="training source BPE text")
    parser.add_argument("--reorder", required=True,
                        help="training reorder file (oracle positions, e.g. BTG)")
    parser.add_argument("--valid-source", help="validation source BPE text")
    parser.add_argument("--valid-reorder", help="validation reorder file; the epoch with the "
                        "best Kendall's tau on it is kept")
    parser.add_argument("--save", required=True, help="checkpoint to write (e.g. preorderer.pt)")
    parser.add_argument("--embed-dim", type=int, default=64, help="token embedding size")
    parser.add_argument("--hidden-dim", type=int, default=128, help="BiLSTM size per direction")
    parser.add_argument("--layers", type=int, default=1, help="BiLSTM layers")
    parser.add_argument("--dropout", type=float, default=0.1, help="dropout rate")
    parser.add_argument("--max-vocab", type=int, default=30000,
                        help="most frequent source tokens kept; the rest map to <unk>")
    parser.add_argument("--epochs", type=int, default=3, help="maximum number of epochs")
    parser.add_argument("--max-seconds", type=float,
                        help="stop after the epoch that passes this many seconds")
    parser.add_argument("--batch-tokens", type=int, default=2000,
                        help="padded source tokens per training batch")
    parser.add_argument("--max-train-length", type=int, default=200,
                        help="skip longer training sentences (the loss is quadratic in length)")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate")
    parser.add_argument("--seed", type=int, default=1, help="random seed")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if (args.valid_source is None) != (args.valid_reorder is None):
        parser.error("--valid-source and --valid-reorder go together")

    def body():
        inputs = [args.source, args.reorder] + (
            [args.valid_source, args.valid_reorder] if args.valid_source else [])
        check_not_inputs([args.save], inputs)
        sentences, positions = read_source_with_reorder(args.source, args.reorder)
        valid = None
        if args.valid_source:
            valid = read_source_with_reorder(args.valid_source, args.valid_reorder)
        train_preorderer(
            sentences, positions, valid, embed_dim=args.embed_dim, hidden_dim=args.hidden_dim,
            num_layers=args.layers, dropout=args.dropout, max_vocab=args.max_vocab,
            epochs=args.epochs, max_seconds=args.max_seconds, batch_tokens=args.batch_tokens,
            max_train_length=args.max_train_length, lr=args.lr, seed=args.seed, save=args.save,
            log=lambda line: print(f"xlpe-preorder-train: {line}", file=sys.stderr, flush=True),
        )

    run_command(body, "xlpe-preorder-train")


if __name__ == "__main__":
    main()
