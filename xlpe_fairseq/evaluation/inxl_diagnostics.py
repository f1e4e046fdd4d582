"""``xlpe-inxl-diagnostics``: what InXL's learned input position holds, read from a checkpoint.

InXL (Ding et al. 2020, Eq. 7) replaces the encoder's fixed sinusoid ``PE_abs`` with
``PE_IN = tanh(PE_abs U + PE_XL V)``. Whether that input helps depends on what survives the
projection and the tanh, so for the sentences of a split this reports, over their real tokens:

- ``in_norm``, ``embed_norm`` and ``sinusoid_norm``: the mean norms of ``PE_IN``, of the scaled
  word embedding it is added to, and of the sinusoid the Transformer adds instead;
- ``saturated``: the share of tanh units whose input exceeds 2 in magnitude (they pass under 7%
  of their gradient);
- ``abs_readback`` and ``xl_readback``: how well each token's absolute and cross-lingual
  position can be read back from ``PE_IN`` by a linear probe (ridge regression onto the
  sinusoid of the true position, fitted on the even sentences, scored on the odd ones as the
  share of tokens whose nearest sinusoid is the true one); ``xl_readback_moved`` on the tokens
  whose two positions differ, where only ``PE_XL`` can tell the answer.

The criterion logs the norms and the saturation during training (``xlpe_in_norm``,
``xlpe_embed_norm``, ``xlpe_saturated``); the probes need a whole split and are read here.
"""
import argparse
import json
import os
import sys

from ..help_format import HelpFormatter
from ..io import (
    InputError,
    check_dictionaries,
    positive_int,
    require_files,
    run_command,
)
from .attention_alignment import load_model, split_batches

# the probe's ridge penalty per fitted token: enough to keep the solve stable when PE_IN has
# fewer distinct rows than dimensions, too little to blur positions apart
RIDGE = 1e-3


def position_readback(features, positions, table, fitted):
    """Share of the tokens not ``fitted`` whose nearest ``table`` row, read through a ridge
    regression from ``features`` ``(N, C)`` to ``table[positions]`` fitted on the ``fitted``
    tokens, is ``table[positions]`` itself. None when either side has no token."""
    import torch

    if not fitted.any() or fitted.all():
        return None
    x = torch.cat([features.double(), features.new_ones(len(features), 1).double()], dim=1)
    y = table.double()[positions]
    x_fit, y_fit = x[fitted], y[fitted]
    gram = x_fit.T @ x_fit + RIDGE * len(x_fit) * torch.eye(x.size(1), dtype=x.dtype)
    weights = torch.linalg.solve(gram, x_fit.T @ y_fit)
    predicted = x[~fitted] @ weights
    nearest = torch.cdist(predicted, table.double()).argmin(dim=1)
    return float((nearest == positions[~fitted]).double().mean())


def input_diagnostics(model, samples, name="the model"):
    """The module docstring's measures for an InXL or Combination ``model`` (``name`` in
    errors) over ``samples`` (fairseq batches with ``reorder_positions``), as a dict."""
    import torch

    # imported here: the modules pull in fairseq, which --help does not need
    from ..modules.input_xl_positions import SATURATION

    encoder = getattr(model, "encoder", None)
    if getattr(encoder, "pe_in", None) is None:
        raise InputError(f"{name}: a {type(model).__name__} without PE_IN (InXL's input "
                         "exists in transformer_xlpe with --xlpe-mode inxl or combination)")
    pre, embed, sinusoid, abs_pos, xl_pos, odd = [], [], [], [], [], []
    with torch.no_grad():
        for sample in samples:
            net_input = sample["net_input"]
            src_tokens, reorder = net_input["src_tokens"], net_input["reorder_positions"]
            pe_abs, pe_xl = encoder.position_sinusoids(src_tokens, reorder)
            real = src_tokens.ne(encoder.padding_idx)
            abs_positions = real.long().cumsum(dim=1) - 1
            pre.append(encoder.pe_in.pre_activation(pe_abs, pe_xl)[real].float())
            embed.append((encoder.embed_scale * encoder.embed_tokens(src_tokens))[real].float())
            sinusoid.append(pe_abs[real].float())
            abs_pos.append(abs_positions[real])
            xl_pos.append(reorder[real])
            odd.append((sample["id"].unsqueeze(1).expand_as(src_tokens) % 2 == 1)[real])
    if not pre:
        raise InputError("the split has no sentence")
    pre, embed, sinusoid = torch.cat(pre), torch.cat(embed), torch.cat(sinusoid)
    abs_pos, xl_pos, fitted = torch.cat(abs_pos), torch.cat(xl_pos), ~torch.cat(odd)
    pe_in = torch.tanh(pre)
    longest = int(max(abs_pos.max(), xl_pos.max())) + 1
    table = encoder.xl_positions(torch.arange(longest)).float()
    moved = abs_pos.ne(xl_pos) & xl_pos.ge(0)
    with_xl = xl_pos.ge(0)
    return {
        "tokens": len(pe_in),
        "in_norm": float(pe_in.norm(dim=1).mean()),
        "embed_norm": float(embed.norm(dim=1).mean()),
        "sinusoid_norm": float(sinusoid.norm(dim=1).mean()),
        "saturated": float((pre.abs() > SATURATION).double().mean()),
        "abs_readback": position_readback(pe_in, abs_pos, table, fitted),
        "xl_readback": position_readback(pe_in[with_xl], xl_pos[with_xl], table,
                                         fitted[with_xl]),
        "moved_tokens": int(moved.sum()),
        "xl_readback_moved": position_readback(pe_in[moved], xl_pos[moved], table,
                                               fitted[moved]),
    }


def checkpoint_diagnostics(checkpoint, data_bin, split, max_tokens):
    require_files([checkpoint])
    if not os.path.isdir(data_bin):
        raise InputError(f"--data-bin {data_bin}: no such directory")
    check_dictionaries(data_bin)
    if not any(name.startswith(f"{split}.reorder.") for name in os.listdir(data_bin)):
        raise InputError(f"{os.path.join(data_bin, split)}.reorder.*: --data-bin {data_bin} "
                         f"has no reorder positions for split {split!r} (xlpe-binarize)")
    model, task = load_model(checkpoint, data_bin)
    _, batches = split_batches(model, task, split, max_tokens)
    return input_diagnostics(model, batches, checkpoint)


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-inxl-diagnostics",
                                     description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--checkpoint", required=True,
                        help="a transformer_xlpe checkpoint (--xlpe-mode inxl or combination)")
    parser.add_argument("--data-bin", required=True,
                        help="data-bin with reorder positions for --split (the xlpe data-bin)")
    parser.add_argument("--split", default="valid", help="split of --data-bin (default: valid)")
    parser.add_argument("--max-tokens", type=positive_int, default=4000,
                        help="source and target tokens a batch (default: 4000)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    run_command(lambda: print(json.dumps(checkpoint_diagnostics(
        args.checkpoint, args.data_bin, args.split, args.max_tokens), sort_keys=True)),
        "xlpe-inxl-diagnostics")
    return 0


if __name__ == "__main__":
    sys.exit(main())
