"""The data_prep recipes' offline part on tiny raw samples: tokenize (Moses, jieba, MeCab) ->
BPE -> align -> DPE/BTG reorder -> preorderer -> fairseq data-bin with positions. Downloads are
replaced by --raw-dir, a fake IWSLT archive (IWSLT_ARCHIVE) and a fake ASPEC folder; the
LibreOffice paragraph pairing runs on fake HTML help trees (en, de, a partly translated tr)."""
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from support.apt_stub import apt_stub
from support.parallel_text import RECIPE_ENV, sentences, write_raw
from xlpe_fairseq.preprocessing.libreoffice_corpus import (
    page_paragraphs,
    paired_paragraphs,
    split_by_source,
)

DATA_PREP = Path(__file__).resolve().parents[2] / "data_prep"
CORES = len(os.sched_getaffinity(0))
def recipe_command(script, *args, env=None):
    """Arguments for subprocess: the recipe with the test's tiny settings and this Python's
    console commands first on PATH."""
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    return {
        "args": ["bash", str(DATA_PREP / script), *map(str, args)],
        "env": {**os.environ, **RECIPE_ENV, "PATH": path, **(env or {})},
        "stdout": subprocess.DEVNULL, "text": True,
    }


def run_recipe(script, *args, env=None):
    result = subprocess.run(**recipe_command(script, *args, env=env), stderr=subprocess.PIPE)
    assert result.returncode == 0, f"{script} failed:\n{result.stderr[-4000:]}"
    return result.stderr


def line_count(path):
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def check_outputs(out, src, tgt):
    """Every data-bin variant a model reads is complete and consistent."""
    bpe = out / "bpe"
    for split in ("train", "valid", "test"):
        assert line_count(bpe / f"{split}.align") == line_count(bpe / f"{split}.{src}")
    train_pairs = line_count(bpe / f"train.{src}")
    assert line_count(bpe / "train.dpe.reorder") == train_pairs
    assert line_count(bpe / "train.btg.reorder") == train_pairs
    for split in ("valid", "test"):
        assert line_count(bpe / f"{split}.pred.reorder") == line_count(bpe / f"{split}.{src}")
    for split in ("train", "valid", "test"):
        for lang in (src, tgt):
            assert (out / "data-bin" / "text" / f"{split}.{src}-{tgt}.{lang}.bin").exists()
    positions = {"dpe": ["train", "valid"], "xlpe": ["train", "valid", "test"]}
    for variant, splits in positions.items():
        variant_dir = out / "data-bin" / variant
        assert (variant_dir / f"dict.{src}.txt").exists(), f"{variant}: no dictionary link"
        assert (variant_dir / f"test.{src}-{tgt}.{tgt}.idx").exists(), f"{variant}: no text link"
        for split in splits:
            assert (variant_dir / f"{split}.reorder.{src}-{tgt}.bin").exists(), (variant, split)
    assert (out / "preorderer.test.score").read_text().strip(), "no preorderer score"
    assert (out / "preorderer.ceiling").read_text().strip(), "no xlpe-reorder-ceiling report"
    env = (out / "recipe.env").read_text()
    assert f"SRC={src}" in env and f"TGT={tgt}" in env and "TOKENIZATION=reversible" in env


def fake_iwslt_archive(path, src, tgt):
    """A WIT3-style de-en.tgz: train.tags with talk metadata, test sets as <seg> XML."""
    files = {}
    for lang in (src, tgt):
        body = ["<url>http://www.ted.com/talks/x.html</url>", "<talkid>1</talkid>",
                "<keywords>talks</keywords>", "<title>Talk title</title>"]
        body += sentences(lang, 46, 1)
        files[f"de-en/train.tags.de-en.{lang}"] = "\n".join(body) + "\n"
        for name, seed in (("TED.dev2010", 3), ("TED.tst2010", 4)):
            segs = [f'<seg id="{i + 1}"> {line} </seg>'
                    for i, line in enumerate(sentences(lang, 4, seed))]
            files[f"de-en/IWSLT14.{name}.de-en.{lang}.xml"] = (
                "<mteval>\n<doc docid=\"1\">\n" + "\n".join(segs) + "\n</doc>\n</mteval>\n")
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def iwslt14_run(root):
    archive = root / "de-en.tgz"
    fake_iwslt_archive(archive, "de", "en")
    out = root / "iwslt14-de-en"
    return out, recipe_command("prepare-iwslt14.sh", "de-en", out,
                               env={"IWSLT_ARCHIVE": str(archive)})


