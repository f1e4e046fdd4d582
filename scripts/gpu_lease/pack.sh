#!/usr/bin/env bash
# Here, before a GPU lease: what a device run needs and the device lacks, in the two ignored
# folders a run carries. .whl gets the wheels its Python (3.12) has no package for: fairseq
# (fairseq-fixed, the snapshot setup.py takes on 3.12), hydra-core, omegaconf, antlr4,
# bitarray, sacreBLEU, sacremoses and tensorboardX, at the versions constraints.txt pins.
# .lease/corpus gets CORPUS's data-bins, position sets, test references and the preorderer's
# test score, links kept (each file travels once), and .lease/grid the text, xlpe and monotone
# folders grid.sh reads. The device's own torch, numpy and matplotlib are used.
#
#   scripts/gpu_lease/pack.sh CORPUS
#
# CORPUS: the OUT of data_prep/prepare-libreoffice.sh, with examples/position_sets.sh's sets
# in CORPUS/sets. Then, on the device, scripts/gpu_lease/run.sh (carry .whl and .lease).
# DEVICE_PYTHON (3.12) and FAIRSEQ (fairseq-fixed==0.12.3.1) choose other wheels (a CPU dry
# run on Python 3.11: DEVICE_PYTHON=3.11 FAIRSEQ=ve-fairseq==0.12.3); WHEELS=DIR takes them
# from DIR instead of PyPI; KIT=DIR writes .whl and .lease there (a test) instead of here.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    # the header comment above, the script's documentation
    sed -n '2,/^set -/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
if [[ $# -ne 1 ]]; then
    echo "usage: $0 CORPUS" >&2
    exit 2
fi
CORPUS=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
KIT=${KIT:-$PWD}
FOLDERS=(data-bin/text data-bin/xlpe data-bin/dpe sets/oracle sets/monotone)
for need in "${FOLDERS[@]}"; do
    if [[ ! -d $CORPUS/$need ]]; then
        echo "pack.sh: $CORPUS/$need: no such folder (the recipe's data-bins and" \
            "examples/position_sets.sh's sets are needed)" >&2
        exit 1
    fi
done

pinned() {
    local line
    line=$(grep -i "^$1==" constraints.txt) || {
        echo "pack.sh: constraints.txt pins no $1" >&2
        exit 1
    }
    echo "$line"
}

rm -rf "$KIT/.whl" "$KIT/.lease"
mkdir -p "$KIT/.whl" "$KIT/.lease/corpus"
PLATFORMS=()
for platform in manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 \
    manylinux1_x86_64; do
    PLATFORMS+=(--platform "$platform")
done
if [[ -n ${WHEELS:-} ]]; then
    cp "$WHEELS"/*.whl "$KIT/.whl/"
else
    python3 -m pip download -q --no-deps --only-binary=:all: --implementation cp \
        --python-version "${DEVICE_PYTHON:-3.12}" "${PLATFORMS[@]}" -d "$KIT/.whl" \
        "${FAIRSEQ:-fairseq-fixed==0.12.3.1}" "$(pinned bitarray)" "$(pinned hydra-core)" \
        "$(pinned omegaconf)" "$(pinned sacrebleu)" "$(pinned sacremoses)" \
        "$(pinned tensorboardX)"
    # antlr4's runtime is published as source only; pure Python, so a wheel built here serves
    python3 -m pip wheel -q --no-deps -w "$KIT/.whl" "$(pinned antlr4-python3-runtime)"
fi

# copy_folder FROM TO: files copied; a link into CORPUS becomes the same link inside .lease
copy_folder() {
    local from=$1 to=$2 path target
    mkdir -p "$to"
    for path in "$from"/* "$from"/.[!.]*; do
        [[ -e $path ]] || continue
        target=$(readlink -f "$path")
        if [[ -L $path && $target == "$CORPUS"/* ]]; then
            ln -s "$(realpath -m --relative-to="$to" \
                "$KIT/.lease/corpus/${target#"$CORPUS"/}")" "$to/${path##*/}"
        else
            cp "$target" "$to/${path##*/}"
        fi
    done
}
for folder in "${FOLDERS[@]}"; do
    copy_folder "$CORPUS/$folder" "$KIT/.lease/corpus/$folder"
done
mkdir -p "$KIT/.lease/corpus/raw" "$KIT/.lease/grid"
cp "$CORPUS"/raw/test.* "$KIT/.lease/corpus/raw/"
# the test positions' tau, where xlpe-study's report looks for it (beside data-bin/)
if [[ -f $CORPUS/preorderer.test.score ]]; then
    cp "$CORPUS/preorderer.test.score" "$KIT/.lease/corpus/"
fi
# the layout docs/results/inxl-at-scale/grid.sh reads as its DATA
ln -s ../corpus/data-bin/text ../corpus/data-bin/xlpe ../corpus/sets/monotone "$KIT/.lease/grid/"

# what travels: the tracked and untracked-not-ignored files, and the two carried folders
bytes=$(( $(git ls-files -co --exclude-standard -z | du -cb --files0-from=- | tail -1 | cut -f1)
    + $(du -sb "$KIT/.whl" "$KIT/.lease" | awk '{s += $1} END {print s}') ))
limit=$(( 64 * 1024 * 1024 ))
echo "pack.sh: .whl and .lease ready; a device run sends $(( bytes / 1024 / 1024 )) MiB of" \
    "at most 64" >&2
if (( bytes > limit )); then
    echo "pack.sh: that is over the device's 64 MiB: leave out a position set or carry less" >&2
    exit 1
fi
