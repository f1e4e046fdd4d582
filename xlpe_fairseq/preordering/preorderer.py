"""``Preorderer``: a trained pair scorer with its vocabulary; predicts reorder positions.

Every prediction is the best BTG-consistent permutation under the scorer's pair scores
(``btg_search``), the shape of the BTG training positions, on every path that predicts:
``xlpe-preorder``, ``--preorderer`` in fairseq-generate / fairseq-interactive, and the
evaluation tools all call :meth:`Preorderer.predict`.

The checkpoint is self-contained (vocabulary, hyper-parameters, weights, search penalty) and
holds only plain Python values and tensors, so it loads under torch's ``weights_only`` default.
An ensemble checkpoint (``xlpe-preorder-ensemble``) holds several such preorderers and one
penalty; :meth:`Preorderer.load` reads both kinds, so every path above takes either.
"""
import contextlib
import math
import os

import torch

from ..io import InputError, atomic_output, check_length, read_checkpoint
from .btg_kbest import btg_kbest
from .btg_search import btg_search, word_units
from .model import PairwiseOrderScorer
from .vocabulary import Vocabulary

# The search is cubic in sentence length (800 tokens take 5 s, 2,000 tokens minutes and GBs);
# longer sentences are refused rather than left to run for hours
MAX_TOKENS = 1023

CHECKPOINT_FORMAT = "xlpe-preorderer"
# version 1: BiLSTM score-and-sort (no pair scores); version 2: pair scores + BTG search
CHECKPOINT_VERSION = 2


class BTGPrediction:
    """Prediction for a class with ``pair_scores(sentences)``, ``inversion_penalty`` and
    ``_networks()`` (the preorderers whose scorers run)."""

    @torch.no_grad()
    def predict(self, sentences, max_tokens=20000):
        """Positions (a BTG-consistent permutation of range(len(s))) for each token list ``s``.

        Sentences are batched by length, at most ``max_tokens`` padded tokens a batch, and
        the results come back in input order. The search sees scores rounded to a grid
        (``btg_search.quantize_scores``), so the float noise of another batching changes a
        result only if a score sits right on a rounding boundary.
        """
        with evaluating(self._networks()):
            return search_positions(sentences, self.pair_scores, [self.inversion_penalty],
                                    max_tokens)[0]

    @torch.no_grad()
    def predict_each_penalty(self, sentences, penalties, max_tokens=20000):
        """``{penalty: predict(sentences) under that inversion penalty}``, each batch scored
        once: the penalty only changes the search (tuning it on valid)."""
        with evaluating(self._networks()):
            predictions = search_positions(sentences, self.pair_scores, penalties, max_tokens)
        return dict(zip(penalties, predictions))

    @torch.no_grad()
    def predict_kbest(self, sentences, k, max_tokens=20000):
        """For each token list, up to ``k`` distinct BTG-consistent position lists with their
        search scores, best first (``btg_kbest``): the first is what ``predict`` gives."""
        with evaluating(self._networks()):
            return search_positions(sentences, self.pair_scores, [self.inversion_penalty],
                                    max_tokens, nbest=k)[0]


class Preorderer(BTGPrediction):
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
        """Read a checkpoint of :meth:`save` (a Preorderer) or of ``xlpe-preorder-ensemble``
        (a :class:`PreordererEnsemble`); InputError (a ValueError) if it is neither."""
        check_device(device)
        checkpoint = read_checkpoint(path, "preorderer checkpoint")
        if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
            raise InputError(f"{path}: not a preorderer checkpoint (see xlpe-preorder-train)")
        if checkpoint.get("version") != CHECKPOINT_VERSION:
            raise InputError(
                f"{path}: preorderer checkpoint version {checkpoint.get('version')}, this code "
                f"reads version {CHECKPOINT_VERSION} (pair scores decoded under the BTG "
                f"constraint; version 1 was the score-and-sort BiLSTM): retrain it with "
                f"xlpe-preorder-train")
        try:
            if "members" in checkpoint:
                return PreordererEnsemble(
                    [cls._from_checkpoint(member, device) for member in checkpoint["members"]],
                    inversion_penalty=_finite_penalty(checkpoint))
            return cls._from_checkpoint(checkpoint, device)
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            reason = str(err) if isinstance(err, _Damaged) else \
                f"{type(err).__name__}: {_first_line(err)}"
            raise InputError(f"{path}: damaged preorderer checkpoint ({reason})") from None

    @classmethod
    def _from_checkpoint(cls, checkpoint, device):
        # a damaged file must not predict: NaN scores order nothing, and a vocabulary shorter
        # than the embedding table maps every token to the wrong row, both silently monotone
        vocabulary = Vocabulary(checkpoint["vocabulary"])
        config = checkpoint["config"]
        if config.get("vocab_size") != len(vocabulary):
            raise _Damaged(f"{len(vocabulary)} vocabulary tokens for "
                           f"{config.get('vocab_size')} embeddings")
        if config.get("padding_idx") != vocabulary.pad_index:
            raise _Damaged(f"padding index {config.get('padding_idx')}, expected "
                           f"{vocabulary.pad_index}")
        for name, tensor in checkpoint["state_dict"].items():
            if tensor.is_floating_point() and not torch.isfinite(tensor).all():
                raise _Damaged(f"weights {name} hold NaN or infinite values")
        scorer = PairwiseOrderScorer(**config)
        scorer.load_state_dict(checkpoint["state_dict"])
        scorer.to(device).eval()
        return cls(vocabulary, scorer, inversion_penalty=_finite_penalty(checkpoint))

    def _checkpoint(self):
        return {
            "vocabulary": self.vocabulary.tokens,
            "config": self.scorer.config,
            "inversion_penalty": float(self.inversion_penalty),
            "state_dict": {name: tensor.detach().cpu()
                           for name, tensor in self.scorer.state_dict().items()},
        }

    def save(self, path):
        """Write the checkpoint atomically (a crash never leaves half a file at ``path``)."""
        _save_checkpoint(path, self._checkpoint())

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

    def pair_scores(self, sentences):
        """The scorer's ``(B, T, T)`` pair scores of a batch of token lists."""
        tokens, lengths = self.encode_batch(sentences)
        return self.scorer(tokens, lengths)

    def _networks(self):
        return [self]