def wmt14_run(root):
    out = root / "wmt14"
    raw = write_raw(root / "wmt14-raw", "en", "de")
    return out, recipe_command("prepare-wmt14-en-de.sh", "--raw-dir", raw, out)


def wmt17_run(root):
    out = root / "wmt17"
    raw = write_raw(root / "wmt17-raw", "zh", "en")
    return out, recipe_command("prepare-wmt17-zh-en.sh", "--raw-dir", raw, "zh-en", out)


def aspec_run(root):
    aspec = root / "ASPEC-JE"
    for folder, name, seed, count, train in (("train", "train-1.txt", 1, 16, True),
                                             ("train", "train-2.txt", 4, 14, True),
                                             ("train", "train-3.txt", 5, 5, True),
                                             ("dev", "dev.txt", 2, 8, False),
                                             ("test", "test.txt", 3, 8, False)):
        (aspec / folder).mkdir(parents=True, exist_ok=True)
        rows = zip(sentences("ja", count, seed), sentences("en", count, seed))
        prefix = "0.9 ||| " if train else ""
        lines = [f"{prefix}DOC-{i} ||| {i + 1} ||| {ja} ||| {en}" for i, (ja, en) in enumerate(rows)]
        (aspec / folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = root / "aspec"
    return out, recipe_command("prepare-aspec-ja-en.sh", "--aspec-dir", aspec, out)


def libreoffice_run(root):
    out = root / "libreoffice"
    raw = write_raw(root / "libreoffice-raw", "en", "de")
    # the option after the operand, as any option of the recipes may go
    return out, recipe_command("prepare-libreoffice-en-de.sh", out, "--raw-dir", raw)


# recipe -> (how to start it, Python modules it needs beyond the package's own)
RECIPES = {
    "iwslt14": (iwslt14_run, []),
    "wmt14": (wmt14_run, []),
    "wmt17": (wmt17_run, ["jieba"]),
    "aspec": (aspec_run, ["fugashi", "unidic_lite"]),
    "libreoffice": (libreoffice_run, []),
}
INSTALL = {"jieba": "pip install jieba", "fugashi": "pip install fugashi unidic-lite",
           "unidic_lite": "pip install unidic-lite"}


def missing_modules(name):
    return [module for module in RECIPES[name][1] if importlib.util.find_spec(module) is None]


@pytest.fixture(scope="module")
def recipe_runs(tmp_path_factory):
    """All recipes started at once: each runs one single-threaded command at a time, so
    together they keep both cores busy."""
    root = tmp_path_factory.mktemp("recipes")
    runs = {}
    for name, (start, _) in RECIPES.items():
        if not missing_modules(name):
            out, command = start(root)
            # a file, not a pipe: a full pipe would stall a recipe until its test reads it
            log = open(root / f"{name}.log", "w+", encoding="utf-8")
            runs[name] = (out, log, subprocess.Popen(**command, stderr=log))
    yield runs
    for _, log, process in runs.values():
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()


def finished(recipe_runs, name):
    """The recipe's OUTDIR and log once it has succeeded; a skip if a segmenter is missing."""
    missing = missing_modules(name)
    if missing:
        pytest.skip(f"{name} needs {', '.join(missing)}: {INSTALL[missing[0]]}")
    out, log_file, process = recipe_runs[name]
    process.wait()
    log_file.seek(0)
    log = log_file.read()
    assert process.returncode == 0, f"{name} recipe failed:\n{log[-4000:]}"
    return out, log


def test_iwslt14_from_archive(recipe_runs):
    out, log = finished(recipe_runs, "iwslt14")
    assert "checksum UNKNOWN for de-en.tgz" in log
    # fairseq's split: every 23rd line of the filtered train.tags is valid
    assert line_count(out / "raw" / "valid.de") == 2 and line_count(out / "raw" / "train.de") == 45
    assert line_count(out / "raw" / "test.en") == 8
    assert "<title>" not in (out / "raw" / "train.en").read_text()
    # lowercased, as fairseq's prepare-iwslt14.sh
    assert (out / "tok" / "train.de").read_text() == (out / "tok" / "train.de").read_text().lower()
    check_outputs(out, "de", "en")


def test_wmt14_en_de_from_raw_dir(recipe_runs):
    out, _ = finished(recipe_runs, "wmt14")
    check_outputs(out, "en", "de")
    # one joined dictionary for --share-all-embeddings
    text = out / "data-bin" / "text"
    assert (text / "dict.en.txt").read_text() == (text / "dict.de.txt").read_text()


def test_wmt17_zh_en_from_raw_dir(recipe_runs):
    out, _ = finished(recipe_runs, "wmt17")
    check_outputs(out, "zh", "en")
    assert "房子 是" in (out / "tok" / "train.zh").read_text(encoding="utf-8")


def test_aspec_ja_en_from_aspec_folder(recipe_runs):
    out, _ = finished(recipe_runs, "aspec")
    # the first two training sections only
    assert line_count(out / "raw" / "train.ja") == 30
    assert "家 は" in (out / "tok" / "train.ja").read_text(encoding="utf-8")
    check_outputs(out, "ja", "en")


def test_libreoffice_from_raw_dir_and_rerun_skips_everything(recipe_runs):
    out, _ = finished(recipe_runs, "libreoffice")
    check_outputs(out, "en", "de")
    rerun = run_recipe("prepare-libreoffice-en-de.sh", "--raw-dir", out.parent / "libreoffice-raw",
                       out)
    steps = [line for line in rerun.splitlines() if line.startswith("== ") and "done" not in line]
    assert steps and all("up to date, skipped" in line for line in steps), rerun


def test_libreoffice_rerun_with_other_preorderer_settings_retrains_it(recipe_runs):
    out, _ = finished(recipe_runs, "libreoffice")
    raw = out.parent / "libreoffice-raw"
    assert "--loss structured" in (out / "preorderer.settings").read_text()
    rerun = run_recipe("prepare-libreoffice-en-de.sh", "--raw-dir", raw, out,
                       env={"PREORDER_LOSS": "pairwise"})
    redone = [line for line in rerun.splitlines()
              if line.startswith("== ") and "skipped" not in line and ":" not in line]
    for step in ("train preorderer", "preorder valid/test"):
        assert any(step in line for line in redone), \
            f"{step!r} kept a result made with the old PREORDER_LOSS:\n{rerun}"
    assert "up to date, skipped" in rerun, f"steps before the preorderer ran again:\n{rerun}"
    again = run_recipe("prepare-libreoffice-en-de.sh", "--raw-dir", raw, out,
                       env={"PREORDER_LOSS": "pairwise"})
    assert "train preorderer (seed 1): up to date, skipped" in again, again
    smaller = run_recipe("prepare-libreoffice-en-de.sh", "--raw-dir", raw, out,
                         env={"PREORDER_LOSS": "pairwise", "PREORDER_BATCH_TOKENS": "300",
                              "PREORDER_MAX_LENGTH": "12", "PREORDER_THREADS": "1"})
    assert "train preorderer (seed 1): up to date" not in smaller, \
        f"the preorderer was not retrained with other batch, length and thread settings:\n{smaller}"
    settings = (out / "preorderer.settings").read_text()
    for option in ("--batch-tokens 300", "--max-train-length 12", "--threads 1"):
        assert option in settings, f"{option} did not reach xlpe-preorder-train: {settings}"


def test_libreoffice_preorderer_seeds_make_an_ensemble(recipe_runs):
    from xlpe_fairseq.preordering.preorderer import Preorderer, PreordererEnsemble

    out, _ = finished(recipe_runs, "libreoffice")
    log = run_recipe("prepare-libreoffice-en-de.sh", "--raw-dir", out.parent / "libreoffice-raw",
                     out, env={"PREORDER_SEEDS": "2"})
    assert "== ensemble 2 preorderers:" in log and "== preorder valid/test:" in log, log
    ensemble = Preorderer.load(out / "preorderer.pt")
    assert isinstance(ensemble, PreordererEnsemble) and len(ensemble.members) == 2
    more = run_recipe("prepare-libreoffice-en-de.sh", "--raw-dir", out.parent / "libreoffice-raw",
                      out, env={"PREORDER_SEEDS": "3"})
    assert ("train preorderer (seed 2): up to date, skipped" in more
            and "== train preorderer (seed 3, " in more and "== ensemble 3 preorderers:" in more), \
        f"a third member retrained the first two, or made no ensemble of three:\n{more}"
    assert len(Preorderer.load(out / "preorderer.pt").members) == 3
    seeds = [Preorderer.load(out / f"preorderer.seed{k}.pt") for k in (1, 2)]
    assert seeds[0].scorer.state_dict()["project.weight"].ne(
        seeds[1].scorer.state_dict()["project.weight"]).any(), "both members got one seed"
    if CORES > 1:
        assert f"== train 3 preorderers, {CORES} side by side (1 thread(s) each" in more, more
        assert "== train preorderer (seed 3, " in (out / "preorderer.seed3.log").read_text(), \
            "a member trained side by side keeps its log beside its checkpoint"


def test_libreoffice_a_member_that_fails_fails_the_step_once_all_have_ended(recipe_runs,
                                                                           tmp_path):
    finished_out, _ = finished(recipe_runs, "libreoffice")
    out = tmp_path / "out"
    shutil.copytree(finished_out, out, symlinks=True)
    # no sentence of 2 to 1 tokens: every member refuses to train
    result = subprocess.run(**recipe_command(
        "prepare-libreoffice-en-de.sh", "--raw-dir", finished_out.parent / "libreoffice-raw", out,
        env={"PREORDER_SEEDS": "3", "PREORDER_MAX_LENGTH": "1", "PREORDER_JOBS": str(CORES)}),
        stderr=subprocess.PIPE)
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert re.match(r"prepare-corpus\.sh: error: preorderer training failed: seed 1 \(status 1, "
                    r"\S+/preorderer\.seed1\.log\); seed 2 .*; seed 3 \(status 1, \S+\)$", last), last
    assert "Traceback" not in result.stderr, result.stderr
    assert not list(out.glob("preorderer.seed*.status")), "status files are left behind"


@pytest.mark.parametrize("setting, value, allowed", [
    ("PREORDER_SEEDS", "0", "1 to 999"), ("PREORDER_SEEDS", "two", "1 to 999"),
    ("PREORDER_SEEDS", "1000", "1 to 999"), ("PREORDER_BATCH_TOKENS", "0", "1 to 9999999"),
    ("PREORDER_MAX_LENGTH", "1.5", "1 to 9999999"),
    ("PREORDER_THREADS", "-2", f"1 to {len(os.sched_getaffinity(0))}"),
])
def test_a_bad_preorderer_setting_is_refused_before_any_work(tmp_path, setting, value, allowed):
    raw = write_raw(tmp_path / "raw", "en", "de")
    result = subprocess.run(**recipe_command("prepare-libreoffice-en-de.sh", "--raw-dir", raw,
                                             tmp_path / "out", env={setting: value}),
                            stderr=subprocess.PIPE)
    assert result.returncode == 2, result.stderr
    assert f"{setting} must be a whole number from {allowed}, not '{value}'" in result.stderr
    assert not (tmp_path / "out" / "tok").exists(), "nothing is done before the check"


PAGE = """<html><body><div id="DisplayArea">
<h1 id="hd_id1" dir="auto">{title}</h1>
<p id="par_id2" class="paragraph">{text} <span class="emph">{menu}</span>
<span hidden="true" class="MAC"><span>{mac}</span></span></p>
<p class="embedded">no id, not paired</p>
<p id="par_id3">{only}</p>
<p id="bm_id4">bookmark ids are not text</p>
<table><tr><td><p id="par_id5">{cell}</p></td></tr></table>
<p id="par_id6"></p>
</div></body></html>"""


def write_help_page(root, relative, **texts):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PAGE.format(**texts), encoding="utf-8")


