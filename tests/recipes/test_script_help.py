"""Every script a user runs (each file with a shebang under data_prep/ and examples/, and the
installer scripts/*.sh) is executable as committed and answers --help: exit 0, its usage and
defaults on stdout, nothing on stderr, no file or folder written. The scripts are found, not
listed, so that a new one is held to this too. Runs no training: --help exits before any work."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# scripts/gpu_lease/ is the maintainers' kit for leased GPU machines, not a user's entry point
SEARCHED = [(ROOT / "data_prep").rglob("*"), (ROOT / "examples").rglob("*"),
            (ROOT / "scripts").glob("*.sh")]


def has_shebang(path):
    with open(path, "rb") as f:
        return f.read(2) == b"#!"


SCRIPTS = sorted(path.relative_to(ROOT).as_posix() for paths in SEARCHED for path in paths
                 if path.is_file() and has_shebang(path))


def git_modes():
    """{path: mode} of the files in git's index; None outside a git checkout."""
    result = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-s", "--", "data_prep",
                             "examples", "scripts"], capture_output=True, text=True)
    if result.returncode != 0:
        return None
    modes = {}
    for line in result.stdout.splitlines():
        fields, path = line.split("\t", 1)
        modes[path] = fields.split()[0]
    return modes


def test_the_scripts_are_found():
    for script in ("data_prep/prepare-corpus.sh", "data_prep/prepare-iwslt14.sh",
                   "examples/train.sh", "examples/demo.sh", "examples/two_pass.sh",
                   "scripts/install_eflomal.sh"):
        assert script in SCRIPTS, f"{script} was not found among {SCRIPTS}"


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_script_is_executable_as_committed(script):
    modes = git_modes()
    if modes is None:
        pytest.skip("not a git checkout")
    assert modes.get(script) == "100755", (
        f"{script} is {'mode ' + modes[script] if script in modes else 'not in git'}: run "
        f"`chmod +x {script} && git add --chmod=+x {script}` (a user running it gets "
        "'Permission denied')")
    assert os.access(ROOT / script, os.X_OK), f"{script} is not executable here: chmod +x it"


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_the_usage_and_writes_nothing(script, flag, tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    result = subprocess.run([str(ROOT / script), flag], cwd=cwd, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=60)
    assert result.returncode == 0, f"{script} {flag}: exit {result.returncode}\n{result.stderr}"
    assert not result.stderr, f"{script} {flag} wrote on stderr:\n{result.stderr}"
    usage = [line for line in result.stdout.splitlines() if Path(script).name in line]
    assert usage, f"{script} {flag} printed no usage naming the script:\n{result.stdout}"
    assert len(result.stdout.splitlines()) >= 3, f"{script} {flag}:\n{result.stdout}"
    assert not any(cwd.iterdir()), f"{script} {flag} wrote {sorted(os.listdir(cwd))}"


def test_every_tracked_file_with_a_shebang_is_executable_as_committed():
    """Not only the entry points above: every file git tracks that starts with #! (the
    maintainers' scripts, the results' scripts under docs/results) is committed executable."""
    result = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-s", "-z"],
                            capture_output=True)
    if result.returncode != 0:
        pytest.skip("not a git checkout")
    not_executable = []
    for record in result.stdout.split(b"\0"):
        if not record:
            continue
        fields, path = record.decode().split("\t", 1)
        mode = fields.split()[0]
        if mode == "100644" and (ROOT / path).is_file() and has_shebang(ROOT / path):
            not_executable.append(path)
    assert not not_executable, (
        f"files with a shebang committed without the executable bit: {not_executable}; run "
        "`git update-index --chmod=+x FILE` (a user running them gets 'Permission denied')")
