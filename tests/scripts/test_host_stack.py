"""The plugin installs into a user's own fairseq environment and replaces nothing of it.

The host is what a user of Python 3.11 has: a virtual environment holding torch and
``fairseq-fixed`` 0.12.3.1 built from its sdist (not the snapshot the plugin's `fairseq` extra
names, so a plugin that brought its own fairseq would overwrite it). scripts/host_stack.py
installs a wheel built from the repository there the README's way, compares fairseq's files and
every version before and after, and trains and decodes with ``--user-dir`` through the host's
own commands; then the README's first try runs with the wheel's commands alone, in a folder
outside the checkout. The first run builds fairseq-fixed (minutes); pip's wheel cache serves
it afterwards."""
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import torch

from support.first_try import FIRST_TRY_MODEL, readme_first_try
from support.parallel_text import sentences

REPO = Path(__file__).resolve().parents[2]
HOST_FAIRSEQ = "fairseq-fixed==0.12.3.1"


def pip(python, *args):
    result = subprocess.run([python, "-m", "pip", "install", "-q", *args],
                            capture_output=True, text=True)
    assert result.returncode == 0, f"pip install {' '.join(args)} failed:\n{result.stderr[-3000:]}"


@pytest.fixture(scope="module")
def host_python(tmp_path_factory):
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the host environment is built for Python 3.11, as the report's user had")
    root = tmp_path_factory.mktemp("host")
    venv.create(root, with_pip=True)
    python = root / "bin" / "python"
    pip(python, f"torch=={torch.__version__}")
    pip(python, "Cython", "numpy", "setuptools", "wheel")
    pip(python, "--no-build-isolation", HOST_FAIRSEQ)
    return python


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel a user installs, built from the repository."""
    folder = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                             "--no-build-isolation", "-w", folder, REPO],
                            capture_output=True, text=True)
    assert result.returncode == 0, f"building the wheel failed:\n{result.stderr[-3000:]}"
    return next(folder.glob("xlpe_fairseq-*.whl"))


@pytest.fixture(scope="module")
def installed_host(host_python, wheel, tmp_path_factory):
    """host_stack.py's run: the wheel (with the zh segmenter) installed into the host."""
    result = subprocess.run([sys.executable, REPO / "scripts" / "host_stack.py", "--python",
                             host_python, "--plugin", f"{wheel}[zh]", "--work",
                             tmp_path_factory.mktemp("host-work")],
                            capture_output=True, text=True)
    return result, json.loads(result.stdout)


def test_the_plugin_installs_into_a_fairseq_environment_and_replaces_nothing(installed_host):
    result, report = installed_host
    assert "error" not in report, report.get("error")
    assert report["fairseq"] == ["fairseq-fixed"] == report["fairseq_after"], \
        f"fairseq's distribution changed: {report['fairseq']} -> {report['fairseq_after']}"
    assert report["fairseq_files_unchanged"], "installing the plugin rewrote fairseq's files"
    assert report["changed_versions"] == {}, \
        f"the install moved what the host had pinned: {report['changed_versions']}"
    assert report["plugin_requires_fairseq"] == [], \
        f"the wheel requires a fairseq outside its extra: {report['plugin_requires_fairseq']}"
    assert report["translated"] == 20
    assert result.returncode == 0 and report["ok"], result.stdout


def test_the_readme_first_try_runs_with_the_wheels_commands_alone(host_python, installed_host,
                                                                  tmp_path):
    """prepare -> train (a small model, briefly) -> evaluate -> translate, as the README
    writes them, by the console scripts the wheel installed: in a folder outside the
    checkout, with nothing of the repository on any path."""
    assert installed_host[1]["ok"], "the install itself failed (see the test above)"
    env = {"PATH": f"{Path(host_python).parent}{os.pathsep}/usr/bin{os.pathsep}/bin",
           "HOME": os.environ.get("HOME", str(tmp_path)), "LANG": "C.UTF-8",
           "WORKERS": "1", "PREORDER_EPOCHS": "1", "PREORDER_SEEDS": "1",
           "OMP_NUM_THREADS": "1"}

    def run(command, **kwargs):
        result = subprocess.run([str(c) for c in command], cwd=tmp_path, env=env,
                                capture_output=True, text=True, **kwargs)
        assert result.returncode == 0, f"{command[0]} failed:\n{result.stderr[-3000:]}"
        return result

    plugin = run(["python", "-c", "import xlpe_fairseq; print(xlpe_fairseq.__file__)"])
    assert REPO not in Path(plugin.stdout.strip()).parents, \
        f"the plugin was imported from the checkout: {plugin.stdout}"
    (tmp_path / "raw").mkdir()
    for lang in ("en", "zh"):
        (tmp_path / "raw" / f"train.{lang}").write_text(
            "\n".join(sentences(lang, 300, 1)) + "\n", encoding="utf-8")
    prepare, train, evaluate, translate = readme_first_try(
        Path("raw"), Path("data/en-zh"), Path("ckpt/en-zh"), "zh")
    advice = run(prepare).stderr.splitlines()[-1]
    assert advice.startswith("advice: train ") and ": xlpe-train " in advice, advice
    run([*train, *FIRST_TRY_MODEL])
    scored = run(evaluate).stdout
    assert "BLEU" in scored and (tmp_path / "ckpt/en-zh/hypotheses-test.zh").exists(), scored
    translations = run(translate, input="the dog sees a small house .\nwe read a book today .\n")
    assert len(translations.stdout.splitlines()) == 2, translations.stdout
