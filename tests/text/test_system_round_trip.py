"""System test: real text of eight languages comes back exactly after tokenization.

Debian's packages give UI strings (message catalogues of coreutils, tar, grep, sed, apt, dpkg,
util-linux, libc and LibreOffice) and help paragraphs (LibreOffice's help) in every language.
The test downloads them with ``apt-get download`` into ``~/.cache/xlpe-fairseq/debian`` (kept
for the next run), reads a fixed sample of each language's lines with the corpus extractors,
and holds each language and source at 99.5% of lines identical after ``tokenize_line`` and
``detokenize_line``: what a perfect system's output is after scoring's detokenization.
Slow (a first run downloads about 45 MB); skipped where there is no apt-get.
"""
import os
import random
import shutil
import subprocess

import pytest

from xlpe_fairseq.text.detokenization import detokenize_line
from xlpe_fairseq.preprocessing.libreoffice_corpus import help_pages, page_paragraphs
from xlpe_fairseq.preprocessing.message_catalogs import catalog_pairs, catalog_paths
from xlpe_fairseq.text.tokenization import tokenize_line

pytestmark = pytest.mark.system

# language code: (catalogues' folder, Debian's suffix of the LibreOffice packages)
LANGUAGES = {"de": ("de", "de"), "fr": ("fr", "fr"), "ru": ("ru", "ru"), "fi": ("fi", "fi"),
             "ja": ("ja", "ja"), "zh-CN": ("zh_CN", "zh-cn"), "tr": ("tr", "tr"),
             "ko": ("ko", "ko")}
SYSTEM_PACKAGES = ("coreutils", "tar", "grep", "sed", "apt", "dpkg", "util-linux", "libc-l10n")
SAMPLE = 2000
HELD = 0.995


def cache_folder():
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "xlpe-fairseq", "debian")


@pytest.fixture(scope="module")
def extracted():
    """The packages' files under one folder, downloaded and unpacked once per cache."""
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        pytest.skip("needs Debian's apt-get and dpkg-deb")
    cache = cache_folder()
    tree = os.path.join(cache, "extracted")
    done = os.path.join(cache, "extracted.done")
    if os.path.exists(done):
        return tree
    packages = [*SYSTEM_PACKAGES, "libreoffice-help-en-us"]
    for _, suffix in LANGUAGES.values():
        packages += [f"libreoffice-l10n-{suffix}", f"libreoffice-help-{suffix}"]
    downloads = os.path.join(cache, "download")
    os.makedirs(downloads, exist_ok=True)
    missing = [package for package in packages
               if not any(name.startswith(f"{package}_") for name in os.listdir(downloads))]
    if missing:
        result = subprocess.run(["apt-get", "download", *missing], cwd=downloads,
                                capture_output=True, text=True)
        assert result.returncode == 0, (
            f"apt-get download failed (run apt-get update first?): {result.stderr[-2000:]}")
    shutil.rmtree(tree, ignore_errors=True)
    for name in sorted(os.listdir(downloads)):
        subprocess.run(["dpkg-deb", "-x", os.path.join(downloads, name), tree], check=True)
    open(done, "w").close()
    return tree


def sample(lines):
    lines = sorted(set(lines))
    random.Random(1).shuffle(lines)
    return lines[:SAMPLE]


def catalogue_lines(tree, folder):
    return sample(translation for path in catalog_paths([tree], folder)
                  for _, translation in catalog_pairs(path))


def help_lines(tree, lang):
    root = os.path.join(tree, "usr", "share", "libreoffice", "help", lang)
    pages = help_pages(root)
    random.Random(1).shuffle(pages)
    lines = []
    for page in pages[:300]:
        lines.extend(text for text in page_paragraphs(os.path.join(root, page)).values() if text)
    return sample(lines)


def assert_round_trips(lines, lang, what):
    assert len(lines) >= 500, f"{what}: only {len(lines)} lines"
    changed = [(line, detokenize_line(tokenize_line(line, lang))) for line in lines]
    changed = [(line, back) for line, back in changed if back != line]
    identical = 1 - len(changed) / len(lines)
    assert identical >= HELD, (f"{what}: {identical:.2%} of {len(lines)} lines identical; "
                               f"first changed: {changed[:5]}")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_system_message_catalogues_come_back_exactly(extracted, lang):
    folder, _ = LANGUAGES[lang]
    assert_round_trips(catalogue_lines(extracted, folder), lang, f"{lang} UI strings")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_system_help_paragraphs_come_back_exactly(extracted, lang):
    # the help folder is the code as LibreOffice writes it (zh-CN)
    assert_round_trips(help_lines(extracted, lang), lang, f"{lang} help paragraphs")


def test_system_english_sources_come_back_exactly(extracted):
    english = sample(message for path in catalog_paths([extracted], "de")
                     for message, _ in catalog_pairs(path))
    assert_round_trips(english, "en", "English UI strings")
    assert_round_trips(help_lines(extracted, "en-US"), "en", "English help paragraphs")
