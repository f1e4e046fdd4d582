#!/usr/bin/env bash
# IWSLT'14 TED talks (de-en as in fairseq's prepare-iwslt14.sh, plus the DPE paper's en-de,
# en-fr, en-it) prepared for fairseq-train --task translation_reorder with DPE (train) and
# BTG + preorderer (XL PE) reorder positions. See docs/recipes/iwslt14.md.
#
#   data_prep/prepare-iwslt14.sh [--raw-dir DIR] PAIR OUTDIR     PAIR: de-en en-de en-fr en-it
#
# Splits as fairseq's prepare-iwslt14.sh: every 23rd line of train.tags is valid, the rest
# train; test is dev2010 + TEDX.dev2012 + tst2010-2012 (those the pair's archive has). Text is
# lowercased (fairseq's script, DPE §4.1).
# --raw-dir DIR  start from untokenized {train,valid,test}.{SRC,TGT} in DIR (no download).
# Environment: IWSLT_ARCHIVE (an already downloaded XX-YY.tgz, e.g. for en-fr/en-it from the
# WIT3 site if its old archive address is gone), WORKERS, MERGES (10000, fairseq's script;
# the DPE paper reports a 32k vocabulary), and xlpe-prepare's settings
# (data_prep/prepare-corpus.sh --help).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"

usage() {
    echo "usage: $0 [--raw-dir DIR] {de-en|en-de|en-fr|en-it} OUTDIR" >&2
    exit 2
}
parse_raw_dir_option "$@"
[[ ${#OPERANDS[@]} -eq 2 ]] || usage
PAIR=${OPERANDS[0]}
OUT=${OPERANDS[1]}
# ARCHIVE_PAIR: the WIT3 archive that holds the pair, named source-target as published
case $PAIR in
    de-en | en-de) ARCHIVE_PAIR=de-en ;;
    en-fr) ARCHIVE_PAIR=en-fr ;;
    en-it) ARCHIVE_PAIR=en-it ;;
    *) usage ;;
esac
SRC=${PAIR%-*}
TGT=${PAIR#*-}
LOWERCASE=${LOWERCASE:-1}
MERGES=${MERGES:-10000}
MAX_LEN=${MAX_LEN:-175}
declare -A URLS=(
    # fairseq's mirror of the WIT3 2014-01 release (the address in prepare-iwslt14.sh)
    [de-en]=http://dl.fbaipublicfiles.com/fairseq/data/iwslt14/de-en.tgz
    [en-fr]=https://wit3.fbk.eu/archive/2014-01/texts/en/fr/en-fr.tgz
    [en-it]=https://wit3.fbk.eu/archive/2014-01/texts/en/it/en-it.tgz
)
# test sets in the order of fairseq's prepare-iwslt14.sh
TEST_SETS=(TED.dev2010 TEDX.dev2012 TED.tst2010 TED.tst2011 TED.tst2012)

# train_text FILE: the sentences of a train.tags file. Exactly fairseq's filter, since the
# valid split is every 23rd line of what it keeps.
train_text() {
    grep -v -e '<url>' -e '<talkid>' -e '<keywords>' "$1" |
        sed -e 's/<title>//g; s/<\/title>//g; s/<description>//g; s/<\/description>//g'
}

# extract_raw ORIG RAW: WIT3 files -> untokenized {train,valid,test}.{SRC,TGT}.
extract_raw() {
    local orig=$1 raw=$2 lang name file
    mkdir -p "$raw"
    for lang in "$SRC" "$TGT"; do
        train_text "$orig/train.tags.$ARCHIVE_PAIR.$lang" >"$raw/train.tags.$lang"
        awk 'NR % 23 == 0' "$raw/train.tags.$lang" >"$raw/valid.$lang.tmp"
        awk 'NR % 23 != 0' "$raw/train.tags.$lang" >"$raw/train.$lang.tmp"
        rm "$raw/train.tags.$lang"
        : >"$raw/test.$lang.tmp"
        for name in "${TEST_SETS[@]}"; do
            file=$orig/IWSLT14.$name.$ARCHIVE_PAIR.$lang.xml
            if [[ -e $file ]]; then
                seg_text "$file" >>"$raw/test.$lang.tmp"
            fi
        done
        for split in train valid test; do
            mv "$raw/$split.$lang.tmp" "$raw/$split.$lang"
        done
    done
}

if [[ -z $RAW ]]; then
    RAW=$OUT/raw
    archive=${IWSLT_ARCHIVE:-$OUT/download/$ARCHIVE_PAIR.tgz}
    if [[ -z ${IWSLT_ARCHIVE:-} ]]; then
        fetch "${URLS[$ARCHIVE_PAIR]}" "$archive"
    else
        need_files "$archive"
        verify_checksum "$archive"
    fi
    orig=$OUT/download/$ARCHIVE_PAIR
    mkdir -p "$OUT/download"
    if fresh "$orig/train.tags.$ARCHIVE_PAIR.$SRC" -- "$archive"; then
        skipped "unpack $archive"
    else
        timed "unpack $archive" tar -xzf "$archive" -C "$OUT/download"
        made "$orig/train.tags.$ARCHIVE_PAIR.$SRC"
    fi
    extract_raw_once "$orig" "$orig/train.tags.$ARCHIVE_PAIR.$SRC"
fi

run_prepare "$RAW" "$OUT" "$SRC" "$TGT"
