"""xlpe-install-eflomal (and scripts/install_eflomal.sh, which runs it from a checkout) builds
eflomal's sdist for a fixed instruction set.

A stand-in pip serves a minimal sdist and records what the command installs, so the tests need
neither the network nor a compiler."""
import os
import re
import subprocess
from pathlib import Path

import pytest

from xlpe_fairseq_cli import install_eflomal

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "install_eflomal.sh"

# download: writes an sdist whose src/Makefile holds $CFLAGS_LINE; install of a folder: keeps
# its Makefile and the options, since the script removes the folder on exit
FAKE_PIP = r"""#!/usr/bin/env bash
set -euo pipefail
case $1 in
    download)
        while [[ $1 != -d ]]; do shift; done
        sdist=$(mktemp -d)/eflomal-2.0.0
        mkdir -p "$sdist/src"
        printf '%s\nall: eflomal\n' "$CFLAGS_LINE" >"$sdist/src/Makefile"
        tar -czf "$2/eflomal-2.0.0.tar.gz" -C "${sdist%/*}" eflomal-2.0.0 ;;
    install)
        folder=${*: -1}
        if [[ -d $folder ]]; then
            cp "$folder/src/Makefile" "$RECORD/Makefile"
            echo "$*" >"$RECORD/install"
        else
            echo "$*" >>"$RECORD/packages"
        fi ;;
    show)
        [[ " ${INSTALLED:-} " == *" ${*: -1} "* ]] ;;
esac
"""


def fake_pip(tmp_path, monkeypatch, cflags_line, **env):
    pip = tmp_path / "pip"
    pip.write_text(FAKE_PIP)
    pip.chmod(0o755)
    for name, value in {"CFLAGS_LINE": cflags_line, "RECORD": str(tmp_path), **env}.items():
        monkeypatch.setenv(name, value)
    return str(pip)


def install(tmp_path, monkeypatch, cflags_line, *options, **env):
    """xlpe-install-eflomal with the stand-in pip; returns its exit status."""
    pip = fake_pip(tmp_path, monkeypatch, cflags_line, **env)
    return install_eflomal.main(["--pip", pip, *options])


@pytest.mark.parametrize("level, options", [(None, []), ("x86-64-v2", []),
                                             ("x86-64-v2", ["--march", "x86-64-v2"])])
def test_the_sdist_is_built_for_a_fixed_level_with_generic_tuning(tmp_path, monkeypatch,
                                                                   level, options):
    monkeypatch.delenv("EFLOMAL_MARCH", raising=False)
    env = {"EFLOMAL_MARCH": level} if level and not options else {}
    status = install(tmp_path, monkeypatch, "CFLAGS=-Ofast -march=native -Wall -g -fopenmp",
                     *options, **env)
    assert status == 0
    assert (tmp_path / "Makefile").read_text().splitlines()[0] == \
        f"CFLAGS=-Ofast -march={level or 'x86-64-v3'} -mtune=generic -Wall -g -fopenmp"
    options = (tmp_path / "install").read_text().split()
    # a native build of the same version is replaced, and no build of pip's own is used
    assert {"--force-reinstall", "--no-deps", "--no-build-isolation"} <= set(options), options


def test_an_sdist_without_march_native_is_refused(tmp_path, monkeypatch, capsys):
    assert install(tmp_path, monkeypatch, "CFLAGS=-O2 -Wall") == 1
    stderr = capsys.readouterr().err
    assert "xlpe-install-eflomal: error:" in stderr and "-march=native" in stderr, stderr
    assert not (tmp_path / "install").exists(), "installed an sdist it could not make portable"


@pytest.mark.parametrize("installed", ["", "numpy", "numpy Cython"])
def test_numpy_and_cython_are_installed_only_where_missing(tmp_path, monkeypatch, installed):
    """In a user's environment the build's numpy and Cython are theirs: a pinned install
    would move the numpy their fairseq and torch were built with."""
    assert install(tmp_path, monkeypatch, "CFLAGS=-Ofast -march=native",
                   INSTALLED=installed) == 0
    packages = tmp_path / "packages"
    installed_by_script = [line.split()[-1] for line in
                           (packages.read_text().splitlines() if packages.exists() else [])]
    assert installed_by_script == [p for p in ("numpy", "Cython") if p not in installed.split()]


def test_a_failing_pip_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    pip = tmp_path / "pip"
    pip.write_text("#!/usr/bin/env bash\necho 'No matching distribution found for eflomal'\n"
                   "exit 1\n")
    pip.chmod(0o755)
    assert install_eflomal.main(["--pip", str(pip)]) == 1
    error = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(error) == 1 and "No matching distribution" in error[0], error


def test_an_march_level_the_makefile_would_split_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        install_eflomal.main(["--march", "x86-64 -O0"])
    assert exit_info.value.code == 2
    assert "--march" in capsys.readouterr().err


def test_the_version_is_the_one_constraints_txt_pins():
    pinned = re.search(r"^eflomal==(\S+)$", (REPO / "constraints.txt").read_text(), re.M)
    assert pinned and pinned.group(1) == install_eflomal.EFLOMAL_VERSION


def test_the_checkout_script_runs_the_command_with_the_constraints(tmp_path, monkeypatch):
    """make setup's route: scripts/install_eflomal.sh PIP, numpy and Cython from
    constraints.txt where missing."""
    pip = fake_pip(tmp_path, monkeypatch, "CFLAGS=-Ofast -march=native")
    monkeypatch.delenv("EFLOMAL_MARCH", raising=False)
    result = subprocess.run(["bash", SCRIPT, pip], capture_output=True, text=True,
                            env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    assert "-march=x86-64-v3 -mtune=generic" in (tmp_path / "Makefile").read_text()
    assert f"-c {REPO / 'constraints.txt'} numpy" in (tmp_path / "packages").read_text()
