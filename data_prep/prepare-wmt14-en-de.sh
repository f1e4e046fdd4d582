#!/usr/bin/env bash
# WMT'14 English->German (Europarl v7, Common Crawl, News Commentary v9: ~4.5M pairs;
# newstest2013 dev, newstest2014 test, full version) prepared for fairseq-train --task
# translation_reorder with DPE (train) and BTG + preorderer (XL PE) reorder positions.
# Transformer base and big train on the same data-bin. See docs/recipes/wmt14-en-de.md.
#
#   data_prep/prepare-wmt14-en-de.sh [--raw-dir DIR] OUTDIR
#
# --raw-dir DIR  start from untokenized {train,valid,test}.{en,de} in DIR (no download).
# Environment: WORKERS, MERGES (32000 joint, XL PE §4 / RE §6.3), PREORDER_SECONDS, and the
# settings of xlpe-prepare (prepare-corpus.sh --help). Cased text, one joined dictionary (--share-all-embeddings).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"

usage() {
    echo "usage: $0 [--raw-dir DIR] OUTDIR" >&2
    exit 2
}
parse_raw_dir_option "$@"
[[ ${#OPERANDS[@]} -eq 1 ]] || usage
OUT=${OPERANDS[0]}
SRC=en
TGT=de
MERGES=${MERGES:-32000}
JOINED_DICT=${JOINED_DICT:-1}
# saved name -> address; the names key data_prep/checksums.txt
declare -A URLS=(
    [europarl-v7.tgz]=http://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz
    [commoncrawl.tgz]=http://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz
    [nc-v9.tgz]=http://www.statmt.org/wmt14/training-parallel-nc-v9.tgz
    [wmt13-test.tgz]=https://statmt.org/wmt13/test.tgz
    [wmt14-test-full.tgz]=https://statmt.org/wmt14/test-full.tgz
)
# the training corpora inside the unpacked archives, without the .LANG suffix
CORPORA=(training/europarl-v7.de-en commoncrawl.de-en training/news-commentary-v9.de-en)

# extract_raw ORIG RAW: unpacked archives -> untokenized {train,valid,test}.{en,de}.
extract_raw() {
    local orig=$1 raw=$2 lang corpus kind
    mkdir -p "$raw"
    for lang in "$SRC" "$TGT"; do
        for corpus in "${CORPORA[@]}"; do
            cat "$orig/$corpus.$lang"
        done >"$raw/train.$lang.tmp"
        seg_text "$orig/test/newstest2013-src.$lang.sgm" >"$raw/valid.$lang.tmp"
        kind=ref
        [[ $lang == "$SRC" ]] && kind=src
        seg_text "$orig/test-full/newstest2014-deen-$kind.$lang.sgm" >"$raw/test.$lang.tmp"
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
