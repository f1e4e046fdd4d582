"""``xlpe-libreoffice-corpus``: a parallel corpus from two languages of the LibreOffice help.

Debian's ``libreoffice-help-<lang>`` packages (MPL-2.0) install one HTML page per help topic
under ``usr/share/libreoffice/help/<lang>/text/...``, the same relative paths in every
language. Every translatable heading and paragraph carries an id from the help sources
(``hd_id...``, ``par_id...``) that is identical across languages, so a pair is the text of the
same id in the same page of both trees. Text inside ``hidden`` elements (the macOS variants of
menu paths) is skipped, so each side holds what a reader sees. The pairs are deduplicated
(many paragraphs are embedded in several pages) and split into train/valid/test by the
source sentence, so that no test source also occurs in training.

A paragraph a translation team has not translated yet is installed in English, so in a
partly translated language (Turkish: 40% of the pairs, Hindi: 86%) the "translation" is a copy
of the English text; ``--drop-identical`` leaves out every pair whose two sides are the same.
"""
import argparse
import html.parser
import os
import random
import re
import sys

from ..help_format import HelpFormatter
from ..io import (
    NON_NEGATIVE,
    SEED,
    InputError,
    atomic_output,
    check_output_directory,
    open_text,
    run_command,
)

# the whitespace HTML collapses when it shows a page: a no-break space is text
_HTML_SPACE = re.compile("[ \t\n\r\f]+")
TEXT_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6"}
ID_PREFIXES = ("par_", "hd_")
# elements without an end tag: they must not open a level of the hidden-element stack
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
             "source", "track", "wbr"}


