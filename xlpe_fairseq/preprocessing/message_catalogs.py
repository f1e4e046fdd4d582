"""``xlpe-catalog-corpus``: a parallel corpus from compiled gettext message catalogs (``.mo``).

A catalog of language L maps each English message (its ``msgid``) to its translation, so the
catalogs a system installs for L are an English→L corpus of software strings: menu labels,
messages and format strings (``%s``, ``{0}``, ``&File``, paths): the text whose placeholders and length ratios the
pipeline must handle. Debian's packages carry them without installing anything:

    apt-get download coreutils tar grep sed apt dpkg util-linux libc-l10n libreoffice-l10n-ja
    for deb in *.deb; do dpkg-deb -x "$deb" extracted/; done
    xlpe-catalog-corpus --lang ja --out raw extracted/

writes ``raw/train.en`` and ``raw/train.ja`` from every ``*/ja/LC_MESSAGES/*.mo`` under
``extracted/``. ``--lang`` is a language code as users write it (``pt-BR``, ``zh_CN``,
``sr-Latn``), matched to the catalogs' folders whatever its case and separator (``pt-BR``
reads ``pt_BR/``, ``sr-Latn`` reads ``sr@latin/``) and written as given (``train.pt-BR``;
``--suffix`` names the file otherwise). Each pair is a message and its translation (a
plural's first form), line breaks and tabs as spaces; the catalog header, empty translations
and repeated pairs are left out. Pairs come in the order of the catalogs' paths and, within a
catalog, of the messages, so the same files always give the same corpus; ``--max-pairs N``
keeps N of them drawn at random (seeded), in that order.
"""
import argparse
import gettext
import os
import random
import sys

from ..help_format import HelpFormatter
from ..io import SEED, InputError, atomic_outputs, language_code, positive_int, run_command

CONTEXT_SEPARATOR = "\x04"  # gettext joins msgctxt and msgid with it


# gettext's modifiers for a script (``sr@latin``), as BCP 47 writes them (``sr-Latn``)
SCRIPT_MODIFIERS = {"latin": "latn", "cyrillic": "cyrl"}


def folder_code(name):
    """A catalog folder's language (``pt_BR``, ``sr@latin``, ``ja``) in one spelling for
    matching: lower case, subtags joined by '-' (``pt-br``, ``sr-latn``, ``ja``)."""
    name, _, modifier = name.partition("@")
    parts = name.replace("_", "-").lower().split("-")
    if modifier:
        parts.insert(1, SCRIPT_MODIFIERS.get(modifier.lower(), modifier.lower()))
    return "-".join(parts)


def catalog_paths(roots, lang):
    """The ``.mo`` files of ``lang`` (``.../LANG/LC_MESSAGES/*.mo``, the folder named in any
    case and with '-' or '_': ``folder_code``) under each root, sorted; a root that is itself
    a ``.mo`` file is taken as given. None found is one error naming the languages there."""
    paths, languages = [], set()
    wanted = folder_code(lang)
    for root in roots:
        if os.path.isfile(root):
            paths.append(root)
            continue
        if not os.path.isdir(root):
            raise InputError(f"{root}: no such file or folder")
        for folder, _, files in os.walk(root):
            parent, name = os.path.split(folder)
            if name != "LC_MESSAGES" or not any(file.endswith(".mo") for file in files):
                continue
            languages.add(os.path.basename(parent))
            if folder_code(os.path.basename(parent)) == wanted:
                paths.extend(os.path.join(folder, file) for file in files if file.endswith(".mo"))
    if not paths:
        found = (f"the catalogs there are of: {' '.join(sorted(languages))}" if languages
                 else "no LANG/LC_MESSAGES/*.mo catalog at all (extract the .deb packages "
                 "into it first: dpkg-deb -x PACKAGE.deb FOLDER)")
        raise InputError(f"{', '.join(roots)}: no {lang}/LC_MESSAGES/*.mo catalog found; "
                         f"{found}")
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


def some_pairs(pairs, count, seed):
    """``count`` of ``pairs`` drawn at random with ``seed``, in their order; all of them where
    there are no more."""
    if count is None or count >= len(pairs):
        return pairs
    return [pairs[i] for i in sorted(random.Random(seed).sample(range(len(pairs)), count))]


def write_corpus(roots, lang, out, suffix=None, source_lang="en", max_pairs=None, seed=1):
    pairs = some_pairs(list(message_corpus(catalog_paths(roots, lang))), max_pairs, seed)
    os.makedirs(out, exist_ok=True)
    names = [os.path.join(out, f"train.{source_lang}"),
             os.path.join(out, f"train.{suffix or lang}")]
    with atomic_outputs(names) as (source, target):
        for message, translation in pairs:
            source.write(message + "\n")
            target.write(translation + "\n")
    return len(pairs), names


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-catalog-corpus",
                                     description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("roots", nargs="+", metavar="FOLDER_OR_MO",
                        help="folders searched for LANG/LC_MESSAGES/*.mo, or .mo files")
    parser.add_argument("--lang", required=True, type=language_code,
                        help="the catalogs' language (ja, pt-BR, zh_CN, sr-Latn: the folder "
                        "pt_BR/ or sr@latin/ matches, whatever the case and separator)")
    parser.add_argument("--suffix", type=language_code,
                        help="language code of the target file (default: --lang as written)")
    parser.add_argument("--out", required=True, help="folder for train.en and train.SUFFIX")
    parser.add_argument("--max-pairs", type=positive_int,
                        help="keep this many pairs, drawn at random with --seed, in the "
                        "catalogs' order (default: all)")
    parser.add_argument("--seed", type=SEED, default=1,
                        help="seed of the --max-pairs draw (default: 1)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    def body():
        count, names = write_corpus(args.roots, args.lang, args.out, args.suffix,
                                    max_pairs=args.max_pairs, seed=args.seed)
        print(f"xlpe-catalog-corpus: {count} pairs: {' '.join(names)}", file=sys.stderr)

    run_command(body, "xlpe-catalog-corpus")


if __name__ == "__main__":
    main()
