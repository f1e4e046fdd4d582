"""BLEU against a perturbation level: the markdown table and the line plot.

Shared by the two robustness analyses, which plot one line per model over the share of
perturbed words: swapped source words (Chen et al. 2019, §6.5, Figs. 3-5) and noisy
reorder positions in training (Ding et al. 2020, §4.5, Fig. 4).
A series maps a model name to ``{level: BLEU}``.
"""
import logging

from ..io import atomic_output


def markdown_table(series, level_label, level_format="{:g}"):
    """Rows are the levels, columns the models; a missing point is left blank."""
    levels = sorted({level for points in series.values() for level in points})
    lines = [
        "| " + " | ".join([level_label, *series]) + " |",
        "|" + "---|" * (len(series) + 1),
    ]
    for level in levels:
        cells = [f"{points[level]:.2f}" if level in points else "" for points in series.values()]
        lines.append("| " + " | ".join([level_format.format(level), *cells]) + " |")
    return "\n".join(lines) + "\n"


def plot_curves(path, series, level_label, title, y_label="BLEU"):
    """Write a PNG line plot with one marked line per model."""
    # importing fairseq's tasks sets the root logger to DEBUG (fairseq/tasks/
    # frm_text_to_speech.py): keep matplotlib's font search off the user's terminal
    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    # Figure without pyplot: no global backend or GUI state, so it runs headless
    # (the Agg canvas) and is safe to call repeatedly from one process.
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 4.2), dpi=120, layout="constrained")
    axes = figure.add_subplot()
    for name, points in series.items():
        levels = sorted(points)
        axes.plot(levels, [points[level] for level in levels], marker="o", label=name)
    axes.set_xlabel(level_label)
    axes.set_ylabel(y_label)
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend()
    with atomic_output(path, "wb") as out:
        figure.savefig(out, format="png")
