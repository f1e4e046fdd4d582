"""``xlpe-binarize``: reorder text -> fairseq mmap dataset ``{split}.reorder.{src}-{tgt}``.

Every line is checked against the source BPE line it belongs to (one position per token,
a permutation, or -1 for tokens without an order target from ``xlpe-reorder --unaligned
skip`` with the others a permutation of 0..m-1) before anything is written; positions are
stored as signed integers so that -1 survives (the task refuses it for models that read
positions as input); the ``.bin``/``.idx`` pair is written to
temporary files in the destination directory and moved into place only when complete.
"""
import argparse
import os
import sys

import numpy as np

from ..help_format import HelpFormatter
from ..io import (
    check_outputs,
    check_same_line_count,
    read_parallel_chunks,
    require_lines,
    run_command,
    temporary_directory,
    text_lines,
)
from ..data.reorder_file import parse_reorder_line


def dataset_prefix(destdir, split, source_lang, target_lang):
    """Path prefix fairseq's ``load_indexed_dataset`` takes for the reorder positions."""
    return os.path.join(destdir, f"{split}.reorder.{source_lang}-{target_lang}")


def _max_source_length(source_path):
    with text_lines(source_path) as lines:
        return max((len(line.split()) for line in lines), default=0)


def binarize_reorder(reorder_path, source_path, prefix, chunk_size=100000):
    """Validate ``reorder_path`` against ``source_path`` and write ``prefix.{bin,idx}``.

    Returns the number of sentences written.
    """
    import torch
    from fairseq.data import indexed_dataset

    total = check_same_line_count([reorder_path, source_path])
    require_lines(reorder_path, total)
    check_outputs([prefix + ".bin", prefix + ".idx"], [reorder_path, source_path])
    # the largest position decides the smallest SIGNED integer type that holds every value
    # (fairseq's make_builder picks uint16, which would turn -1 into 65535)
    max_position = max(_max_source_length(source_path) - 1, 0)
    dtype = np.int16 if max_position <= np.iinfo(np.int16).max else np.int32
    destdir = os.path.dirname(os.path.abspath(prefix))
    with temporary_directory(destdir, ".xlpe-binarize.") as tmp_dir:
        tmp_prefix = os.path.join(tmp_dir, "reorder")
        builder = indexed_dataset.MMapIndexedDatasetBuilder(tmp_prefix + ".bin", dtype=dtype)
        for first_lineno, rows in read_parallel_chunks([reorder_path, source_path], chunk_size):
            for offset, (reorder, source) in enumerate(rows):
                positions = parse_reorder_line(reorder, len(source.split()), reorder_path,
                                               first_lineno + offset, allow_no_target=True)
                builder.add_item(torch.IntTensor(positions))
        builder.finalize(tmp_prefix + ".idx")
        os.replace(tmp_prefix + ".bin", prefix + ".bin")
        os.replace(tmp_prefix + ".idx", prefix + ".idx")
    return total


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-binarize", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--reorder", required=True, help="reorder text ({split}.reorder)")
    parser.add_argument("--source", required=True,
                        help="source BPE text the positions refer to (the line lengths)")
    parser.add_argument("--destdir", required=True, help="fairseq data-bin directory")
    parser.add_argument("--split", required=True, help="split name, e.g. train")
    parser.add_argument("--source-lang", required=True, help="source language, e.g. he")
    parser.add_argument("--target-lang", required=True, help="target language, e.g. en")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    for option, name in (("--split", args.split), ("--source-lang", args.source_lang),
                         ("--target-lang", args.target_lang)):
        # they become part of a file name in --destdir
        if not name or os.sep in name or name in (".", ".."):
            parser.error(f"{option} must be a plain name, got {name!r}")

    def body():
        prefix = dataset_prefix(args.destdir, args.split, args.source_lang, args.target_lang)
        replacing = os.path.exists(prefix + ".idx")
        count = binarize_reorder(args.reorder, args.source, prefix)
        # the name says nothing of the method (btg, dpe, preorderer) the old positions had
        print(f"xlpe-binarize: {'replaced' if replacing else 'wrote'} {prefix}.bin/.idx "
              f"({count} sentences)", file=sys.stderr)

    run_command(body, "xlpe-binarize")


if __name__ == "__main__":
    main()
