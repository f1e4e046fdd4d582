"""``Preorderer``: a trained pair scorer with its vocabulary; predicts reorder positions.

Every prediction is the best BTG-consistent permutation under the scorer's pair scores
(``btg_search``), the shape of the BTG training positions, on every path that predicts:
``xlpe-preorder``, ``--preorderer`` in fairseq-generate / fairseq-interactive, and the
evaluation tools all call :meth:`Preorderer.predict`.

The checkpoint is self-contained (vocabulary, hyper-parameters, weights, search penalty) and
holds only plain Python values and tensors, so it loads under torch's ``weights_only`` default.
"""
import os

import torch

from ..preprocessing.io_utils import InputError, atomic_output, check_length
from .btg_search import btg_search, word_units
from .model import PairwiseOrderScorer
from .vocabulary import Vocabulary

# The search is cubic in sentence length (800 tokens take 5 s, 2,000 tokens minutes and GBs);
# longer sentences are refused rather than left to run for hours
MAX_TOKENS = 1023

CHECKPOINT_FORMAT = "xlpe-preorderer"
# version 1: BiLSTM score-and-sort (no pair scores); version 2: pair scores + BTG search
CHECKPOINT_VERSION = 2


class Preorderer:
    """Predicts target-ordered source positions from source BPE tokens alone.

    The BPE pieces of a word (``@@``-marked) move as a block, as in the BTG oracle.

    ``inversion_penalty`` is charged per inverted BTG node in the search (``btg_search``);
    training tunes it on the validation set.
    """

    def __init__(self, vocabulary, scorer, inversion_penalty=0.0):
        self.vocabulary = vocabulary
        self.scorer = scorer
        self.inversion_penalty = inversion_penalty

    @classmethod
    def create(cls, vocabulary, **hyper_parameters):
        """A new, untrained preorderer (it predicts the monotone order)."""
        scorer = PairwiseOrderScorer(len(vocabulary), padding_idx=vocabulary.pad_index,
                                     **hyper_parameters)
        return cls(vocabulary, scorer)

    @classmethod
    def load(cls, path, device="cpu"):
        """Read a checkpoint written by :meth:`save`; InputError (a ValueError) if it is not one."""
        check_device(device)
        try:
            checkpoint = torch.load(path, map_location=device, weights_only=True)
        except FileNotFoundError:
            raise InputError(f"{path}: no such preorderer checkpoint") from None
        except Exception as err:  # torch reports unreadable files with many exception types
            raise InputError(f"{path}: not a preorderer checkpoint "
                             f"({_first_line(err)})") from None
        if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
            raise InputError(f"{path}: not a preorderer checkpoint (see xlpe-preorder-train)")
        if checkpoint.get("version") != CHECKPOINT_VERSION:
            raise InputError(
                f"{path}: preorderer checkpoint version {checkpoint.get('version')}, this code "
                f"reads version {CHECKPOINT_VERSION} (pair scores decoded under the BTG "
                f"constraint; version 1 was the score-and-sort BiLSTM): retrain it with "
                f"xlpe-preorder-train")
        try:
            scorer = PairwiseOrderScorer(**checkpoint["config"])
            scorer.load_state_dict(checkpoint["state_dict"])
            preorderer = cls(Vocabulary(checkpoint["vocabulary"]), scorer.to(device),
                             inversion_penalty=float(checkpoint["inversion_penalty"]))
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            raise InputError(f"{path}: damaged preorderer checkpoint ({type(err).__name__}: "
                             f"{_first_line(err)})") from None
        scorer.eval()
        return preorderer

    def save(self, path):
        """Write the checkpoint atomically (a crash never leaves half a file at ``path``)."""
        checkpoint = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "vocabulary": self.vocabulary.tokens,
            "config": self.scorer.config,
            "inversion_penalty": float(self.inversion_penalty),
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
        return self.scorer.project.weight.device

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
        """Positions (a BTG-consistent permutation of range(len(s))) for each token list ``s``.

        Sentences are batched by length, at most ``max_tokens`` padded tokens a batch, and
        the results come back in input order. The search sees scores rounded to a grid
        (``btg_search.quantize_scores``), so the float noise of another batching changes a
        result only if a score sits right on a rounding boundary.
        """
        sentences = [list(sentence) for sentence in sentences]
        for k, sentence in enumerate(sentences, start=1):
            check_length("input", k, len(sentence), MAX_TOKENS, "the preorderer")
        results = [[] for _ in sentences]
        was_training = self.scorer.training
        self.scorer.eval()
        try:
            for batch in length_batches([len(s) for s in sentences], max_tokens):
                tokens, lengths = self.encode_batch([sentences[k] for k in batch])
                scores = self.scorer(tokens, lengths)
                predictions = btg_search(scores, lengths, self.inversion_penalty,
                                         [word_units(sentences[k]) for k in batch])
                for k, positions in zip(batch, predictions):
                    results[k] = positions
        finally:
            self.scorer.train(was_training)
        return results


def check_device(device):
    """InputError for a torch device that is not there (e.g. cuda on a machine without one)."""
    try:
        device = torch.device(device)
    except (RuntimeError, ValueError) as err:
        raise InputError(f"--device {device}: not a torch device ({_first_line(err)})") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"--device {device}: no CUDA device on this machine (use cpu)")


def _first_line(error):
    """The first line of an exception's message (torch's come with paragraphs of advice)."""
    return (str(error).strip().splitlines() or [""])[0]


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
