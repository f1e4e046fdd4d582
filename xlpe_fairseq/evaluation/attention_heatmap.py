"""``xlpe-attention-heatmap``: encoder-decoder attention of two checkpoints on one sentence.

The reference is force-decoded (teacher forcing, as in training) and the attention of one
decoder layer over the source, averaged over its heads, is drawn for both checkpoints side by
side: rows are the target tokens being predicted, columns the source BPE tokens. This is the
qualitative view of where a model looks while reordering, cf. the attention and case analyses
of Chen et al. (2019, §6.6) and Ding et al. (2020, §4). The default layer is the
penultimate one, whose attention is commonly the most alignment-like (the last layer's is
often diffuse); fairseq's LSTM has one attention, after its last layer, and shows that.

Right-to-left tokens (Hebrew, Arabic) are drawn with their characters reversed, combining
marks kept on their base letter, because matplotlib lays text out left to right only.
"""
import argparse
import logging
import sys
import unicodedata
from pathlib import Path

from ..help_format import HelpFormatter
from ..io import NON_NEGATIVE, InputError, atomic_output, check_outputs, run_command
from .attention_alignment import attention_layer, forced_attention_of_batch, load_model
from .compare import named_path

BPE_CONTINUATION = "@@"
# DejaVu Sans (matplotlib's default) has Hebrew and Arabic; the others cover scripts it lacks
# where installed. Only installed families are listed, to avoid matplotlib's missing-font warnings.
FONT_FALLBACK = ["DejaVu Sans", "Noto Sans", "Noto Sans Hebrew", "Noto Sans CJK JP", "FreeSans"]


def display_token(token):
    """The token in visual order: a right-to-left word's letters reversed, keeping each
    combining mark (vowel point) after its base letter and the ``@@`` marker at the end."""
    body, marker = token, ""
    if token.endswith(BPE_CONTINUATION):
        body, marker = token[: -len(BPE_CONTINUATION)], BPE_CONTINUATION
    if not any(unicodedata.bidirectional(char) in ("R", "AL") for char in body):
        return token
    clusters = []
    for char in body:
        if clusters and unicodedata.combining(char):
            clusters[-1] += char
        else:
            clusters.append(char)
    return "".join(reversed(clusters)) + marker


def forced_attention(checkpoint, data_bin, split, index, layer=None, preorderer=None):
    """Return ``(attention (target x source), source tokens, target tokens, layer used)``."""
    import torch

    model, task = load_model(checkpoint, data_bin, preorderer)
    # importing fairseq sets the root logger to DEBUG (fairseq/models/wav2vec/
    # wav2vec2_classification.py), which floods stderr with matplotlib's font search
    logging.getLogger().setLevel(logging.WARNING)
    task.load_dataset(split)
    dataset = task.dataset(split)
    if not 0 <= index < len(dataset):
        raise InputError(f"{data_bin}: split {split!r} has {len(dataset)} sentences, "
                         f"no index {index}")
    sample = dataset.collater([dataset[index]])
    if sample.get("target") is None:
        raise InputError(f"{data_bin}: split {split!r} has no target side to force-decode")
    try:
        layer = attention_layer(model, layer)
    except InputError as error:
        raise InputError(f"{checkpoint}: {error}") from None
    with torch.no_grad():
        attention, source_tokens = forced_attention_of_batch(model, sample["net_input"], layer)
    attention = attention[0]  # a batch of one sentence
    source = [task.source_dictionary[i] for i in source_tokens[0].tolist()]
    target = [task.target_dictionary[i] for i in sample["target"][0].tolist()]
    return attention.numpy(), source, target, layer


def plot_heatmaps(path, panels, title):
    """``panels``: list of ``(name, attention, source tokens, target tokens, layer)``."""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    fonts = [name for name in FONT_FALLBACK if name in installed] or ["sans-serif"]
    _, _, source, target, _ = panels[0]
    # about a quarter inch per token keeps the tick labels readable on long verses
    width = len(panels) * (2.5 + 0.22 * len(source)) + 1.0
    height = 1.8 + 0.22 * len(target)
    with matplotlib.rc_context({"font.family": fonts}):
        figure = Figure(figsize=(min(width, 60), min(height, 40)), dpi=110, layout="constrained")
        axes = figure.subplots(1, len(panels), squeeze=False)[0]
        for ax, (name, attention, source, target, layer) in zip(axes, panels):
            image = ax.imshow(attention, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
            ax.set_xticks(range(len(source)), [display_token(t) for t in source],
                          rotation=90, fontsize=8)
            ax.set_yticks(range(len(target)), [display_token(t) for t in target], fontsize=8)
            ax.set_xlabel("source")
            ax.set_ylabel("target (forced)")
            ax.set_title(f"{name}, decoder layer {layer + 1}", fontsize=9)
        figure.colorbar(image, ax=list(axes), shrink=0.8, label="attention")
        figure.suptitle(title, fontsize=10)
        with atomic_output(path, "wb") as out:
            figure.savefig(out, format="png")


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-attention-heatmap",
                                     description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--checkpoint", nargs=2, required=True, type=named_path,
                        metavar="NAME=PATH", help="the two checkpoints to compare (a bare "
                        "PATH is named after its file stem)")
    parser.add_argument("--data-bin", required=True, help="binarized data of both checkpoints")
    parser.add_argument("--split", default="test", help="binarized split to read")
    parser.add_argument("--index", type=NON_NEGATIVE, default=0, help="sentence id in the split")
    parser.add_argument("--layer", type=NON_NEGATIVE,
                        help="0-based decoder layer (default: the penultimate, or 0 for one layer)")
    parser.add_argument("--preorderer",
                        help="preorderer for XL PE checkpoints when the split has no positions")
    parser.add_argument("--output", required=True, help="PNG to write")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)

    def body():
        check_outputs([args.output], [path for _, path in args.checkpoint])
        panels = []
        for name, path in args.checkpoint:
            if not Path(path).is_file():
                raise InputError(f"{path}: no such checkpoint")
            attention, source, target, layer = forced_attention(
                path, args.data_bin, args.split, args.index, args.layer, args.preorderer
            )
            if panels and (source, target) != (panels[0][2], panels[0][3]):
                raise InputError(f"{path}: its dictionaries give sentence {args.index} other "
                                 f"tokens than {panels[0][0]}'s; compare checkpoints of one "
                                 "data-bin")
            panels.append((name, attention, source, target, layer))
        plot_heatmaps(args.output, panels,
                      f"{args.split} sentence {args.index}: encoder-decoder attention, "
                      "mean over heads")
        print(f"wrote {args.output}")

    run_command(body, parser.prog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
