"""``xlpe-preorder-train``: fit a source-only preorderer to oracle reorder positions.

The oracle positions are the training set's BTG positions (``xlpe-reorder --method btg``,
Ding et al. 2020 / Neubig et al. 2012); the fitted preorderer predicts them for sentences
without a target, i.e. valid and test sets.
"""
import argparse
import contextlib
import random
import sys
import time

import torch

from ..help_format import HelpFormatter
from ..io import SEED, WORKERS, InputError, Number, check_outputs, positive_int, run_command
from .corpus import read_sample_with_reorder, read_source_with_reorder
from .btg_search import word_units
from .metrics import corpus_scores, monotone_scores
from .preorderer import Preorderer, check_device, length_batches
from .structured_loss import structured_hinge_loss
from .vocabulary import Vocabulary


PENALTY_GRID = (0.0, 0.25, 0.5, 1.0, 2.0)
LOSSES = ("pairwise", "structured", "both")


def train_preorderer(sentences, positions, valid=None, *, embed_dim=64, hidden_dim=128,
                     pair_dim=64, num_layers=1, dropout=0.1, max_vocab=30000, epochs=3,
                     max_seconds=None, batch_tokens=4000, max_train_length=200, lr=3e-3,
                     loss="pairwise", margin=1.0, seed=1, device="cpu", save=None, log=None):
    """Train a Preorderer on token lists and their oracle positions; return the best one.

    ``valid`` is an optional ``(sentences, positions)`` pair: after each epoch the model is
    scored on it (Kendall's tau of the BTG search's output) and the best epoch is kept;
    then the search's inversion penalty is chosen from ``PENALTY_GRID`` by the sum of
    Kendall's tau and FRS on it. Without ``valid`` the last epoch is kept, with penalty 0.
    The result is written to ``save``, if given. Training runs ``epochs`` epochs, the same
    batches in the same order for a given ``seed``; ``max_seconds`` is only a safety cap
    (checked after each epoch) and makes the result depend on the machine's speed.
    Sentences longer than ``max_train_length`` are skipped in training: the pair scores
    take memory quadratic in length. ``loss``: ``pairwise`` (a logistic loss per token
    pair), ``structured`` (the hinge over BTG trees, ``structured_loss``, with ``margin`` per
    wrong pair) or ``both`` (their sum). ``log`` receives one line of text per epoch.
    """
    if loss not in LOSSES:
        raise ValueError(f"loss {loss!r}: expected one of {', '.join(LOSSES)}")
    torch.manual_seed(seed)
    rng = random.Random(seed)
    log = log or (lambda line: None)
    examples = [(s, p) for s, p in zip(sentences, positions) if 2 <= len(s) <= max_train_length]
    if not examples:
        raise ValueError("no training sentence of 2 to max_train_length tokens")
    if len(examples) < len(sentences):
        log(f"{len(sentences) - len(examples)} of {len(sentences)} sentences left out of "
            f"training: fewer than 2 or more than {max_train_length} tokens")
    preorderer = Preorderer.create(Vocabulary.build((s for s, _ in examples), max_vocab),
                                   embed_dim=embed_dim, hidden_dim=hidden_dim,
                                   pair_dim=pair_dim, num_layers=num_layers, dropout=dropout)
    preorderer.to(device)
    scorer = preorderer.scorer
    encoded = [(torch.tensor(preorderer.vocabulary.encode(s)), torch.tensor(p), word_units(s))
               for s, p in examples]
    optimizer = torch.optim.Adam(scorer.parameters(), lr=lr)
    batches = list(length_batches([len(s) for s, _ in examples], batch_tokens))
    if valid is not None:
        log(f"valid monotone: {format_scores(monotone_scores(valid[1]))}")
    best_tau = None
    best_state = None
    start = time.monotonic()
    for epoch in range(1, epochs + 1):
        scorer.train()
        rng.shuffle(batches)
        total_loss = 0.0
        tokens_seen = 0
        epoch_start = time.monotonic()
        for batch in batches:
            batch_loss, batch_tokens = train_step(preorderer, optimizer,
                                                  [encoded[k] for k in batch], loss, margin,
                                                  device)
            total_loss += batch_loss
            tokens_seen += batch_tokens
        seconds = time.monotonic() - epoch_start
        message = (f"epoch {epoch}: loss {total_loss / len(batches):.4f}, {seconds:.0f} s "
                   f"({tokens_seen / max(seconds, 1e-9):.0f} tokens/s)")
        if valid is not None:
            scores = corpus_scores(preorderer.predict(valid[0]), valid[1])
            message += f", valid {format_scores(scores)}"
            if best_tau is None or scores["kendall_tau"] > best_tau:
                best_tau = scores["kendall_tau"]
                best_state = {k: v.detach().clone() for k, v in scorer.state_dict().items()}
                message += " (best)"
        log(message)
        if max_seconds is not None and time.monotonic() - start > max_seconds:
            log(f"stopped by --max-seconds {max_seconds:g} after epoch {epoch}")
            break
    if best_state is not None:
        scorer.load_state_dict(best_state)
    scorer.eval()
    if valid is not None:
        preorderer.inversion_penalty = tune_penalty(preorderer, valid, log)
    if save is not None:
        preorderer.save(save)
    return preorderer


