"""Importing the plugin checks for a fairseq it supports and, where there is none, says in one
line what to install. Each case runs in a fresh virtual environment that sees the repository
and whatever fairseq folder the case gives it, nothing of the suite's own environment."""
import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory):
    """A Python without fairseq (nor pip) that imports the repository's package."""
    root = tmp_path_factory.mktemp("bare")
    venv.create(root, with_pip=False)
    python = root / "bin" / "python"
    site = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "repository.pth").write_text(f"{REPO}\n")
    return python


def fairseq_folder(root, version_file, text):
    folder = root / "fairseq"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / version_file).write_text(text)
    return root


def import_plugin(python, code="import xlpe_fairseq", path=None):
    env = {"PATH": "/usr/bin:/bin", **({"PYTHONPATH": str(path)} if path else {})}
    return subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)


# the check the plugin's import runs first, alone: a fake fairseq folder it accepts holds no
# fairseq (nor has this Python torch) for the rest of the import
CHECK_ONLY = f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location(
    "fairseq_support", {str(REPO / "xlpe_fairseq" / "fairseq_support.py")!r})
support = importlib.util.module_from_spec(spec)
spec.loader.exec_module(support)
support.check_fairseq()
print("fairseq" in sys.modules)
"""


def accepted(python, path):
    result = import_plugin(python, CHECK_ONLY, path=path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False", "the check must locate fairseq, not import it"
    return True


def test_without_fairseq_the_import_says_what_to_install(bare_python):
    result = import_plugin(bare_python)
    last = result.stderr.strip().splitlines()[-1]
    assert result.returncode == 1 and "UnsupportedFairseq" in last, result.stderr
    assert "has no fairseq" in last and "pip install 'xlpe-fairseq[fairseq]'" in last, last


def test_an_xlpe_command_without_fairseq_says_it_in_one_line(bare_python):
    result = import_plugin(bare_python, "import sys; sys.argv = ['/bin/xlpe-bleu']; "
                                        "from xlpe_fairseq_cli.commands import bleu; bleu()")
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "xlpe-bleu: error: xlpe-fairseq is a fairseq plugin"), \
        f"expected one 'xlpe-bleu: error: ...' line, got:\n{result.stderr}"


def test_a_fairseq_of_another_series_is_named_with_its_version(bare_python, tmp_path):
    path = fairseq_folder(tmp_path, "version.txt", "0.10.2\n")
    last = import_plugin(bare_python, path=path).stderr.strip().splitlines()[-1]
    assert "supports fairseq 0.12 and finds fairseq 0.10.2" in last, last


@pytest.mark.parametrize("version_file, text", [("version.txt", "0.12.2\n"),
                                                ("version.py", '__version__ = "0.12.3"\n')])
def test_fairseq_0_12_in_either_layout_is_accepted(bare_python, tmp_path, version_file, text):
    assert accepted(bare_python, fairseq_folder(tmp_path, version_file, text))


def test_pypi_fairseq_0_12_2_is_refused_and_a_checkout_of_main_accepted(bare_python, tmp_path):
    path = fairseq_folder(tmp_path, "version.txt", "0.12.2\n")
    info = path / "fairseq-0.12.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fairseq\nVersion: 0.12.2\n")
    last = import_plugin(bare_python, path=path).stderr.strip().splitlines()[-1]
    assert "PyPI's fairseq 0.12.2" in last and "pip uninstall fairseq" in last, last
    # a checkout of fairseq main reports the same version and runs the plugin, installed
    # editable or not
    for dir_info in ({"editable": True}, {}):
        (info / "direct_url.json").write_text(json.dumps(
            {"url": "file:///src/fairseq", "dir_info": dir_info}))
        assert accepted(bare_python, path), f"a checkout ({dir_info}) was refused"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the default imports before 3.11")
def test_a_fairseq_that_python_3_11_cannot_import_is_named(bare_python, tmp_path):
    path = fairseq_folder(tmp_path, "version.txt", "0.12.2\n")
    (path / "fairseq" / "dataclass").mkdir()
    (path / "fairseq" / "dataclass" / "configs.py").write_text(
        "class FairseqConfig(FairseqDataclass):\n    common: CommonConfig = CommonConfig()\n")
    last = import_plugin(bare_python, path=path).stderr.strip().splitlines()[-1]
    assert "does not import on Python 3." in last and "dataclass instances" in last, last
    # the snapshots declare the class, through field(default=...), and import
    (path / "fairseq" / "dataclass" / "configs.py").write_text(
        "class FairseqConfig(FairseqDataclass):\n"
        "    common: CommonConfig = field(default=CommonConfig)\n")
    assert accepted(bare_python, path)


def test_the_suite_runs_on_a_supported_fairseq():
    from xlpe_fairseq.fairseq_support import check_fairseq

    check_fairseq()
