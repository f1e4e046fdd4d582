"""``xlpe-aer``: alignment error rate of a model's attention, and of an aligner's links.

Following the XL PE paper (Ding et al. 2020, §4.3), a model's word alignment is read off the
encoder-decoder attention of the penultimate decoder layer, averaged over its heads, while
the model is force-decoded on the reference: each target BPE piece links to the source piece
it attends to most (EOS excluded on both sides). fairseq's LSTM (XL PE Table 4's) has one
attention, which it reads instead. The piece links are merged to word links and
scored against the gold alignment (``alignment_error_rate``). The split goes through the
task's own batch iterator, so XL PE models get their reorder positions from the split's
reorder files or from ``--preorderer`` exactly as in fairseq-generate.

Aligner output (eflomal, fast_align) is scored on the same gold as reference rows:
``--links`` for word-level links, ``--bpe-links`` for links over the BPE pieces.
"""
import argparse
import json
import os
import sys

from ..help_format import HelpFormatter
from ..io import (
    NON_NEGATIVE,
    InputError,
    OptionError,
    atomic_output,
    check_dictionaries,
    check_output_directory,
    check_outputs,
    load_fairseq_ensemble,
    positive_int,
    run_command,
)
from .alignment_error_rate import (
    check_in_range,
    corpus_scores,
    format_links,
    merge_bpe_links,
    read_gold,
    read_predicted,
    read_tokens,
    word_count,
)
from .compare import named_path


def load_model(checkpoint, data_bin, preorderer=None):
    """``(model, task)`` of a checkpoint."""
    check_dictionaries(data_bin)
    overrides = {"data": data_bin}
    if preorderer:
        overrides["preorderer"] = preorderer
    ensemble, _, task = load_fairseq_ensemble([checkpoint], overrides)
    return ensemble[0].eval(), task


def attention_layer(model, layer=None):
    """The decoder layer whose encoder-decoder attention is read: ``layer`` (0-based), by
    default the penultimate (the only one of a one-layer decoder), as in XL PE §4.3. fairseq's
    LSTM has one attention, after its last layer: that one."""
    from fairseq.models.lstm import LSTMModel

    layers = model.decoder.num_layers
    if isinstance(model, LSTMModel):
        if layer not in (None, layers - 1):
            raise InputError(f"layer {layer}: an LSTM has one attention, after its last "
                             f"layer ({layers - 1})")
        return layers - 1
    layer = max(layers - 2, 0) if layer is None else layer
    if not 0 <= layer < layers:
        raise InputError(f"layer {layer}: the decoder has layers 0..{layers - 1}")
    return layer


def forced_attention_of_batch(model, net_input, layer):
    """``(attention, source tokens)`` of one force-decoded batch: attention batch x target x
    source (fairseq's mean over heads) of decoder layer ``layer`` (see ``attention_layer``),
    and the source tokens in the order of its columns: fairseq's LSTM right-pads the source
    that the task left-pads, and so are its attention's columns."""
    from fairseq.models.lstm import LSTMModel
    from fairseq.utils import convert_padding_direction

    source = net_input["src_tokens"]
    if isinstance(model, LSTMModel):
        _, attention = model(**net_input)
        if model.encoder.left_pad:
            source = convert_padding_direction(source, model.encoder.padding_idx,
                                               left_to_right=True)
        return attention, source
    _, extra = model(**net_input, features_only=True, alignment_layer=layer)
    return extra["attn"][0], source


def split_batches(model, task, split, max_tokens):
    """``(dataset, batches)``: ``split`` loaded by the task, and its batches in corpus order,
    as fairseq-generate would make them."""
    task.load_dataset(split)
    dataset = task.dataset(split)
    longest = max((dataset.num_tokens(index) for index in range(len(dataset))), default=0)
    if longest > max_tokens:
        raise OptionError(f"--max-tokens {max_tokens} is less than the {longest} tokens of the "
                          f"longest sentence pair of {split}: a batch must hold one")
    batches = task.get_batch_iterator(
        dataset=dataset, max_tokens=max_tokens, max_positions=model.max_positions(),
        # a sentence too long for the model must fail, not vanish from the results
        ignore_invalid_inputs=False, required_batch_size_multiple=1, num_workers=0,
    ).next_epoch_itr(shuffle=False)
    return dataset, batches


