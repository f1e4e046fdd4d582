"""Reading the preorderer's inputs: source BPE text and reorder files, checked line by line."""
import contextlib
import random

from ..io import InputError, check_same_line_count, require_files, text_lines
from ..data.reorder_file import parse_reorder_line


def read_tokens(path):
    """The whitespace-separated tokens of each line of ``path``."""
    require_files([path])
    with text_lines(path) as lines:
        return [line.split() for line in lines]


def read_reorder(path, lengths, lengths_from):
    """Reorder lines of ``path``, each a permutation of ``range(lengths[k])``.

    ``lengths_from`` names the file the lengths come from, for the error messages. Raises
    InputError / ReorderFileError naming the file and the 1-based line.
    """
    require_files([path])
    with text_lines(path) as lines:
        lines = list(lines)
    if len(lines) != len(lengths):
        raise InputError(f"{path} has {len(lines)} lines but {lengths_from} has {len(lengths)}")
    return [parse_reorder_line(text, n, path, lineno)
            for lineno, (text, n) in enumerate(zip(lines, lengths), start=1)]


def read_source_with_reorder(source_path, reorder_path):
    """Token lists of ``source_path`` and the matching positions of ``reorder_path``."""
    check_same_line_count([source_path, reorder_path])
    sentences = read_tokens(source_path)
    positions = read_reorder(reorder_path, [len(s) for s in sentences], source_path)
    return sentences, positions


def read_sample_with_reorder(source_path, reorder_path, size, seed):
    """Like ``read_source_with_reorder``, for a seeded sample of ``size`` lines (all, if fewer).

    Memory holds the sample, not the corpus: the files are streamed once to count and once
    to read, and every reorder line is still checked against its source's length. The
    sample depends on ``seed`` and the line count only, so preorderers trained with
    different seeds of their own share it when given the same ``seed`` here. Lines keep
    their order in the files.
    """
    total = check_same_line_count([source_path, reorder_path])
    chosen = set(random.Random(seed).sample(range(total), size)) if size < total else None
    sentences, positions = [], []
    with contextlib.ExitStack() as stack:
        sources = stack.enter_context(text_lines(source_path))
        reorders = stack.enter_context(text_lines(reorder_path))
        for index, (source, reorder) in enumerate(zip(sources, reorders)):
            tokens = source.split()
            order = parse_reorder_line(reorder, len(tokens), reorder_path, index + 1)
            if chosen is None or index in chosen:
                sentences.append(tokens)
                positions.append(order)
    return sentences, positions