class _ParagraphParser(html.parser.HTMLParser):
    """Collects ``{id: text}`` of the id-carrying headings and paragraphs of one page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paragraphs = {}
        self._current_id = None
        self._current_tag = None
        self._parts = []
        self._open = []  # (tag, hidden) of the open elements inside the current paragraph

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if self._current_id is None:
            element_id = attributes.get("id") or ""
            if tag in TEXT_TAGS and element_id.startswith(ID_PREFIXES):
                self._current_id, self._current_tag, self._parts = element_id, tag, []
            return
        if tag not in VOID_TAGS:
            self._open.append((tag, "hidden" in attributes))

    def handle_endtag(self, tag):
        if self._current_id is None:
            return
        # pop to the matching open element; an unmatched end tag of the paragraph's own tag
        # closes the paragraph, even past elements the HTML left unclosed
        for depth in range(len(self._open) - 1, -1, -1):
            if self._open[depth][0] == tag:
                del self._open[depth:]
                return
        if tag == self._current_tag:
            text = _HTML_SPACE.sub(" ", "".join(self._parts)).strip(" ")
            # an id may repeat within a page (embedded sections); the first one is the page's own
            self.paragraphs.setdefault(self._current_id, text)
            self._current_id = None
            self._open = []

    def handle_data(self, data):
        if self._current_id is not None and not any(hidden for _, hidden in self._open):
            self._parts.append(data)


def page_paragraphs(path):
    """``{id: text}`` of one help page."""
    parser = _ParagraphParser()
    with open_text(path) as page:
        parser.feed(page.read())
    parser.close()
    return parser.paragraphs


def help_pages(root):
    """Relative paths of the HTML pages under ``root``, sorted."""
    pages = []
    for directory, _, files in os.walk(root):
        pages.extend(os.path.relpath(os.path.join(directory, name), root)
                     for name in files if name.endswith(".html"))
    return sorted(pages)


def paired_paragraphs(source_root, target_root, drop_identical=False):
    """Unique ``(source, target)`` text pairs of the paragraphs both trees share, in page order;
    with ``drop_identical``, without the pairs whose sides are the same text.

    Returns the pairs and a dict of counts for the report.
    """
    for root in (source_root, target_root):
        if not os.path.isdir(root):
            raise InputError(f"{root}: no such help directory")
    target_pages = set(help_pages(target_root))
    pairs, seen = [], set()
    counts = {"pages": 0, "shared_ids": 0, "empty": 0, "identical": 0}
    for page in help_pages(source_root):
        if page not in target_pages:
            continue
        counts["pages"] += 1
        source = page_paragraphs(os.path.join(source_root, page))
        target = page_paragraphs(os.path.join(target_root, page))
        for element_id, source_text in source.items():
            target_text = target.get(element_id)
            if target_text is None:
                continue
            counts["shared_ids"] += 1
            if not source_text or not target_text:
                counts["empty"] += 1
                continue
            if source_text == target_text:
                counts["identical"] += 1
                if drop_identical:
                    continue
            if (source_text, target_text) not in seen:
                seen.add((source_text, target_text))
                pairs.append((source_text, target_text))
    counts["unique_pairs"] = len(pairs)
    return pairs, counts


def split_by_source(pairs, valid_size, test_size, seed=1):
    """``{"train", "valid", "test"}`` lists of pairs. Distinct source sentences are drawn at
    random for test and valid until each holds at least its size in pairs; every pair of a
    drawn source goes with it, so the splits share no source sentence."""
    sources = sorted({source for source, _ in pairs})
    random.Random(seed).shuffle(sources)
    by_source = {}
    for pair in pairs:
        by_source.setdefault(pair[0], []).append(pair)
    splits = {"train": [], "valid": [], "test": []}
    wanted = [("test", test_size), ("valid", valid_size)]
    for source in sources:
        while wanted and len(splits[wanted[0][0]]) >= wanted[0][1]:
            wanted.pop(0)
        splits[wanted[0][0] if wanted else "train"].extend(by_source[source])
    return splits


def write_splits(splits, out_dir, source_lang, target_lang):
    for split, pairs in splits.items():
        for index, lang in ((0, source_lang), (1, target_lang)):
            with atomic_output(os.path.join(out_dir, f"{split}.{lang}")) as out:
                out.writelines(pair[index] + "\n" for pair in pairs)


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-libreoffice-corpus",
                                     description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--source-help", required=True,
                        help="source-language help tree, e.g. .../usr/share/libreoffice/help/en-US")
    parser.add_argument("--target-help", required=True,
                        help="target-language help tree, e.g. .../usr/share/libreoffice/help/de")
    parser.add_argument("--source-lang", required=True, help="file suffix of the source side, e.g. en")
    parser.add_argument("--target-lang", required=True, help="file suffix of the target side, e.g. de")
    parser.add_argument("--out", required=True,
                        help="directory for {train,valid,test}.{source-lang,target-lang}")
    # 0: no such split (the pairs all go to train, as the own-corpus path may want)
    parser.add_argument("--valid-size", type=NON_NEGATIVE, default=1000,
                        help="at least this many pairs in valid (default: 1000)")
    parser.add_argument("--test-size", type=NON_NEGATIVE, default=1000,
                        help="at least this many pairs in test (default: 1000)")
    parser.add_argument("--seed", type=SEED, default=1, help="seed of the valid/test draw")
    parser.add_argument("--drop-identical", action="store_true",
                        help="leave out pairs whose two sides are the same text (paragraphs "
                        "not yet translated are installed in English)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    def body():
        check_output_directory(args.out)
        pairs, counts = paired_paragraphs(args.source_help, args.target_help,
                                          args.drop_identical)
        if not pairs:
            raise InputError(f"{args.source_help}, {args.target_help}: no paragraph pairs")
        splits = split_by_source(pairs, args.valid_size, args.test_size, args.seed)
        write_splits(splits, args.out, args.source_lang, args.target_lang)
        sizes = ", ".join(f"{split} {len(split_pairs)}" for split, split_pairs in splits.items())
        print(f"xlpe-libreoffice-corpus: {counts['pages']} pages in both languages, "
              f"{counts['shared_ids']} shared paragraph ids ({counts['empty']} empty on a side, "
              f"{counts['identical']} the same text on both sides"
              f"{', dropped' if args.drop_identical else ''}), "
              f"{counts['unique_pairs']} unique pairs: {sizes}", file=sys.stderr)

    run_command(body, "xlpe-libreoffice-corpus")


if __name__ == "__main__":
    main()