def fake_help_trees(tmp_path):
    en, de = tmp_path / "help" / "en-US", tmp_path / "help" / "de"
    english = dict(title="Load options", text="Choose", menu="Tools - Options", mac="Preferences",
                   only="English only", cell="Cell text")
    german = dict(title="Ladeoptionen", text="Wählen Sie", menu="Extras – Optionen",
                  mac="Einstellungen", only="", cell="Zellentext")
    write_help_page(en, "text/shared/a.html", **english)
    write_help_page(de, "text/shared/a.html", **german)
    # the same paragraphs embedded in a second page: deduplicated
    write_help_page(en, "text/swriter/b.html", **english)
    write_help_page(de, "text/swriter/b.html", **german)
    # a page only one language has: skipped
    write_help_page(en, "text/sdraw/c.html", **{**english, "title": "Draw only"})
    return en, de


def test_page_paragraphs_skips_hidden_text_and_non_text_ids(tmp_path):
    en, _ = fake_help_trees(tmp_path)
    paragraphs = page_paragraphs(en / "text/shared/a.html")
    assert paragraphs == {"hd_id1": "Load options", "par_id2": "Choose Tools - Options",
                          "par_id3": "English only", "par_id5": "Cell text", "par_id6": ""}


def test_page_paragraphs_collapse_html_whitespace_and_keep_no_break_spaces(tmp_path):
    """HTML shows runs of spaces, tabs and line breaks as one space; a no-break space is text
    (French writes one before a colon), which tokenization gives back."""
    root = tmp_path / "help" / "fr"
    write_help_page(root, "a.html", title="Options\u00a0:", text="Choisissez\n\t ",
                    menu="Outils", mac="", only="", cell="")
    paragraphs = page_paragraphs(root / "a.html")
    assert paragraphs["hd_id1"] == "Options\u00a0:"
    assert paragraphs["par_id2"] == "Choisissez Outils"


