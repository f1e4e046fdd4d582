"""Data preparation commands: corpus extraction, tokenization, BPE, word alignment, binarization."""