def attention_links(model, task, split, alignment_layer=None, max_tokens=4000):
    """``(links, source_length, target_length)`` per sentence of ``split``, in corpus order:
    the BPE-piece links ``{(source, target)}`` and the piece counts without EOS, from the
    attention of ``attention_layer(model, alignment_layer)``.
    """
    import torch

    alignment_layer = attention_layer(model, alignment_layer)
    dataset, batches = split_batches(model, task, split, max_tokens)
    source_pad, source_eos = task.source_dictionary.pad(), task.source_dictionary.eos()
    pad, eos = task.target_dictionary.pad(), task.target_dictionary.eos()
    links = [None] * len(dataset)
    with torch.no_grad():
        for sample in batches:
            attention, source_tokens = forced_attention_of_batch(model, sample["net_input"],
                                                                 alignment_layer)
            for row, sentence_id in enumerate(sample["id"].tolist()):
                source_ok = source_tokens[row].ne(source_pad) & source_tokens[row].ne(source_eos)
                target_ok = sample["target"][row].ne(pad) & sample["target"][row].ne(eos)
                weights = attention[row][target_ok][:, source_ok]
                sources = weights.argmax(dim=1).tolist() if weights.numel() else []
                links[sentence_id] = (
                    {(i, j) for j, i in enumerate(sources)},
                    int(source_ok.sum()),
                    int(target_ok.sum()),
                )
    missing = [i for i, found in enumerate(links) if found is None]
    if missing:
        raise InputError(f"{split}: no attention for sentences {missing[:10]}")
    return links


def check_lengths(sentences, source_bpe, target_bpe, source_path, target_path, split):
    """The binarized split must hold the BPE text's pieces, sentence by sentence."""
    if not len(sentences) == len(source_bpe) == len(target_bpe):
        raise InputError(f"split {split!r} has {len(sentences)} sentences, {source_path} "
                         f"{len(source_bpe)} lines, {target_path} {len(target_bpe)} lines")
    for n, ((_, source_length, target_length), source, target) in enumerate(
        zip(sentences, source_bpe, target_bpe), 1
    ):
        if (source_length, target_length) != (len(source), len(target)):
            raise InputError(
                f"{source_path}:{n} / {target_path}:{n}: {len(source)} and {len(target)} BPE "
                f"pieces, but sentence {n - 1} of split {split!r} has {source_length} and "
                f"{target_length} tokens; the BPE text and --data-bin do not match"
            )


def word_links(bpe_links, source_bpe, target_bpe, source_path, target_path, links_name):
    """Merge per-sentence BPE links to word links, checking the BPE files match line by line."""
    if not len(bpe_links) == len(source_bpe) == len(target_bpe):
        raise InputError(
            f"{links_name}: {len(bpe_links)} sentences, {source_path}: {len(source_bpe)} lines, "
            f"{target_path}: {len(target_bpe)} lines"
        )
    return [
        merge_bpe_links(links, source, target, f"{links_name} sentence {n} "
                        f"({source_path}:{n}, {target_path}:{n})")
        for n, (links, source, target) in enumerate(zip(bpe_links, source_bpe, target_bpe), 1)
    ]


def check_gold_fits(gold, gold_path, source_bpe, target_bpe):
    """The gold's word indices must lie within the words the BPE text spells."""
    for n, ((_, possible), source, target) in enumerate(zip(gold, source_bpe, target_bpe), 1):
        check_in_range(possible, word_count(source), word_count(target), f"{gold_path}:{n}",
                       "words in the BPE text")


