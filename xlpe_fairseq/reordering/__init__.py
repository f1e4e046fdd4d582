"""Reorder extraction: target-ordered source positions from word alignments."""
