"""``xlpe-dpe-order``: the source order a DPE checkpoint's network predicts, as a reorder file.

DPE's network (Zheng et al. 2021, §3) outputs ``r_i``, trained by Eq. 1 to be the sinusoid of
token i's target-order position. Read as a preorderer, each word takes the position of its
sentence whose sinusoid lies nearest to ``r_i`` (the criterion's nearest-position diagnostic);
ranking the words by that position, the earlier word first on ties, gives a permutation: the
order the network would write. Scored with ``xlpe-reorder-score`` against the split's DPE or
BTG positions, beside the monotone order and the preorderer's, it says how much of the target
order the network has learnt, in the measures used for the preorderer.

The split is read from ``--data-bin`` as fairseq-generate reads it, so its lines follow the
binarized split (and its BPE text) one to one.
"""
import argparse
import os

from ..criterions.order_diagnostics import nearest_sentence_position, own_positions
from ..help_format import HelpFormatter
from ..io import (
    InputError,
    atomic_output,
    check_dictionaries,
    check_outputs,
    positive_int,
    require_files,
    run_command,
)
from .attention_alignment import load_model, split_batches


def ranked_positions(nearest, own):
    """A permutation from each word's predicted position: word ``i`` goes to its rank when the
    words are sorted by ``(nearest[i], own[i])``, so that ties keep the source order."""
    order = sorted(range(len(nearest)), key=lambda i: (nearest[i], own[i]))
    positions = [0] * len(order)
    for rank, word in enumerate(order):
        positions[word] = rank
    return positions


def nearest_positions(model, src_tokens, padding_idx, eos_idx):
    """Per sentence of the batch, ``(nearest, own)`` of its words (EOS excluded): the
    sentence position whose sinusoid lies nearest to each DPE output, and the word's own."""
    import torch

    with torch.no_grad():
        predictions = model.encoder.dynamic_positions(
            src_tokens, model.encoder.embed_tokens(src_tokens)).float()
        nearest = nearest_sentence_position(model, predictions, src_tokens, padding_idx)
    own = own_positions(src_tokens, padding_idx)
    words = src_tokens.ne(padding_idx) & src_tokens.ne(eos_idx)
    return [(nearest[row][words[row]].tolist(), own[row][words[row]].tolist())
            for row in range(src_tokens.size(0))]


def predicted_orders(model, task, split, max_tokens=4000):
    """The network's permutation (``ranked_positions``) of every sentence of ``split``, in
    corpus order."""
    dataset, batches = split_batches(model, task, split, max_tokens)
    dictionary = task.source_dictionary
    orders = [None] * len(dataset)
    for sample in batches:
        sentences = nearest_positions(model, sample["net_input"]["src_tokens"],
                                      dictionary.pad(), dictionary.eos())
        for sentence_id, (nearest, own) in zip(sample["id"].tolist(), sentences):
            orders[sentence_id] = ranked_positions(nearest, own)
    return orders


def write_dpe_order(checkpoint, data_bin, split, output, max_tokens):
    require_files([checkpoint])
    check_outputs([output], [checkpoint])
    if not os.path.isdir(data_bin):
        raise InputError(f"--data-bin {data_bin}: no such directory")
    check_dictionaries(data_bin)
    split_prefix = os.path.join(data_bin, f"{split}.")
    if not any(name.startswith(f"{split}.") for name in os.listdir(data_bin)):
        raise InputError(f"{split_prefix}*: --data-bin {data_bin} has no split {split!r}")
    model, task = load_model(checkpoint, data_bin)
    if not hasattr(getattr(model, "encoder", None), "dynamic_positions"):
        raise InputError(f"{checkpoint}: a {type(model).__name__}, which has no DPE network "
                         "(only transformer_dpe models predict an order)")
    # the network reads only the source: any split, train included, is read without its targets
    task.reorder_role = None
    orders = predicted_orders(model, task, split, max_tokens)
    with atomic_output(output) as out:
        out.writelines(" ".join(map(str, positions)) + "\n" for positions in orders)


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-dpe-order", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--checkpoint", required=True, help="a transformer_dpe checkpoint")
    parser.add_argument("--data-bin", required=True, help="binarized data holding --split")
    parser.add_argument("--split", default="valid", help="split of --data-bin (default: valid)")
    parser.add_argument("--output", required=True,
                        help="reorder file to write: per line, each source BPE piece's position "
                        "in the predicted order")
    parser.add_argument("--max-tokens", type=positive_int, default=4000,
                        help="source and target tokens a batch (default: 4000)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    run_command(lambda: write_dpe_order(args.checkpoint, args.data_bin, args.split, args.output,
                                        args.max_tokens), "xlpe-dpe-order")
    return 0


if __name__ == "__main__":
    main()
