"""The binarized files of a data-bin, checked before fairseq maps them.

fairseq reads a split's ``.idx`` and ``.bin`` files (its ``mmap`` format) without a check: a
truncated ``.idx`` fails deep in numpy, and then once more, as ``Exception ignored in
MMapIndexedDataset.__del__``, when the half-built dataset is collected; a truncated ``.bin``
fails when a batch reaches the missing sentences; token ids beyond the dictionary (a split
binarized with another ``dict.LANG.txt``) fail in the model's embedding lookup. Each is found
here instead, as an InputError naming the file.
"""
import itertools
import os
import struct

import numpy as np

from ..io import InputError

MMAP_MAGIC = b"MMIDIDX\x00\x00"
# magic, version (<Q), token type code (<B), number of sentences (<Q); then the sentence sizes
# (int32) and their offsets in the .bin file (int64)
HEADER = struct.Struct("<9sQBQ")
# fairseq's indexed_dataset._code_to_dtype
TOKEN_TYPES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64,
               7: np.double, 8: np.uint16, 9: np.uint32, 10: np.uint64}
REBINARIZE = "binarize the split again"


def check_indexed_file(prefix, dictionary_size=None, dictionary_path=None):
    """InputError unless ``prefix``.idx and ``prefix``.bin (fairseq's mmap format) are whole,
    and, given ``dictionary_size``, every token id is below it. Files of fairseq's other
    formats are left to fairseq."""
    index, data = prefix + ".idx", prefix + ".bin"
    with open(index, "rb") as f:
        header = f.read(HEADER.size)
    if len(header) < HEADER.size and MMAP_MAGIC.startswith(header[:len(MMAP_MAGIC)]):
        raise InputError(f"{index}: truncated ({len(header)} bytes, not even its header); "
                         f"{REBINARIZE}")
    if not header.startswith(MMAP_MAGIC):
        return
    _, _, code, count = HEADER.unpack(header)
    if code not in TOKEN_TYPES:
        raise InputError(f"{index}: unknown token type {code} in its header; {REBINARIZE}")
    token_size = np.dtype(TOKEN_TYPES[code]).itemsize
    index_size, needed = os.path.getsize(index), HEADER.size + 12 * count
    if index_size < needed:
        raise InputError(f"{index}: truncated ({index_size} bytes, {needed} for the {count} "
                         f"sentences its header counts); {REBINARIZE}")
    if not count:
        return
    sizes = np.fromfile(index, dtype=np.int32, count=count, offset=HEADER.size)
    offsets = np.fromfile(index, dtype=np.int64, count=count, offset=HEADER.size + 4 * count)
    end = int(offsets[-1]) + int(sizes[-1]) * token_size
    if not os.path.isfile(data):
        raise InputError(f"{data}: no such file (its index {index} is there); {REBINARIZE}")
    data_size = os.path.getsize(data)
    if data_size < end:
        raise InputError(f"{data}: truncated ({data_size} bytes, {end} for the sentences of "
                         f"{index}); {REBINARIZE}")
    if dictionary_size is not None and end:
        largest = int(np.memmap(data, dtype=TOKEN_TYPES[code], mode="r",
                                shape=(end // token_size,)).max())
        if largest >= dictionary_size:
            raise InputError(
                f"{data}: token id {largest}, beyond the {dictionary_size} entries of "
                f"{dictionary_path}: the split was binarized with another dictionary; "
                f"{REBINARIZE} with this one, or use the data-bin it belongs to")


def check_language_pair_files(data_path, split, languages, dictionaries, combine):
    """check_indexed_file of each file of ``split`` that fairseq's load_langpair_dataset
    reads: ``{split}.{src}-{tgt}.{lang}`` (or ``{tgt}-{src}``), and with ``combine``
    ``{split}1``, ``{split}2`` ... while they exist. ``languages`` is (src, tgt),
    ``dictionaries`` their fairseq Dictionaries."""
    src, tgt = languages
    for k in itertools.count():
        name = split + (str(k) if k else "")
        for first, second in ((src, tgt), (tgt, src)):
            prefix = os.path.join(data_path, f"{name}.{first}-{second}.")
            if os.path.exists(prefix + src + ".idx"):
                break
        else:
            return  # fairseq reports a missing split itself
        for lang, dictionary in zip(languages, dictionaries):
            if lang is not None and os.path.exists(prefix + lang + ".idx"):
                check_indexed_file(prefix + lang, len(dictionary),
                                   os.path.join(data_path, f"dict.{lang}.txt"))
        if not combine:
            return
