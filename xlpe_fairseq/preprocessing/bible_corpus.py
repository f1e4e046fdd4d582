"""``xlpe-bible-corpus``: the default Hebrew->English corpus, with manual word alignments.

Source: PyPI ``bible-alignments==0.4.1`` (Clear Bible; read as a zip, not installed because
it pulls django). Inside the wheel:

- ``data/sources/WLCM.tsv``: the Westminster Leningrad Codex split into morphemes, one token
  a row; the id ``oBBCCCVVVWWWP`` gives book, chapter, verse, word and morpheme part.
  The morphemes are the Hebrew tokens, used as they are (pointed text, no re-tokenization).
- ``data/eng/targets/BSB/*.tsv``: the Berean Standard Bible, one word or punctuation mark
  a row, with id ``BBCCCVVVWWW`` and ``source_verse``, the Hebrew verse the token translates
  (English and Hebrew versification differ in ~48k tokens, so pairs follow source_verse).
  These tokens are the English side as they are: Moses would only split the curly
  possessive (``man’s`` -> ``man ’ s``), so re-tokenizing would add nothing but a remap.
- ``data/eng/alignments/BSB/WLCM-BSB-manual.json``: manual alignment records, each a group
  of source ids and target ids (``BBCCCVVVWWWP``, part always 1) aligned as a block. Every
  source-target pair of a group becomes a link; the data has no sure/possible distinction,
  so all links are sure (``i-j``). Links to ids absent from the token tables (~1.4k) or
  across Hebrew verses (a few hundred) are dropped and counted.

One pair per Hebrew verse (id ``BBCCCVVV``); pairs with an empty side are dropped. The
split is deterministic: verses with manual links are ranked by the SHA-256 of their id,
the first 1000 are test, the next 1000 valid, everything else train. valid/test keep their
gold alignments as ``{split}.gold.align`` over exactly the tokens of ``{split}.he/.en``.
"""
import argparse
import contextlib
import csv
import dataclasses
import fnmatch
import glob
import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile

from ..help_format import HelpFormatter
from ..io import (
    InputError,
    atomic_output,
    check_output_directory,
    find_not_utf8,
    require_files,
    run_command,
)

REQUIREMENT = "bible-alignments==0.4.1"
WHEEL_NAME = "bible_alignments-0.4.1-py3-none-any.whl"
SOURCE_MEMBER = "data/sources/WLCM.tsv"
TARGET_MEMBERS = "data/eng/targets/BSB/*.tsv"
ALIGNMENT_MEMBER = "data/eng/alignments/BSB/WLCM-BSB-manual.json"
SOURCE_LANG, TARGET_LANG = "he", "en"
HELD_OUT = (("test", 1000), ("valid", 1000))


@dataclasses.dataclass
class Verse:
    verse_id: str
    source: list  # Hebrew tokens
    target: list  # English tokens
    links: set  # gold (source index, target index) links


@dataclasses.dataclass
class CorpusStats:
    dropped_empty: int = 0
    links: int = 0
    links_to_unknown_token: int = 0
    links_across_verses: int = 0


def _read_tsv(stream):
    return csv.DictReader(io.TextIOWrapper(stream, encoding="utf-8"), delimiter="\t",
                          quoting=csv.QUOTE_NONE)


@contextlib.contextmanager
def _open_member(wheel, member):
    """A member of the wheel opened in binary; a UnicodeDecodeError while it is read as text
    becomes an InputError naming ``WHEEL/MEMBER``, the line and the byte."""
    with wheel.open(member) as f:
        try:
            yield f
        except UnicodeDecodeError:
            with wheel.open(member) as again:
                error = find_not_utf8(f"{wheel.filename}/{member}", again)
            if error is None:
                raise
            raise error from None


