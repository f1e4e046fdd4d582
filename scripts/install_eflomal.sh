#!/usr/bin/env bash
# Install eflomal (the version constraints.txt pins) built for a fixed instruction set.
#
#   scripts/install_eflomal.sh [PIP]     (default: pip; `make setup` passes the venv's)
#
# eflomal has no wheels, and its sdist compiles the sampler with -march=native: pip builds it
# for the CPU it runs on, and the same seeded alignment then differs between CPU models (other
# vector widths and tunings round the sampler's sums differently). Built for x86-64-v3 (AVX2
# and FMA, the level of the demo's torch kernels) with generic tuning, the binary, and so the
# alignment, depends on the compiler only. EFLOMAL_MARCH sets another level (x86-64-v2 for a
# CPU without AVX2), which aligns differently.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$HERE/data_prep/options.sh"
[[ ${1:-} == -h || ${1:-} == --help ]] && show_help "$0"
PIP=${1:-pip}
MARCH=${EFLOMAL_MARCH:-x86-64-v3}
CONSTRAINTS=$HERE/constraints.txt

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the sdist's setup.py imports numpy and Cython: installed (pinned) where missing, and an
# environment's own versions left as they are
for package in numpy Cython; do
    "$PIP" show -q "$package" >/dev/null 2>&1 || "$PIP" install -q -c "$CONSTRAINTS" "$package"
done
"$PIP" download -q --no-deps --no-binary eflomal --no-build-isolation -c "$CONSTRAINTS" \
    -d "$tmp" eflomal
tar -xzf "$tmp"/eflomal-*.tar.gz -C "$tmp"
makefile=$(echo "$tmp"/eflomal-*/src/Makefile)
if ! grep -q -- '-march=native' "$makefile"; then
    echo "$0: eflomal's src/Makefile no longer says -march=native; nothing to replace" >&2
    exit 1
fi
sed -i "s/-march=native/-march=$MARCH -mtune=generic/" "$makefile"
# from a folder: pip neither reuses a wheel it cached from a native build nor caches this one;
# --force-reinstall replaces a native build of the same version
"$PIP" install -q --no-deps --no-build-isolation --force-reinstall "${makefile%/src/Makefile}"
