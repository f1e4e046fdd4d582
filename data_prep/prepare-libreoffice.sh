#!/usr/bin/env bash
# A LibreOffice help corpus of two languages (Debian's libreoffice-help-<lang> packages,
# MPL-2.0), prepared for fairseq-train --task translation_reorder with DPE (train) and BTG +
# preorderer (XL PE) reorder positions. See docs/recipes/libreoffice.md.
#
#   data_prep/prepare-libreoffice.sh [--raw-dir DIR] PAIR OUTDIR     PAIR: SRC-TGT, e.g. en-de, en-tr
#
# Each language is a Debian help package: en is libreoffice-help-en-us (help folder en-US),
# any other code XX is libreoffice-help-XX (folder XX), e.g. de, tr, hi, ja, ko.
# --raw-dir DIR  start from untokenized {train,valid,test}.{SRC,TGT} in DIR instead of
#                downloading the packages (apt-get download; run apt-get update first if
#                apt knows no candidate version). Options go before or after the operands.
# The paired paragraphs then go through data_prep/prepare-corpus.sh with this corpus's
# settings: 10000 joint merges, one joined dictionary, at most 250 tokens a side.
# Needs xlpe-fairseq installed in the active environment. A rerun skips each step whose
# outputs were made from the present content of its inputs and from the same settings,
# whatever the files' times (data_prep/lib.sh). Environment: WORKERS (all cores), MERGES
# (10000), MAX_LEN (250), RATIO_RULE (fixed: Moses' length ratio of 1.5, as the studies
# prepared these pairs; corpus: prepare-corpus.sh's rule), VALID_SIZE / TEST_SIZE (1000
# pairs each), DROP_IDENTICAL (1, except
# 0 for en-de and de-en: leave out pairs whose sides are the same text, i.e. paragraphs not
# yet translated, which the help installs in English), and the settings of
# data_prep/prepare-corpus.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"

usage() {
    echo "usage: $0 [--raw-dir DIR] SRC-TGT OUTDIR   (e.g. en-de, en-tr)" >&2
    exit 2
}
parse_raw_dir_option "$@"
[[ ${#OPERANDS[@]} -eq 2 ]] || usage
PAIR=${OPERANDS[0]}
OUT=${OPERANDS[1]}
[[ $PAIR =~ ^([a-z]{2,3})-([a-z]{2,3})$ ]] || usage
SRC=${BASH_REMATCH[1]}
TGT=${BASH_REMATCH[2]}
[[ $SRC != "$TGT" ]] || usage
# ~39k unique pairs for en-de (~24k for en-tr), mostly short UI strings: 10k joint merges as for
# the 160k-pair IWSLT'14 setups of fairseq would already split little; more would leave merges
# seen only a few times.
MERGES=${MERGES:-10000}
# the languages share most symbols of this technical text (menu names, code, numbers)
JOINED_DICT=${JOINED_DICT:-1}
# The German help is fully translated: its identical pairs (9%) are code, formulas and names
# that read the same in both languages, and the en-de corpus was measured with them. Other
# languages fall back to English for what is not translated (Turkish 40% of the pairs).
case $PAIR in
    en-de | de-en) DROP_IDENTICAL=${DROP_IDENTICAL:-0} ;;
    *) DROP_IDENTICAL=${DROP_IDENTICAL:-1} ;;
esac

# help_package LANG, help_folder LANG: a language's Debian package and its folder under help/
help_package() { [[ $1 == en ]] && echo libreoffice-help-en-us || echo "libreoffice-help-$1"; }
help_folder() { [[ $1 == en ]] && echo en-US || echo "$1"; }

if [[ -z $RAW ]]; then
    RAW=$OUT/raw
    DOWNLOAD=$OUT/download
    mkdir -p "$DOWNLOAD"
    # apt-get download checks every package against the sha256 of the signed archive index,
    # so there is no separate checksum to record; the versions are printed for the record.
    debs=()
    for package in "$(help_package "$SRC")" "$(help_package "$TGT")"; do
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
    # a stamp marks a finished extraction and holds the packages' digest, so that the pairing
    # follows the packages
    STAMP=$DOWNLOAD/extracted.stamp
    if fresh "$STAMP" -- "${debs[@]}"; then
        skipped "extract help"
    else
        rm -rf "$DOWNLOAD/extracted" "$STAMP"
        for deb in "${debs[@]}"; do
            timed "extract $(basename "$deb")" dpkg-deb -x "$deb" "$DOWNLOAD/extracted"
        done
        made "$STAMP"
        cp "$(made_from_file "$STAMP")" "$STAMP"
    fi
    raw_files=()
    for split in train valid test; do
        raw_files+=("$RAW/$split.$SRC" "$RAW/$split.$TGT")
    done
    if fresh "${raw_files[@]}" -- "$STAMP" -- "drop_identical=$DROP_IDENTICAL" \
            "valid=${VALID_SIZE:-1000} test=${TEST_SIZE:-1000}"; then
        skipped "pair paragraphs"
    else
        flags=()
        if ((DROP_IDENTICAL)); then
            flags+=(--drop-identical)
        fi
        timed "pair paragraphs" xlpe-libreoffice-corpus \
            --source-help "$HELP/$(help_folder "$SRC")" --target-help "$HELP/$(help_folder "$TGT")" \
            --source-lang "$SRC" --target-lang "$TGT" --out "$RAW" \
            --valid-size "${VALID_SIZE:-1000}" --test-size "${TEST_SIZE:-1000}" "${flags[@]}"
        made "${raw_files[0]}"
    fi
fi

flags=()
((JOINED_DICT)) && flags+=(--joined-dictionary)
# Moses' fixed length ratio, as the studies of docs/studies prepared these pairs
exec "$HERE/prepare-corpus.sh" --src "$SRC" --tgt "$TGT" --merges "$MERGES" \
    --max-len "${MAX_LEN:-250}" --ratio-rule "${RATIO_RULE:-fixed}" "${flags[@]}" "$RAW" "$OUT"
