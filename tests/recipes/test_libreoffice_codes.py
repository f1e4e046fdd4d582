"""data_prep/prepare-libreoffice.sh takes language codes as users write them (zh-CN-en,
zh-cn-en, en-pt-BR): each side is Debian's libreoffice-help-CODE (lower case) and LibreOffice's
help folder and file suffix CODE (zh-CN); a code Debian has no help for is one line listing
the codes it has. apt is a stand-in here (its package list, and no candidate version, so that
the recipe stops before downloading), and so is the Python of prepare-corpus.sh."""
import subprocess
from pathlib import Path

import pytest

from support.apt_stub import PACKAGES, apt_stub

DATA_PREP = Path(__file__).resolve().parents[2] / "data_prep"
def recipe(tmp_path, *arguments, packages=PACKAGES):
    return subprocess.run(["bash", DATA_PREP / "prepare-libreoffice.sh", *arguments],
                          cwd=tmp_path, capture_output=True, text=True,
                          env=apt_stub(tmp_path / "stubs", packages))


@pytest.mark.parametrize("pair, first_package", [
    ("zh-CN-en", "libreoffice-help-zh-cn"), ("zh-cn-en", "libreoffice-help-zh-cn"),
    ("zh_CN-en", "libreoffice-help-zh-cn"), ("en-pt-BR", "libreoffice-help-en-us"),
    ("pt-br-en", "libreoffice-help-pt-br"), ("en-GB-de", "libreoffice-help-en-gb")])
def test_a_code_with_a_region_is_debians_package(tmp_path, pair, first_package):
    result = recipe(tmp_path, pair, "out")
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip() == (f"{first_package}: apt knows no candidate version; run "
                                     "apt-get update"), result.stderr


def test_a_code_debian_has_no_help_for_is_one_line_listing_the_codes(tmp_path):
    result = recipe(tmp_path, "sr-Latn-en", "out")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.rstrip().endswith(
        "sr-Latn-en: Debian has LibreOffice help (libreoffice-help-CODE) for the codes en de "
        "en-GB en-US pt pt-BR zh-CN zh-TW"), result.stderr
    assert not (tmp_path / "out").exists()


def test_without_apt_lists_the_recipe_says_to_update_them(tmp_path):
    result = recipe(tmp_path, "zh-CN-en", "out", packages=[])
    assert result.returncode == 1 and "run apt-get update" in result.stderr, result.stderr


@pytest.mark.parametrize("pair", ["zh-CN-en", "zh-cn-en", "ZH-cn-EN"])
def test_a_raw_dir_of_codes_with_regions_goes_to_prepare_corpus_as_its_files_name_them(
        tmp_path, pair):
    raw = tmp_path / "raw"
    raw.mkdir()
    for split in ("train", "valid", "test"):
        for lang in ("zh-CN", "en"):
            (raw / f"{split}.{lang}").write_text("x\n")
    result = recipe(tmp_path, "--raw-dir", str(raw), pair, "out")
    assert result.returncode == 0, result.stderr
    words = (tmp_path / "stubs" / "python.args").read_text().split()
    assert words[words.index("--src") + 1] == "zh-CN" and words[words.index("--tgt") + 1] == "en"


def test_a_raw_dir_without_the_pairs_files_names_the_files_it_has(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "train.zh").write_text("x\n")
    (raw / "train.en").write_text("x\n")
    result = recipe(tmp_path, "--raw-dir", str(raw), "zh-CN-en", "out")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "its files: " in result.stderr and "train.zh-CN" in result.stderr