class PreordererEnsemble(BTGPrediction):
    """Several preorderers decoded as one: the BTG search runs on their mean pair scores.

    Members trained with other seeds make other errors; averaging their pair scores before the
    search (rather than voting on whole permutations) keeps every prediction one BTG-consistent
    permutation. ``inversion_penalty`` is the ensemble's own, tuned on valid by
    ``xlpe-preorder-ensemble``: the members' penalties were tuned for their own scores.
    """

    def __init__(self, members, inversion_penalty=0.0):
        if not members:
            raise ValueError("an ensemble needs at least one preorderer")
        self.members = list(members)
        self.inversion_penalty = inversion_penalty

    def pair_scores(self, sentences):
        return torch.stack([member.pair_scores(sentences).to(self.members[0].device)
                            for member in self.members]).mean(0)

    def _networks(self):
        return self.members

    def save(self, path):
        _save_checkpoint(path, {"inversion_penalty": float(self.inversion_penalty),
                                "members": [member._checkpoint() for member in self.members]})


@contextlib.contextmanager
def evaluating(preorderers):
    """The preorderers' scorers in eval mode (no dropout), each back in its mode afterwards:
    training predicts on valid between epochs."""
    modes = [preorderer.scorer.training for preorderer in preorderers]
    for preorderer in preorderers:
        preorderer.scorer.eval()
    try:
        yield
    finally:
        for preorderer, mode in zip(preorderers, modes):
            preorderer.scorer.train(mode)


def search_positions(sentences, pair_scores, inversion_penalties, max_tokens, nbest=None):
    """For each of ``inversion_penalties``, the BTG search's positions for each token list,
    in input order, batched by length; ``pair_scores(batch)`` gives a batch's ``(B, T, T)``
    scores, computed once for all the penalties. With ``nbest`` = k, each sentence gets the
    list of ``btg_kbest``'s k best ``(score, positions)`` instead."""
    sentences = [list(sentence) for sentence in sentences]
    for k, sentence in enumerate(sentences, start=1):
        check_length("input", k, len(sentence), MAX_TOKENS, "the preorderer")
    results = [[[] for _ in sentences] for _ in inversion_penalties]
    for batch in length_batches([len(s) for s in sentences], max_tokens):
        batch_sentences = [sentences[k] for k in batch]
        scores = pair_scores(batch_sentences)
        lengths = torch.tensor([len(s) for s in batch_sentences])
        units = [word_units(s) for s in batch_sentences]
        for penalty, penalty_results in zip(inversion_penalties, results):
            if nbest is None:
                found = btg_search(scores, lengths, penalty, units)
            else:
                found = btg_kbest(scores, lengths, nbest, penalty, units)
            for k, positions in zip(batch, found):
                penalty_results[k] = positions
    return results


def _save_checkpoint(path, content):
    """Write a checkpoint atomically (a crash never leaves half a file at ``path``)."""
    with atomic_output(os.fspath(path), mode="wb") as f:
        torch.save({"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, **content}, f)


def check_device(device):
    """InputError for a torch device that is not there (e.g. cuda on a machine without one)."""
    try:
        device = torch.device(device)
    except (RuntimeError, ValueError) as err:
        raise InputError(f"--device {device}: not a torch device ({_first_line(err)})") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"--device {device}: no CUDA device on this machine (use cpu)")


class _Damaged(ValueError):
    """A preorderer checkpoint whose content cannot be right; the message says what."""


def _finite_penalty(checkpoint):
    penalty = float(checkpoint["inversion_penalty"])
    if not math.isfinite(penalty):
        raise _Damaged(f"inversion penalty {penalty}")
    return penalty


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