def format_table(rows):
    lines = [f"{'system':<24} {'AER':>7} {'P':>7} {'R':>7} {'sentences':>9}"]
    for row in rows:
        lines.append(f"{row['name']:<24} {row['aer']:7.4f} {row['precision']:7.4f} "
                     f"{row['recall']:7.4f} {row['sentences']:9d}")
    return "\n".join(lines) + "\n"


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-aer", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--gold", required=True,
                        help="word-level gold alignment, i-j (sure) and i?j (possible) links")
    parser.add_argument("--source-bpe", help="BPE source text of the split (needed to merge "
                        "BPE links to words: --checkpoint, --bpe-links)")
    parser.add_argument("--target-bpe", help="BPE target text of the split")
    parser.add_argument("--checkpoint", type=named_path, action="append", default=[],
                        metavar="NAME=CKPT", help="model whose attention is scored; repeatable")
    parser.add_argument("--links", type=named_path, action="append", default=[],
                        metavar="NAME=FILE", help="word-level links of an aligner; repeatable")
    parser.add_argument("--bpe-links", type=named_path, action="append", default=[],
                        metavar="NAME=FILE", help="BPE-level links of an aligner; repeatable")
    parser.add_argument("--data-bin", help="binarized data of the split, for --checkpoint")
    parser.add_argument("--split", default="test", help="split of --data-bin (default: test)")
    parser.add_argument("--alignment-layer", type=NON_NEGATIVE,
                        help="0-based decoder layer (default: the penultimate, as in XL PE §4.3; "
                        "an LSTM's one attention comes after its last layer)")
    parser.add_argument("--preorderer", help="preorderer checkpoint for XL PE models on a split "
                        "without reorder files (default: the one in the checkpoint's config)")
    parser.add_argument("--max-tokens", type=positive_int, default=4000)
    parser.add_argument("--write-links", metavar="DIR",
                        help="write each system's word links to DIR/NAME.align")
    parser.add_argument("--json", help="also write the scores to this JSON file")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    systems = args.checkpoint + args.links + args.bpe_links
    if not systems:
        parser.error("give at least one --checkpoint, --links or --bpe-links")
    names = [name for name, _ in systems]
    if len(set(names)) != len(names):
        parser.error(f"system names must be unique, got {names}")
    if bool(args.source_bpe) != bool(args.target_bpe):
        parser.error("give both --source-bpe and --target-bpe, or neither")
    if (args.checkpoint or args.bpe_links) and not args.source_bpe:
        parser.error("--checkpoint and --bpe-links need --source-bpe and --target-bpe")
    if args.checkpoint and not args.data_bin:
        parser.error("--checkpoint needs --data-bin")
    run_command(lambda: _score_systems(args), parser.prog)
    return 0


def _score_systems(args):
    check_outputs([args.json], [args.gold, *(path for _, path in args.links + args.bpe_links)])
    if args.write_links:
        check_output_directory(args.write_links)
    gold = read_gold(args.gold)
    if args.source_bpe:
        source_bpe, target_bpe = read_tokens(args.source_bpe), read_tokens(args.target_bpe)
        check_gold_fits(gold, args.gold, source_bpe, target_bpe)
    predictions = {}
    for name, checkpoint in args.checkpoint:
        model, task = load_model(checkpoint, args.data_bin, args.preorderer)
        sentences = attention_links(model, task, args.split, args.alignment_layer, args.max_tokens)
        check_lengths(sentences, source_bpe, target_bpe, args.source_bpe, args.target_bpe, args.split)
        predictions[name] = word_links([links for links, _, _ in sentences], source_bpe,
                                       target_bpe, args.source_bpe, args.target_bpe,
                                       f"{checkpoint} on {args.split}")
    for name, path in args.bpe_links:
        predictions[name] = word_links(read_predicted(path), source_bpe, target_bpe,
                                       args.source_bpe, args.target_bpe, path)
    for name, path in args.links:
        predictions[name] = read_predicted(path)
    rows = []
    for name, links in predictions.items():
        rows.append({"name": name, **corpus_scores(links, gold, name, args.gold).as_dict()})
        if args.write_links:
            with atomic_output(os.path.join(args.write_links, f"{name}.align")) as out:
                out.writelines(format_links(sentence) + "\n" for sentence in links)
    print(format_table(rows), end="")
    if args.json:
        with atomic_output(args.json) as out:
            json.dump(rows, out, indent=2)


if __name__ == "__main__":
    sys.exit(main())