def test_paired_paragraphs_by_shared_id_deduplicated(tmp_path):
    en, de = fake_help_trees(tmp_path)
    pairs, counts = paired_paragraphs(en, de)
    assert pairs == [("Load options", "Ladeoptionen"),
                     ("Choose Tools - Options", "Wählen Sie Extras – Optionen"),
                     ("Cell text", "Zellentext")]
    assert counts == {"pages": 2, "shared_ids": 10, "empty": 4, "identical": 0, "unique_pairs": 3}


def fake_turkish_tree(tmp_path):
    """The Turkish help of page a.html, with the table cell left untranslated (in English)."""
    tr = tmp_path / "help" / "tr"
    write_help_page(tr, "text/shared/a.html", title="Yükleme seçenekleri", text="Seçin",
                    menu="Araçlar - Seçenekler", mac="Tercihler", only="", cell="Cell text")
    return tr


def test_paired_paragraphs_drops_untranslated_pairs_on_request(tmp_path):
    en, _ = fake_help_trees(tmp_path)
    tr = fake_turkish_tree(tmp_path)
    translated = [("Load options", "Yükleme seçenekleri"),
                  ("Choose Tools - Options", "Seçin Araçlar - Seçenekler")]
    pairs, counts = paired_paragraphs(en, tr, drop_identical=True)
    assert pairs == translated, "the untranslated cell must be left out"
    assert counts == {"pages": 1, "shared_ids": 5, "empty": 2, "identical": 1, "unique_pairs": 2}
    pairs, _ = paired_paragraphs(en, tr)
    assert pairs == translated + [("Cell text", "Cell text")], "kept without drop_identical"


