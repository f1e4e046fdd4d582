"""Tiny models and real batches for model tests, for any registered architecture.

``build_model("transformer_xlpe_iwslt_de_en", xlpe_heads=2)`` builds a small model the way
fairseq-train does (architecture preset, then ``build_model``) over a 12-word dictionary;
``make_batch`` collates through fairseq's ``LanguagePairDataset`` and the plugin's
``LanguagePairWithReorderDataset``, so batches follow the task's contract exactly.
"""
from argparse import Namespace
from types import SimpleNamespace

import torch
from fairseq.data import Dictionary, LanguagePairDataset
from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

from xlpe_fairseq import models  # noqa: F401  (registers the plugin's models)
from xlpe_fairseq.data.reorder_dataset import LanguagePairWithReorderDataset

WORDS = [f"w{i}" for i in range(12)]

# small enough for 2 shared CPU cores; 4 heads of 4 dimensions allow every tau in 0..4
TINY = dict(
    encoder_embed_dim=16, decoder_embed_dim=16, encoder_ffn_embed_dim=32,
    decoder_ffn_embed_dim=32, encoder_attention_heads=4, decoder_attention_heads=4,
    encoder_layers=2, decoder_layers=1, dropout=0.0, attention_dropout=0.0,
    max_source_positions=64, max_target_positions=64,
)


def make_dictionary(words=WORDS):
    dictionary = Dictionary()
    for word in words:
        dictionary.add_symbol(word)
    return dictionary


def make_task(dictionary=None):
    """What legacy ``build_model`` and ``SequenceGenerator`` read from a task."""
    dictionary = dictionary or make_dictionary()
    return SimpleNamespace(source_dictionary=dictionary, target_dictionary=dictionary)


def build_model(arch, task=None, seed=1, **overrides):
    """``(model, task)``: ``arch``'s preset over ``TINY`` and ``overrides``, in eval mode."""
    task = task or make_task()
    args = Namespace(arch=arch, **{**TINY, **overrides})
    ARCH_CONFIG_REGISTRY[arch](args)
    torch.manual_seed(seed)
    model = ARCH_MODEL_REGISTRY[arch].build_model(args, task)
    return model.eval(), task


def identity_reorder(sources):
    """Monotone reorder positions ``0..n-1`` for each space-separated source sentence."""
    return [list(range(len(source.split()))) for source in sources]


def make_batch(dictionary, sources, targets, reorder=None, left_pad_source=True,
               positions_as_input=True):
    """Collate sentences (space-separated words) into a fairseq batch.

    ``reorder``: one 0-based position per source word (EOS excluded) per sentence, or None
    for a plain ``LanguagePairDataset`` batch. The batch is sorted as fairseq sorts it;
    ``batch["id"]`` gives each row's sentence index.
    """
    def encode(lines):
        return [dictionary.encode_line(line, add_if_not_exist=False, append_eos=True).long()
                for line in lines]

    src, tgt = encode(sources), encode(targets)
    dataset = LanguagePairDataset(
        src, torch.LongTensor([len(s) for s in src]), dictionary,
        tgt, torch.LongTensor([len(t) for t in tgt]), dictionary,
        left_pad_source=left_pad_source, shuffle=False,
    )
    if reorder is not None:
        dataset = LanguagePairWithReorderDataset(
            dataset, [torch.LongTensor(r) for r in reorder], "test",
            positions_as_input=positions_as_input,
        )
    return dataset.collater([dataset[i] for i in range(len(sources))])
