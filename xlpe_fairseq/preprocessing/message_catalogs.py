"""A parallel corpus of software strings from compiled gettext message catalogs (``.mo``).

A catalog of language L maps each English message (its ``msgid``) to its translation, so the
catalogs a system installs for L are an English→L corpus of menu labels, messages and format
strings (``%s``, ``{0}``, ``&File``, paths): the text whose placeholders and length ratios the
pipeline must handle. Debian's packages carry them without installing anything:

    apt-get download coreutils tar grep sed apt dpkg util-linux libc-l10n libreoffice-l10n-ja
    for deb in *.deb; do dpkg-deb -x "$deb" extracted/; done
    python -m xlpe_fairseq.preprocessing.message_catalogs --lang ja --out raw extracted/

writes ``raw/train.en`` and ``raw/train.ja`` from every ``*/ja/LC_MESSAGES/*.mo`` under
``extracted/`` (``--lang zh_CN``: the catalogs of zh_CN, written as ``train.zh_CN``; ``--suffix
zh`` names the files ``train.zh``). Each pair is a message and its translation (a plural's
first form), line breaks and tabs as spaces; the catalog header, empty translations and
repeated pairs are left out. Pairs come in the order of the catalogs' paths and, within a
catalog, of the messages, so the same files always give the same corpus.
"""
import argparse
import gettext
import os
import sys

from ..help_format import HelpFormatter
from ..io import InputError, atomic_outputs, run_command

CONTEXT_SEPARATOR = "\x04"  # gettext joins msgctxt and msgid with it


def catalog_paths(roots, lang):
    """The ``.mo`` files of ``lang`` (``.../LANG/LC_MESSAGES/*.mo``) under each root, sorted;
    a root that is itself a ``.mo`` file is taken as given."""
    paths = []
    for root in roots:
        if os.path.isfile(root):
            paths.append(root)
            continue
        if not os.path.isdir(root):
            raise InputError(f"{root}: no such file or folder")
        for folder, _, files in os.walk(root):
            parts = folder.split(os.sep)
            if parts[-2:] == [lang, "LC_MESSAGES"]:
                paths.extend(os.path.join(folder, name) for name in files if name.endswith(".mo"))
    if not paths:
        raise InputError(f"{', '.join(roots)}: no {lang}/LC_MESSAGES/*.mo catalog found")
    return sorted(paths)


def line_pairs(message, translation):
    """The one-line pairs of a message and its translation: line by line where both have the
    same number of lines, else each on one line, its line breaks as spaces; pairs with a side
    of whitespace alone left out."""
    messages, translations = message.splitlines(), translation.splitlines()
    if len(messages) != len(translations):
        messages, translations = [" ".join(messages)], [" ".join(translations)]
    return [(source, target) for source, target in zip(messages, translations)
            if source.strip() and target.strip()]


def catalog_pairs(path):
    """``(message, translation)`` of one compiled catalog, one line each (``line_pairs``),
    header left out."""
    try:
        with open(path, "rb") as f:
            catalog = gettext.GNUTranslations(f)._catalog
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: not a readable message catalog ({err})") from None
    for key, translation in catalog.items():
        if isinstance(key, tuple):  # a plural: (msgid, n); the first form stands for it
            key, form = key
            if form != 0:
                continue
        message = key.rpartition(CONTEXT_SEPARATOR)[2]
        if message:
            yield from line_pairs(message, translation)


def message_corpus(paths):
    """The distinct pairs of all catalogs, in order of first occurrence."""
    seen = set()
    for path in paths:
        for pair in catalog_pairs(path):
            if pair not in seen:
                seen.add(pair)
                yield pair


def write_corpus(roots, lang, out, suffix=None, source_lang="en"):
    pairs = list(message_corpus(catalog_paths(roots, lang)))
    os.makedirs(out, exist_ok=True)
    names = [os.path.join(out, f"train.{source_lang}"),
             os.path.join(out, f"train.{suffix or lang}")]
    with atomic_outputs(names) as (source, target):
        for message, translation in pairs:
            source.write(message + "\n")
            target.write(translation + "\n")
    return len(pairs), names


def build_parser():
    parser = argparse.ArgumentParser(prog="message_catalogs", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("roots", nargs="+", metavar="FOLDER_OR_MO",
                        help="folders searched for LANG/LC_MESSAGES/*.mo, or .mo files")
    parser.add_argument("--lang", required=True,
                        help="the catalogs' language, as in their folder name (ja, zh_CN)")
    parser.add_argument("--suffix", help="language code of the target file (default: --lang)")
    parser.add_argument("--out", required=True, help="folder for train.en and train.SUFFIX")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    def body():
        count, names = write_corpus(args.roots, args.lang, args.out, args.suffix)
        print(f"== {count} pairs: {' '.join(names)}", file=sys.stderr)

    run_command(body, "message_catalogs")


if __name__ == "__main__":
    main()