def test_split_by_source_keeps_a_source_in_one_split():
    pairs = [(f"s{i % 7}", f"t{i}") for i in range(40)]
    splits = split_by_source(pairs, valid_size=5, test_size=5)
    assert sum(len(split) for split in splits.values()) == 40
    sources = {name: {s for s, _ in split} for name, split in splits.items()}
    assert not sources["train"] & sources["test"] and not sources["valid"] & sources["test"]
    assert not sources["train"] & sources["valid"]
    assert len(splits["test"]) >= 5 and len(splits["valid"]) >= 5


def test_libreoffice_command_writes_splits(tmp_path):
    en, de = fake_help_trees(tmp_path)
    out = tmp_path / "raw"
    subprocess.run([sys.executable, "-m", "xlpe_fairseq.preprocessing.libreoffice_corpus",
                    "--source-help", en, "--target-help", de, "--source-lang", "en",
                    "--target-lang", "de", "--out", out, "--valid-size", "1", "--test-size", "1"],
                   check=True, capture_output=True)
    sizes = {split: line_count(out / f"{split}.en") for split in ("train", "valid", "test")}
    assert sizes == {"train": 1, "valid": 1, "test": 1}
    assert all(line_count(out / f"{s}.de") == n for s, n in sizes.items())


def test_libreoffice_command_drops_identical_pairs(tmp_path):
    en, _ = fake_help_trees(tmp_path)
    tr = fake_turkish_tree(tmp_path)
    out = tmp_path / "raw"
    result = subprocess.run(
        [sys.executable, "-m", "xlpe_fairseq.preprocessing.libreoffice_corpus",
         "--source-help", en, "--target-help", tr, "--source-lang", "en", "--target-lang", "tr",
         "--out", out, "--valid-size", "0", "--test-size", "0", "--drop-identical"],
        check=True, capture_output=True, text=True)
    assert "1 the same text on both sides, dropped" in result.stderr
    assert (out / "train.tr").read_text(encoding="utf-8") == (
        "Yükleme seçenekleri\nSeçin Araçlar - Seçenekler\n")