def train_step(preorderer, optimizer, items, loss, margin, device):
    """One Adam step of ``loss`` on a batch of ``items`` ``(token indices, oracle positions,
    word units)``; returns the batch's loss and its number of tokens."""
    scorer = preorderer.scorer
    tokens, reference, lengths = _collate(items, preorderer.vocabulary.pad_index, device)
    batch_loss = training_loss(scorer, tokens, reference, lengths,
                               [units for _, _, units in items], loss, margin)
    optimizer.zero_grad()
    batch_loss.backward()
    torch.nn.utils.clip_grad_norm_(scorer.parameters(), 1.0)
    optimizer.step()
    return batch_loss.item(), int(lengths.sum())


def training_loss(scorer, tokens, reference, lengths, units, loss, margin):
    """The batch's loss of kind ``loss`` (one of ``LOSSES``) under ``scorer``."""
    scores = scorer(tokens, lengths)
    total = 0.0
    if loss != "structured":
        total = scorer.pairwise_loss(scores, reference, lengths)
    if loss != "pairwise":
        total = total + structured_hinge_loss(scores, reference, lengths, units, margin)
    return total


def _collate(items, pad_index, device):
    """Right-padded token indices and reference positions on ``device``, and the lengths."""
    lengths = torch.tensor([len(item[0]) for item in items])
    tokens = torch.full((len(items), int(lengths.max())), pad_index, dtype=torch.long)
    reference = torch.zeros_like(tokens)
    for row, (sentence, positions, *_) in enumerate(items):
        tokens[row, :len(sentence)] = sentence
        reference[row, :len(sentence)] = positions
    return tokens.to(device), reference.to(device), lengths


def tune_penalty(preorderer, valid, log):
    """The inversion penalty of ``PENALTY_GRID`` with the best tau + FRS on ``valid``."""
    best = None
    predictions = preorderer.predict_each_penalty(valid[0], PENALTY_GRID)
    for penalty in PENALTY_GRID:
        scores = corpus_scores(predictions[penalty], valid[1])
        total = scores["kendall_tau"] + scores["fuzzy_reordering_score"]
        log(f"inversion penalty {penalty:g}: valid {format_scores(scores)}")
        if best is None or total > best[0]:
            best = (total, penalty)
    log(f"inversion penalty {best[1]:g} kept")
    return best[1]


def format_scores(scores):
    return f"tau {scores['kendall_tau']:.4f} FRS {scores['fuzzy_reordering_score']:.4f}"


DROPOUT_RATE = Number(float, minimum=0, below=1)
LEARNING_RATE = Number(float, above=0)
MARGIN = Number(float, minimum=0)
# a layer's size and count: beyond these the weights outgrow memory (an embedding of 4096 for
# 30000 tokens already takes 0.5 GB) long before they help a preorderer
LAYER_SIZE = Number(int, minimum=1, maximum=4096)
LAYERS = Number(int, minimum=1, maximum=16)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-preorder-train",
        description="Train a source-only preorderer (BiLSTM pair scorer, logistic loss on "
        "every token pair, BTG search) on source BPE text and its oracle reorder positions.",
        formatter_class=HelpFormatter,
    )
    add_training_arguments(parser)
    parser.add_argument("--sample", type=positive_int,
                        help="train on a seeded sample of this many training sentences, read "
                        "without holding the corpus in memory (default: all): bounds the "
                        "time and memory of training whatever the corpus's size")
    parser.add_argument("--sample-seed", type=SEED, default=1,
                        help="seed of the --sample draw, apart from --seed so that the members "
                        "of an ensemble train on one sample")
    return parser


