#!/usr/bin/env bash
# Install eflomal (the version constraints.txt pins) built for a fixed instruction set:
# xlpe-install-eflomal (xlpe_fairseq_cli/install_eflomal.py, which says why) run from this
# checkout, numpy and Cython pinned by constraints.txt where missing.
#
#   scripts/install_eflomal.sh [PIP]     (default: pip; `make setup` passes the venv's)
#
# EFLOMAL_MARCH sets another level than x86-64-v3 (x86-64-v2 for a CPU without AVX2).
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$HERE/data_prep/options.sh"
[[ ${1:-} == -h || ${1:-} == --help ]] && show_help "$0"
PIP=${1:-pip}
# the Python beside the pip, or python3: the command needs the standard library alone
PYTHON=python3
[[ $PIP == */* && -x ${PIP%/*}/python ]] && PYTHON=${PIP%/*}/python
PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}" exec "$PYTHON" -m xlpe_fairseq_cli.install_eflomal \
    --pip "$PIP" --constraints "$HERE/constraints.txt"