@pytest.mark.parametrize("arguments", [["en-en", "out"], ["en_tr", "out"], ["en-tr"]])
def test_libreoffice_recipe_refuses_a_bad_pair(tmp_path, arguments):
    result = subprocess.run(["bash", DATA_PREP / "prepare-libreoffice.sh", *arguments],
                            cwd=tmp_path, capture_output=True, text=True,
                            env=apt_stub(tmp_path / "stubs"))
    assert result.returncode == 2 and "usage:" in result.stderr, result.stderr
    assert not (tmp_path / "out").exists(), "nothing is written before the arguments are checked"


def test_checksums_verified_unknown_and_mismatched(tmp_path):
    (tmp_path / "good.tgz").write_text("good\n")
    (tmp_path / "bad.tgz").write_text("bad\n")
    (tmp_path / "new.tgz").write_text("new\n")
    good_md5 = subprocess.run(["md5sum", tmp_path / "good.tgz"], capture_output=True,
                              text=True, check=True).stdout.split()[0]
    (tmp_path / "sums.txt").write_text(f"# comment\nmd5  {good_md5}  good.tgz\n"
                                       f"sha256  {'0' * 64}  bad.tgz\n")
    script = (f"set -euo pipefail; source {DATA_PREP / 'lib.sh'}; cd {tmp_path}; "
              "verify_checksum good.tgz; verify_checksum new.tgz; "
              # an existing file is not downloaded again, only verified
              "fetch http://127.0.0.1:9/bad.tgz bad.tgz")
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                            env={**os.environ, "CHECKSUMS_FILE": str(tmp_path / "sums.txt")})
    assert result.returncode == 1
    assert "good.tgz: md5 verified" in result.stderr
    assert "checksum UNKNOWN for new.tgz" in result.stderr and "sha256  " in result.stderr
    assert "bad.tgz: sha256 mismatch" in result.stderr
    assert (tmp_path / "bad.tgz.bad").exists() and not (tmp_path / "bad.tgz").exists()