def add_training_arguments(parser, save=True):
    """The data and training options (``--save`` too when ``save``)."""
    parser.add_argument("--source", required=True, help="training source BPE text")
    parser.add_argument("--reorder", required=True,
                        help="training reorder file (oracle positions, e.g. BTG)")
    parser.add_argument("--valid-source", help="validation source BPE text")
    parser.add_argument("--valid-reorder", help="validation reorder file; the epoch with the "
                        "best Kendall's tau on it is kept")
    if save:
        parser.add_argument("--save", required=True,
                            help="checkpoint to write (e.g. preorderer.pt)")
    parser.add_argument("--embed-dim", type=LAYER_SIZE, default=64, help="token embedding size")
    parser.add_argument("--hidden-dim", type=LAYER_SIZE, default=128,
                        help="BiLSTM size per direction")
    parser.add_argument("--pair-dim", type=LAYER_SIZE, default=64,
                        help="hidden size of the pair scorer")
    parser.add_argument("--layers", type=LAYERS, default=1, help="BiLSTM layers")
    parser.add_argument("--dropout", type=DROPOUT_RATE, default=0.1, help="dropout rate")
    parser.add_argument("--max-vocab", type=positive_int, default=30000,
                        help="most frequent source tokens kept; the rest map to <unk>")
    parser.add_argument("--epochs", type=positive_int, default=3,
                        help="number of epochs (with --seed, this fixes the result)")
    parser.add_argument("--max-seconds", type=Number(float, above=0),
                        help="safety cap: stop after the epoch that passes this many seconds "
                        "(the result then depends on the machine's speed)")
    parser.add_argument("--batch-tokens", type=positive_int, default=4000,
                        help="padded source tokens per training batch")
    parser.add_argument("--max-train-length", type=positive_int, default=200,
                        help="skip longer training sentences (the loss is quadratic in length)")
    parser.add_argument("--lr", type=LEARNING_RATE, default=3e-3, help="Adam learning rate")
    parser.add_argument("--loss", choices=LOSSES, default="pairwise",
                        help="training loss: a logistic loss per token pair, the structured "
                        "hinge over BTG trees (trained on the search's own output), or both")
    parser.add_argument("--margin", type=MARGIN, default=1.0,
                        help="the structured hinge's margin per wrongly ordered token pair")
    parser.add_argument("--seed", type=SEED, default=1, help="random seed")
    add_device_arguments(parser)


def add_device_arguments(parser):
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
    # one thread, as the recipes run it: torch's threads wait on each other at every
    # operation, so beside another process on the same cores a run on all cores' threads
    # took 11 times as long (5.4 s alone, 61 s); one thread shares the cores instead
    parser.add_argument("--threads", type=WORKERS, default=1,
                        help="CPU threads for torch (default: 1, which does not stall beside "
                        "other work on shared cores; more can be faster on idle ones, and "
                        "another count rounds differently, so the result changes)")


def parse_with_valid_pair(parser, argv):
    """Parsed options; a usage error when only one of --valid-source/--valid-reorder is given."""
    args = parser.parse_args(argv)
    if (args.valid_source is None) != (args.valid_reorder is None):
        parser.error("--valid-source and --valid-reorder go together")
    return args


def training_settings(args):
    """Keyword arguments of ``train_preorderer`` from parsed training options."""
    return dict(embed_dim=args.embed_dim, hidden_dim=args.hidden_dim, pair_dim=args.pair_dim,
                num_layers=args.layers, dropout=args.dropout, max_vocab=args.max_vocab,
                epochs=args.epochs, max_seconds=args.max_seconds,
                batch_tokens=args.batch_tokens, max_train_length=args.max_train_length,
                lr=args.lr, loss=args.loss, margin=args.margin, seed=args.seed,
                device=args.device)


@contextlib.contextmanager
def torch_threads(count):
    """torch's CPU threads ``count`` in the block, as many as before after it: a step of a
    preparation leaves the process's threads as it found them."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train_files(source, reorder, save, valid_source=None, valid_reorder=None, *, sample=None,
                sample_seed=1, threads=1, device="cpu", max_train_length=200, **settings):
    """``xlpe-preorder-train``: a preorderer trained on the ``source`` BPE text and its oracle
    positions ``reorder`` (a seeded ``sample`` of that many sentences, read without holding
    the corpus), validated on ``valid_source``/``valid_reorder`` if given, on ``threads`` of
    torch's, saved to ``save``; ``settings``: ``train_preorderer``'s other keywords. Each
    epoch's line goes to stderr."""
    with torch_threads(threads):
        inputs = [source, reorder] + ([valid_source, valid_reorder] if valid_source else [])
        check_outputs([save], inputs)  # before training, not after it
        check_device(device)
        if sample is None:
            sentences, positions = read_source_with_reorder(source, reorder)
        else:
            sentences, positions = read_sample_with_reorder(source, reorder, sample,
                                                            sample_seed)
        if not any(2 <= len(s) <= max_train_length for s in sentences):
            raise InputError(f"{source}: no sentence of 2 to --max-train-length "
                             f"({max_train_length}) tokens to train on")
        valid = None
        if valid_source:
            valid = read_source_with_reorder(valid_source, valid_reorder)
        train_preorderer(
            sentences, positions, valid, save=save, device=device,
            max_train_length=max_train_length, **settings,
            log=lambda line: print(f"xlpe-preorder-train: {line}", file=sys.stderr, flush=True),
        )


def main(argv=None):
    args = parse_with_valid_pair(build_parser(), argv)
    settings = training_settings(args)
    run_command(lambda: train_files(args.source, args.reorder, args.save, args.valid_source,
                                    args.valid_reorder, sample=args.sample,
                                    sample_seed=args.sample_seed, threads=args.threads,
                                    **settings), "xlpe-preorder-train")


if __name__ == "__main__":
    main()
