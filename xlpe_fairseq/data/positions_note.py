"""A data-bin's note on the reorder positions it lacks on purpose.

A preparation that made positions for the training split only (a corpus prepared without the
source-only preorderer, which gives valid and test theirs) leaves ``no-preorderer.txt`` in the
data-bin, a line that says why and what makes them. A model that reads positions in every split
refuses such a data-bin with that line, rather than with a missing file.
"""
import os

NO_PREORDERER = "no-preorderer.txt"


def positions_note(data_bin, split):
    """The note's line when ``data_bin`` holds no positions of ``split`` on purpose (the
    training split always has them); else None."""
    path = os.path.join(data_bin, NO_PREORDERER)
    if split == "train" or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as stream:
        note = " ".join(stream.read().split())
    return f"{data_bin} has no {split} positions: {note}"
