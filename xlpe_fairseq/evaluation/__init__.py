"""Evaluation: scoring fairseq-generate output (BLEU, chrF) and, later, alignment quality."""
