#!/usr/bin/env bash
# WMT'17 Chinese<->English (XL PE, Ding et al. 2020: newsdev2017 dev, newstest2017 test)
# prepared for fairseq-train --task translation_reorder with DPE (train) and BTG + preorderer
# (XL PE) reorder positions. Chinese is segmented with jieba. See docs/recipes/wmt17-zh-en.md.
#
#   data_prep/prepare-wmt17-zh-en.sh [--raw-dir DIR] {zh-en|en-zh} OUTDIR
#
# Downloads News Commentary v12 (the only WMT'17 zh-en corpus with a plain download) and the
# official dev/test sets. The paper's ~20M pairs (Hassan et al. 2018) add the UN Parallel
# Corpus v1.0 and the CWMT corpora, which need registration: put each of them as a pair of
# line-aligned files NAME.zh / NAME.en into EXTRA_CORPORA_DIR and they join the training data.
# --raw-dir DIR  start from untokenized {train,valid,test}.{zh,en} in DIR (no download).
# Environment: EXTRA_CORPORA_DIR, WORKERS, MERGES (32000), and the settings of
# data_prep/prepare-corpus.sh. Separate dictionaries: the scripts share few symbols.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"

usage() {
    echo "usage: $0 [--raw-dir DIR] {zh-en|en-zh} OUTDIR" >&2
    exit 2
}
parse_raw_dir_option "$@"
[[ ${#OPERANDS[@]} -eq 2 ]] || usage
case ${OPERANDS[0]} in
    zh-en | en-zh) PAIR=${OPERANDS[0]} ;;
    *) usage ;;
esac
OUT=${OPERANDS[1]}
SRC=${PAIR%-*}
TGT=${PAIR#*-}
MERGES=${MERGES:-32000}
EXTRA_CORPORA_DIR=${EXTRA_CORPORA_DIR:-}
declare -A URLS=(
    [nc-v12.tgz]=http://data.statmt.org/wmt17/translation-task/training-parallel-nc-v12.tgz
    [wmt17-dev.tgz]=https://data.statmt.org/wmt17/translation-task/dev.tgz
    [wmt17-test.tgz]=https://data.statmt.org/wmt17/translation-task/test.tgz
)

# extract_raw ORIG RAW: unpacked archives (+ extra corpora) -> {train,valid,test}.{zh,en}.
extract_raw() {
    local orig=$1 raw=$2 lang kind extra=() file
    local sets=${SRC}${TGT}  # the direction's own dev/test files: zhen or enzh
    if [[ -n $EXTRA_CORPORA_DIR ]]; then
        for file in "$EXTRA_CORPORA_DIR"/*.zh; do
            need_files "${file%.zh}.en"
            extra+=("${file%.zh}")
        done
    fi
    mkdir -p "$raw"
    for lang in "$SRC" "$TGT"; do
        cat "$orig/training/news-commentary-v12.zh-en.$lang" \
            "${extra[@]/%/.$lang}" >"$raw/train.$lang.tmp"
        kind=ref
        [[ $lang == "$SRC" ]] && kind=src
        seg_text "$orig/dev/newsdev2017-$sets-$kind.$lang.sgm" >"$raw/valid.$lang.tmp"
        seg_text "$orig/test/newstest2017-$sets-$kind.$lang.sgm" >"$raw/test.$lang.tmp"
        for split in train valid test; do
            mv "$raw/$split.$lang.tmp" "$raw/$split.$lang"
        done
    done
}

if [[ -z $RAW ]]; then
    RAW=$OUT/raw
    fetch_and_unpack "$OUT/download" "$OUT/download/orig"
    extract_raw_once "$OUT/download/orig" "$OUT/download/orig.stamp"
fi

run_prepare "$RAW" "$OUT" "$SRC" "$TGT"
