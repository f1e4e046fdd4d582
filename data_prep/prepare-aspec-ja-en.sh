#!/usr/bin/env bash
# WAT'17 ASPEC Japanese->English (XL PE, Ding et al. 2020; Reordering Embeddings, Chen et al.
# 2019): the first two training sections (~2.0M pairs, as Morishita et al. 2017), dev (1790),
# test (1812), prepared for fairseq-train --task translation_reorder with DPE (train) and
# BTG + preorderer (XL PE) reorder positions. Japanese is segmented with MeCab (fugashi +
# unidic-lite). See docs/recipes/aspec-ja-en.md.
#
#   data_prep/prepare-aspec-ja-en.sh --aspec-dir DIR OUTDIR
#   data_prep/prepare-aspec-ja-en.sh --raw-dir DIR OUTDIR
#
# --aspec-dir DIR  the extracted ASPEC-JE folder (train/train-{1,2,3}.txt, dev/dev.txt,
#                  test/test.txt). ASPEC is licensed: request it at
#                  https://jipsti.jst.go.jp/aspec/ ; nothing is downloaded here.
# --raw-dir DIR    start from untokenized {train,valid,test}.{ja,en} in DIR instead.
# Environment: TRAIN_SECTIONS ("1 2"), WORKERS, MERGES (32000), and the settings of
# data_prep/prepare-corpus.sh. Separate dictionaries: the scripts share few symbols.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"

usage() {
    echo "usage: $0 {--aspec-dir DIR | --raw-dir DIR} OUTDIR" >&2
    exit 2
}
RAW=
ASPEC=
OPERANDS=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --raw-dir | --aspec-dir)
            [[ $# -ge 2 ]] || { echo "$1 needs a folder" >&2; usage; }
            [[ $1 == --raw-dir ]] && RAW=$2 || ASPEC=$2
            shift 2 ;;
        -h | --help) show_help "$0" ;;
        -*) echo "unknown option $1" >&2; usage ;;
        *) OPERANDS+=("$1"); shift ;;
    esac
done
[[ ${#OPERANDS[@]} -eq 1 && -n $RAW$ASPEC ]] || usage
OUT=${OPERANDS[0]}
SRC=ja
TGT=en
MERGES=${MERGES:-32000}
read -r -a TRAIN_SECTIONS <<<"${TRAIN_SECTIONS:-1 2}"

# fields FILE JA_FIELD EN_FIELD RAW SPLIT: the ' ||| '-separated columns of an ASPEC file
# (train: SCORE ||| ID ||| NUMBER ||| JA ||| EN; dev/test: ID ||| NUMBER ||| JA ||| EN).
fields() {
    awk -F ' [|][|][|] ' -v ja="$2" -v en="$3" -v out_ja="$4/$5.ja.tmp" -v out_en="$4/$5.en.tmp" \
        -v file="$1" '
        NF < en { printf "%s:%d: expected at least %d fields\n", file, NR, en > "/dev/stderr"; exit 1 }
        { print $ja >> out_ja; print $en >> out_en }' "$1"
}

# extract_raw ASPEC RAW: ASPEC-JE files -> untokenized {train,valid,test}.{ja,en}.
extract_raw() {
    local aspec=$1 raw=$2 section split lang
    mkdir -p "$raw"
    rm -f "$raw"/*.tmp
    for section in "${TRAIN_SECTIONS[@]}"; do
        fields "$aspec/train/train-$section.txt" 4 5 "$raw" train
    done
    fields "$aspec/dev/dev.txt" 3 4 "$raw" valid
    fields "$aspec/test/test.txt" 3 4 "$raw" test
    for split in train valid test; do
        for lang in "$SRC" "$TGT"; do
            mv "$raw/$split.$lang.tmp" "$raw/$split.$lang"
        done
    done
}

if [[ -z $RAW ]]; then
    RAW=$OUT/raw
    inputs=("$ASPEC/dev/dev.txt" "$ASPEC/test/test.txt")
    for section in "${TRAIN_SECTIONS[@]}"; do
        inputs+=("$ASPEC/train/train-$section.txt")
    done
    need_files "${inputs[@]}"
    if fresh "$RAW/test.$SRC" "$RAW/test.$TGT" -- "${inputs[@]}"; then
        skipped "extract raw text"
    else
        timed "extract raw text" extract_raw "$ASPEC" "$RAW"
        made "$RAW/test.$SRC"
    fi
fi

run_prepare "$RAW" "$OUT" "$SRC" "$TGT"
