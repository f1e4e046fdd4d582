"""``Preorderer``: a trained scorer with its vocabulary; predicts reorder positions for tokens.

The checkpoint is self-contained (vocabulary, hyper-parameters, weights) and holds only
plain Python values and tensors, so it loads under torch's ``weights_only`` default.
"""
import os

import torch

from ..preprocessing.io_utils import InputError, atomic_output
from ..reordering.btg_rules import make_btg_reachable
from .model import PreorderScorer
from .vocabulary import Vocabulary

CHECKPOINT_FORMAT = "xlpe-preorderer"
CHECKPOINT_VERSION = 1


class Preorderer:
    """Predicts target-ordered source positions from source BPE tokens alone.

    ``btg=True`` makes every prediction BTG-reachable (the greedy repair of
    ``btg_rules.make_btg_reachable``), matching the shape of the training positions.
    """

    def __init__(self, vocabulary, scorer, btg=False):
        self.vocabulary = vocabulary
        self.scorer = scorer
        self.btg = btg

    @classmethod
    def create(cls, vocabulary, **hyper_parameters):
        """A new, untrained preorderer (it predicts the monotone order)."""
        scorer = PreorderScorer(len(vocabulary), padding_idx=vocabulary.pad_index,
                                **hyper_parameters)
        return cls(vocabulary, scorer)

    @classmethod
    def load(cls, path, device="cpu", btg=False):
        """Read a checkpoint written by :meth:`save`; InputError (a ValueError) if it is not one."""
        try:
            checkpoint = torch.load(path, map_location=device, weights_only=True)
        except FileNotFoundError:
            raise InputError(f"{path}: no such preorderer checkpoint") from None
        except Exception as err:  # torch reports unreadable files with many exception types
            raise InputError(f"{path}: not a preorderer checkpoint ({err})") from None
        if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
            raise InputError(f"{path}: not a preorderer checkpoint (see xlpe-preorder-train)")
        if checkpoint["version"] != CHECKPOINT_VERSION:
            raise InputError(f"{path}: preorderer checkpoint version {checkpoint['version']}, "
                             f"this code reads version {CHECKPOINT_VERSION}")
        scorer = PreorderScorer(**checkpoint["config"])
        scorer.load_state_dict(checkpoint["state_dict"])
        scorer.eval()
        return cls(Vocabulary(checkpoint["vocabulary"]), scorer.to(device), btg=btg)

    def save(self, path):
        """Write the checkpoint atomically (a crash never leaves half a file at ``path``)."""
        checkpoint = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "vocabulary": self.vocabulary.tokens,
            "config": self.scorer.config,
            "state_dict": {name: tensor.detach().cpu()
                           for name, tensor in self.scorer.state_dict().items()},
        }
        with atomic_output(os.fspath(path), mode="wb") as f:
            torch.save(checkpoint, f)

    def to(self, device):
        self.scorer.to(device)
        return self

    @property
    def device(self):
        return self.scorer.log_temperature.device

    def encode_batch(self, sentences):
        """Right-padded token indices on the model's device and the lengths (all >= 1)."""
        lengths = [len(sentence) for sentence in sentences]
        tokens = torch.full((len(sentences), max(lengths)), self.vocabulary.pad_index,
                            dtype=torch.long)
        for row, sentence in enumerate(sentences):
            tokens[row, :len(sentence)] = torch.tensor(self.vocabulary.encode(sentence))
        return tokens.to(self.device), torch.tensor(lengths)

    @torch.no_grad()
    def predict(self, sentences, max_tokens=20000):
        """Positions (a permutation of range(len(s))) for each token list ``s`` of ``sentences``.

        Sentences are batched by length, at most ``max_tokens`` padded tokens a batch, and
        the results come back in input order.
        """
        sentences = [list(sentence) for sentence in sentences]
        results = [[] for _ in sentences]
        was_training = self.scorer.training
        self.scorer.eval()
        try:
            for batch in length_batches([len(s) for s in sentences], max_tokens):
                tokens, lengths = self.encode_batch([sentences[k] for k in batch])
                scores = self.scorer(tokens, lengths)
                for k, positions in zip(batch, scores_to_positions(scores, lengths)):
                    if self.btg:
                        positions, _ = make_btg_reachable(positions)
                    results[k] = positions
        finally:
            self.scorer.train(was_training)
        return results


def scores_to_positions(scores, lengths):
    """Rank of each token's score within its sentence; ties keep source order."""
    time = scores.shape[1]
    padding = torch.arange(time, device=scores.device).unsqueeze(0) \
        >= lengths.to(scores.device).unsqueeze(1)
    # padding sorts last; a stable sort breaks ties by source position
    order = scores.float().masked_fill(padding, float("inf")).argsort(dim=1, stable=True)
    positions = order.argsort(dim=1).cpu().tolist()
    return [row[:n] for row, n in zip(positions, lengths.tolist())]


def length_batches(lengths, max_tokens):
    """Index lists of non-empty sentences of similar length, each under ``max_tokens`` padded.

    Empty sentences are left out: their (empty) positions need no model.
    """
    by_length = sorted((k for k, n in enumerate(lengths) if n > 0), key=lengths.__getitem__)
    batch = []
    for k in by_length:
        # sorted by length, so the newest sentence is the longest of the batch
        if batch and (len(batch) + 1) * lengths[k] > max_tokens:
            yield batch
            batch = []
        batch.append(k)
    if batch:
        yield batch
