"""The plugin installs into a user's own fairseq environment and replaces nothing of it.

The host is what a user of Python 3.11 has: a virtual environment holding torch and
``fairseq-fixed`` 0.12.3.1 built from its sdist (not the snapshot the plugin's `fairseq` extra
names, so a plugin that brought its own fairseq would overwrite it). scripts/host_stack.py
installs the plugin there the README's way, compares fairseq's files and every version before
and after, and trains and decodes with ``--user-dir`` through the host's own commands. The
first run builds fairseq-fixed (minutes); pip's wheel cache serves it afterwards."""
import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import torch

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


def test_the_plugin_installs_into_a_fairseq_environment_and_replaces_nothing(host_python,
                                                                             tmp_path):
    result = subprocess.run([sys.executable, REPO / "scripts" / "host_stack.py", "--python",
                             host_python, "--work", tmp_path / "work"],
                            capture_output=True, text=True)
    report = json.loads(result.stdout)
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
