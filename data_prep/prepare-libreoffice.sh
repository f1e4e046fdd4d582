#!/usr/bin/env bash
# English->German LibreOffice help corpus (Debian's libreoffice-help-en-us and
# libreoffice-help-de, MPL-2.0), prepared for fairseq-train --task translation_reorder with
# DPE (train) and BTG + preorderer (XL PE) reorder positions. See docs/recipes/libreoffice.md.
#
#   data_prep/prepare-libreoffice-en-de.sh [--raw-dir DIR] OUTDIR
#
# --raw-dir DIR  start from untokenized {train,valid,test}.{en,de} in DIR instead of
#                downloading the packages (apt-get download; run apt-get update first if
#                apt knows no candidate version).
# Needs xlpe-fairseq installed in the active environment. Steps whose outputs exist and are
# newer than their inputs are skipped on rerun. Environment: WORKERS (all cores), MERGES
# (10000), VALID_SIZE / TEST_SIZE (1000 pairs each), and the settings of data_prep/pipeline.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
source "$HERE/pipeline.sh"

usage() {
    echo "usage: $0 [--raw-dir DIR] OUTDIR" >&2
    exit 2
}
parse_raw_dir_option "$@"
[[ ${#OPERANDS[@]} -eq 1 ]] || usage
OUT=${OPERANDS[0]}
SRC=en
TGT=de
PACKAGES=(libreoffice-help-en-us libreoffice-help-de)
# ~39k unique pairs, mostly short UI strings: 10k joint merges as for the 160k-pair IWSLT'14
# setups of fairseq would already split little; more would leave merges seen only a few times.
MERGES=${MERGES:-10000}
# English and German share most symbols of this technical text (menu names, code, numbers)
JOINED_DICT=${JOINED_DICT:-1}

if [[ -z $RAW ]]; then
    RAW=$OUT/raw
    DOWNLOAD=$OUT/download
    mkdir -p "$DOWNLOAD"
    # apt-get download checks every package against the sha256 of the signed archive index,
    # so there is no separate checksum to record; the versions are printed for the record.
    debs=()
    for package in "${PACKAGES[@]}"; do
        version=$(apt-cache policy "$package" | awk '/Candidate:/ { print $2 }')
        if [[ -z $version || $version == "(none)" ]]; then
            echo "$package: apt knows no candidate version; run apt-get update" >&2
            exit 1
        fi
        echo "== $package $version" >&2
        deb=$(ls "$DOWNLOAD/${package}_"*.deb 2>/dev/null | head -n 1 || true)
        if [[ -z $deb ]]; then
            (cd "$DOWNLOAD" && timed "apt-get download $package" apt-get download "$package")
            deb=$(ls "$DOWNLOAD/${package}_"*.deb | head -n 1)
        fi
        debs+=("$deb")
    done
    HELP=$DOWNLOAD/extracted/usr/share/libreoffice/help
    # dpkg-deb keeps the packaged (old) mtimes, so a stamp marks when extraction finished
    STAMP=$DOWNLOAD/extracted.stamp
    if fresh "$STAMP" -- "${debs[@]}"; then
        skipped "extract help"
    else
        rm -rf "$DOWNLOAD/extracted" "$STAMP"
        for deb in "${debs[@]}"; do
            timed "extract $(basename "$deb")" dpkg-deb -x "$deb" "$DOWNLOAD/extracted"
        done
        touch "$STAMP"
    fi
    raw_files=()
    for split in "${PIPELINE_SPLITS[@]}"; do
        raw_files+=("$RAW/$split.$SRC" "$RAW/$split.$TGT")
    done
    if fresh "${raw_files[@]}" -- "$STAMP"; then
        skipped "pair paragraphs"
    else
        timed "pair paragraphs" xlpe-libreoffice-corpus --source-help "$HELP/en-US" \
            --target-help "$HELP/de" --source-lang "$SRC" --target-lang "$TGT" --out "$RAW" \
            --valid-size "${VALID_SIZE:-1000}" --test-size "${TEST_SIZE:-1000}"
    fi
fi

prepare_corpus "$RAW" "$OUT" "$SRC" "$TGT"
