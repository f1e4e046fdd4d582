"""Do two identical training steps give identical gradients? For fairseq's transformer, InXL as
it computes PE_IN now (U and V on each token's sinusoid) and InXL as it did before (U and V on
the sinusoid table, then a gather whose backward accumulates with atomics on a GPU).

    python docs/results/inxl-at-scale/determinism.py [--device cuda] [--fp16]

Prints, per model, how many parameters' gradients differ between two runs of the same step
from the same state, and the largest difference. Run from the repository root.
"""
import argparse
import os
import sys
from argparse import Namespace

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "models"))
from fairseq import utils  # noqa: E402
from fairseq.data import Dictionary  # noqa: E402
from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY  # noqa: E402
from model_builders import make_task  # noqa: E402

from xlpe_fairseq.models.transformer_xlpe import XLPEEncoder  # noqa: E402


def table_gather_embedding(self, src_tokens, reorder_positions, token_embedding=None):
    """InXL's encoder input as computed before: the table projected once, rows gathered."""
    embed = self.embed_scale * self.embed_tokens(src_tokens)
    rows = self.xl_positions(torch.arange(-1, src_tokens.size(1), device=src_tokens.device))
    abs_index = utils.make_positions(src_tokens, self.padding_idx) - self.padding_idx
    pre = (F.embedding(abs_index, self.pe_in.u(rows))
           + F.embedding(reorder_positions + 1, self.pe_in.v(rows)))
    return self._finish_embedding(embed + torch.tanh(pre).to(embed)), None, embed, pre


def batch(vocab, device, sentences=96, length=40, seed=0):
    generator = torch.Generator().manual_seed(seed)
    src = torch.randint(4, vocab, (sentences, length), generator=generator)
    src[:, -1] = 2  # EOS
    reorder = torch.stack([torch.cat([torch.randperm(length - 1, generator=generator),
                                      torch.tensor([length - 1])]) for _ in range(sentences)])
    prev = torch.randint(4, vocab, (sentences, length), generator=generator)
    target = torch.randint(4, vocab, (sentences, length), generator=generator)
    return ({"src_tokens": src.to(device), "src_lengths": torch.full((sentences,), length).to(device),
             "prev_output_tokens": prev.to(device)}, reorder.to(device), target.to(device))


def gradients(model, net_input, reorder, target, reads_positions):
    model.zero_grad()
    torch.manual_seed(1)
    if reads_positions:
        logits, _ = model(**net_input, reorder_positions=reorder)
    else:
        logits, _ = model(**net_input)
    F.cross_entropy(logits.float().flatten(0, 1), target.flatten()).backward()
    return {name: p.grad.detach().clone() for name, p in model.named_parameters()
            if p.grad is not None}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args()
    dictionary = Dictionary()
    for i in range(8000):
        dictionary.add_symbol(f"w{i}")
    task = make_task(dictionary)
    cases = [("transformer", "transformer_iwslt_de_en", {}, None),
             ("xlpe-inxl (per token)", "transformer_xlpe_iwslt_de_en", {"xlpe_mode": "inxl",
              "xlpe_init": "xavier"}, None),
             ("xlpe-inxl (table, gather)", "transformer_xlpe_iwslt_de_en",
              {"xlpe_mode": "inxl", "xlpe_init": "xavier"}, table_gather_embedding)]
    net_input, reorder, target = batch(len(dictionary), args.device)
    for label, arch, options, embedding in cases:
        model_args = Namespace(arch=arch, share_decoder_input_output_embed=True, dropout=0.3,
                               **options)
        ARCH_CONFIG_REGISTRY[arch](model_args)
        torch.manual_seed(1)
        model = ARCH_MODEL_REGISTRY[arch].build_model(model_args, task).to(args.device)
        if args.fp16:
            model = model.half()
        if embedding is not None:
            model.encoder.forward_xl_embedding = embedding.__get__(model.encoder, XLPEEncoder)
        model.train()
        reads = arch.startswith("transformer_xlpe")
        first = gradients(model, net_input, reorder, target, reads)
        differing, largest = [], 0.0
        for repeat in range(3):
            again = gradients(model, net_input, reorder, target, reads)
            for name, grad in first.items():
                difference = float((grad.float() - again[name].float()).abs().max())
                if difference > 0:
                    differing.append(name)
                    largest = max(largest, difference)
        names = sorted(set(differing))
        print(f"{label}: {len(names)} of {len(first)} gradients differ over 3 repeats "
              f"(largest difference {largest:.3g}){': ' + ', '.join(names[:6]) if names else ''}")


if __name__ == "__main__":
    main()