def _read_json(wheel, member):
    with _open_member(wheel, member) as f:
        try:
            return json.load(io.TextIOWrapper(f, encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise InputError(f"{wheel.filename}/{member}: not valid JSON ({err})") from None


def read_corpus(wheel_path):
    """Parse the wheel into verses (sorted by id) and statistics about dropped data."""
    require_files([wheel_path])
    if not zipfile.is_zipfile(wheel_path):
        raise InputError(f"{wheel_path}: not a wheel (zip file) of {REQUIREMENT}")
    with zipfile.ZipFile(wheel_path) as wheel:
        names = wheel.namelist()
        target_members = sorted(fnmatch.filter(names, TARGET_MEMBERS))
        for member in (SOURCE_MEMBER, ALIGNMENT_MEMBER):
            if member not in names:
                raise InputError(f"{wheel_path}: no {member} inside")
        if not target_members:
            raise InputError(f"{wheel_path}: no {TARGET_MEMBERS} inside")
        verses = {}
        source_index = {}  # token id -> (verse id, index in verse)
        with _open_member(wheel, SOURCE_MEMBER) as f:
            for row in _read_tsv(f):
                verse_id = row["id"][1:9]
                verse = verses.setdefault(verse_id, Verse(verse_id, [], [], set()))
                source_index[row["id"]] = (verse_id, len(verse.source))
                verse.source.append(row["text"])
        target_index = {}
        for member in target_members:
            with _open_member(wheel, member) as f:
                for row in _read_tsv(f):
                    verse = verses.get(row["source_verse"])
                    if verse is None:  # a New Testament token: translates Greek, not Hebrew
                        continue
                    target_index[row["id"]] = (verse.verse_id, len(verse.target))
                    verse.target.append(row["text"])
        records = _read_json(wheel, ALIGNMENT_MEMBER)["records"]
    stats = CorpusStats()
    for record in records:
        for source_id in record["source"]:
            if source_id not in source_index:
                stats.links_to_unknown_token += len(record["target"])
                continue
            source_verse, i = source_index[source_id]
            for target_id in record["target"]:
                target = target_index.get(target_id[:11])  # drop the part digit
                if target is None:
                    stats.links_to_unknown_token += 1
                elif target[0] != source_verse:
                    stats.links_across_verses += 1
                else:
                    verses[source_verse].links.add((i, target[1]))
                    stats.links += 1
    kept = []
    for verse_id in sorted(verses):
        verse = verses[verse_id]
        if verse.source and verse.target:
            kept.append(verse)
        else:
            stats.dropped_empty += 1
    return kept, stats


def split_verses(verses):
    """``{split: [verses]}``; held-out verses are the lowest SHA-256 ranks among the aligned."""
    ranked = sorted((v for v in verses if v.links),
                    key=lambda v: hashlib.sha256(v.verse_id.encode()).hexdigest())
    split_of = {}
    start = 0
    for split, size in HELD_OUT:
        for verse in ranked[start:start + size]:
            split_of[verse.verse_id] = split
        start += size
    splits = {"train": [], "valid": [], "test": []}
    for verse in verses:
        splits[split_of.get(verse.verse_id, "train")].append(verse)
    return splits


def write_splits(splits, out_dir):
    """Write ``{split}.he/.en/.ids`` and, for held-out splits, ``{split}.gold.align``."""
    for split, verses in splits.items():
        columns = {
            SOURCE_LANG: (" ".join(v.source) for v in verses),
            TARGET_LANG: (" ".join(v.target) for v in verses),
            "ids": (v.verse_id for v in verses),
        }
        if split != "train":
            columns["gold.align"] = (" ".join(f"{i}-{j}" for i, j in sorted(v.links))
                                     for v in verses)
        for suffix, lines in columns.items():
            with atomic_output(os.path.join(out_dir, f"{split}.{suffix}")) as f:
                f.writelines(line + "\n" for line in lines)


def fetch_wheel(cache_dir):
    """Path of the bible-alignments wheel, downloaded with pip into ``cache_dir`` if needed."""
    found = glob.glob(os.path.join(cache_dir, WHEEL_NAME))
    if found:
        return found[0]
    os.makedirs(cache_dir, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", REQUIREMENT,
                    "-d", cache_dir], check=True)
    return os.path.join(cache_dir, WHEEL_NAME)


def default_cache():
    """Where the wheel is downloaded: $XDG_CACHE_HOME/xlpe-fairseq, else ~/.cache/xlpe-fairseq."""
    return os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                        "xlpe-fairseq")


def write_corpus(out, cache, wheel=None):
    """The corpus into ``out`` from ``wheel`` (else the one in ``cache``, downloaded there if
    needed), saying what it holds and what was dropped."""
    check_output_directory(out)
    verses, stats = read_corpus(wheel or fetch_wheel(cache))
    splits = split_verses(verses)
    write_splits(splits, out)
    sizes = ", ".join(f"{split} {len(v)}" for split, v in splits.items())
    print(f"xlpe-bible-corpus: {sizes} verse pairs; {stats.links} gold links; dropped "
          f"{stats.dropped_empty} verses with an empty side, "
          f"{stats.links_to_unknown_token} links to unknown tokens, "
          f"{stats.links_across_verses} links across verses", file=sys.stderr)


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-bible-corpus",
                                     description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--out", required=True, help="directory for the corpus files")
    parser.add_argument("--cache", default=default_cache(),
                        help="where the wheel is downloaded (default: $XDG_CACHE_HOME/xlpe-fairseq, "
                        "else ~/.cache/xlpe-fairseq)")
    parser.add_argument("--wheel", help="use this local bible-alignments wheel, no download")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    run_command(lambda: write_corpus(args.out, args.cache, args.wheel), "xlpe-bible-corpus")


if __name__ == "__main__":
    main()
