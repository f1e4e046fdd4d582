"""scripts/install_eflomal.sh builds eflomal's sdist for a fixed instruction set.

A stand-in pip serves a minimal sdist and records what the script installs, so the tests need
neither the network nor a compiler."""
import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "install_eflomal.sh"

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


def install(tmp_path, cflags_line, **env):
    pip = tmp_path / "pip"
    pip.write_text(FAKE_PIP)
    pip.chmod(0o755)
    env = {**os.environ, "CFLAGS_LINE": cflags_line, "RECORD": str(tmp_path), **env}
    return subprocess.run(["bash", SCRIPT, str(pip)], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("level", [None, "x86-64-v2"])
def test_the_sdist_is_built_for_a_fixed_level_with_generic_tuning(tmp_path, level):
    result = install(tmp_path, "CFLAGS=-Ofast -march=native -Wall -g -fopenmp",
                     **({"EFLOMAL_MARCH": level} if level else {}))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "Makefile").read_text().splitlines()[0] == \
        f"CFLAGS=-Ofast -march={level or 'x86-64-v3'} -mtune=generic -Wall -g -fopenmp"
    options = (tmp_path / "install").read_text().split()
    # a native build of the same version is replaced, and no build of pip's own is used
    assert {"--force-reinstall", "--no-deps", "--no-build-isolation"} <= set(options), options


def test_an_sdist_without_march_native_is_refused(tmp_path):
    result = install(tmp_path, "CFLAGS=-O2 -Wall")
    assert result.returncode == 1
    assert "no longer says -march=native" in result.stderr
    assert not (tmp_path / "install").exists(), "installed an sdist it could not make portable"


@pytest.mark.parametrize("installed", ["", "numpy", "numpy Cython"])
def test_numpy_and_cython_are_installed_only_where_missing(tmp_path, installed):
    """In a user's environment the build's numpy and Cython are theirs: a pinned install
    would move the numpy their fairseq and torch were built with."""
    result = install(tmp_path, "CFLAGS=-Ofast -march=native", INSTALLED=installed)
    assert result.returncode == 0, result.stderr
    packages = tmp_path / "packages"
    installed_by_script = [line.split()[-1] for line in
                           (packages.read_text().splitlines() if packages.exists() else [])]
    assert installed_by_script == [p for p in ("numpy", "Cython") if p not in installed.split()]
