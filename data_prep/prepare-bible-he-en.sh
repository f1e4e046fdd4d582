#!/usr/bin/env bash
# Hebrew->English Bible corpus (PyPI bible-alignments, manual gold alignments for valid/test)
# prepared for fairseq-train --task translation_reorder with DPE reorder positions.
#
#   data_prep/prepare-bible-he-en.sh OUTDIR
#
# Needs xlpe-fairseq installed in the active environment (xlpe-* and fairseq-preprocess on
# PATH). Steps whose outputs exist and are newer than their inputs are skipped on rerun.
# Environment: WORKERS (default: all cores), MERGES (default: 8000).
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
OUT=$1
WORKERS=${WORKERS:-$(nproc)}
# ~21k verse pairs, ~1M word tokens, ~50k word types over both languages: 8000 joint merges
# keep a few thousand symbols per side, small enough that each occurs often in 21k pairs,
# while frequent words stay whole (cf. 10k merges for the 160k-pair IWSLT'14 setups).
MERGES=${MERGES:-8000}
SRC=he
TGT=en
CORPUS=$OUT/corpus
BPE=$OUT/bpe
BIN=$OUT/data-bin
SPLITS=(train valid test)

# fresh OUT... -- IN...: true when every OUT exists and is newer than every IN.
fresh() {
    local outs=() ins=() after_separator=0 arg out in
    for arg in "$@"; do
        if [[ $arg == -- ]]; then
            after_separator=1
        elif ((after_separator)); then
            ins+=("$arg")
        else
            outs+=("$arg")
        fi
    done
    for out in "${outs[@]}"; do
        [[ -e $out ]] || return 1
        for in in "${ins[@]}"; do
            [[ $out -nt $in ]] || return 1
        done
    done
}

# timed NAME COMMAND...: run a step and report its wall time.
timed() {
    local name=$1 start=$EPOCHREALTIME
    shift
    echo "== $name" >&2
    "$@"
    awk -v name="$name" -v start="$start" -v end="$EPOCHREALTIME" \
        'BEGIN { printf "== %s: %.1f s\n", name, end - start > "/dev/stderr" }'
}

skipped() {
    echo "== $1: up to date, skipped" >&2
}

mkdir -p "$CORPUS" "$BPE" "$BIN"

# 1. Corpus. Already tokenized on both sides (Hebrew morphemes, BSB words and punctuation),
#    and the gold alignments index exactly these tokens, so there is no tokenization step.
corpus_files=()
for split in "${SPLITS[@]}"; do
    corpus_files+=("$CORPUS/$split.$SRC" "$CORPUS/$split.$TGT" "$CORPUS/$split.ids")
done
corpus_files+=("$CORPUS/valid.gold.align" "$CORPUS/test.gold.align")
if fresh "${corpus_files[@]}" --; then
    skipped corpus
else
    timed corpus xlpe-bible-corpus --out "$CORPUS"
fi

# 2. Joint BPE codes learned on the training text of both sides, applied to every split.
if fresh "$BPE/codes" -- "$CORPUS/train.$SRC" "$CORPUS/train.$TGT"; then
    skipped "learn BPE"
else
    timed "learn BPE ($MERGES joint merges)" xlpe-bpe learn --merges "$MERGES" \
        --input "$CORPUS/train.$SRC" "$CORPUS/train.$TGT" --codes "$BPE/codes" \
        --workers "$WORKERS"
fi
for split in "${SPLITS[@]}"; do
    for lang in "$SRC" "$TGT"; do
        if fresh "$BPE/$split.$lang" -- "$BPE/codes" "$CORPUS/$split.$lang"; then
            skipped "apply BPE $split.$lang"
        else
            timed "apply BPE $split.$lang" xlpe-bpe apply --codes "$BPE/codes" \
                --input "$CORPUS/$split.$lang" --output "$BPE/$split.$lang" --workers "$WORKERS"
        fi
    done
done

# 3. Word alignment of the training pairs over BPE tokens (eflomal, grow-diag-final-and).
if fresh "$BPE/train.align" -- "$BPE/train.$SRC" "$BPE/train.$TGT"; then
    skipped "align train"
else
    timed "align train" xlpe-align --source "$BPE/train.$SRC" --target "$BPE/train.$TGT" \
        --output "$BPE/train.align" --workers "$WORKERS" --verbose
fi

# 4. DPE reorder positions for training; valid/test need none (DPE takes no side input).
if fresh "$BPE/train.reorder" -- "$BPE/train.$SRC" "$BPE/train.$TGT" "$BPE/train.align"; then
    skipped "reorder train"
else
    timed "reorder train (dpe)" xlpe-reorder --method dpe --source "$BPE/train.$SRC" \
        --target "$BPE/train.$TGT" --alignment "$BPE/train.align" \
        --output "$BPE/train.reorder" --workers "$WORKERS"
fi

# 5. fairseq binarization. Separate dictionaries: Hebrew and English share no symbols, so a
#    joined dictionary would only enlarge both embedding tables and the output softmax.
bin_inputs=()
for split in "${SPLITS[@]}"; do
    bin_inputs+=("$BPE/$split.$SRC" "$BPE/$split.$TGT")
done
if fresh "$BIN/dict.$SRC.txt" "$BIN/dict.$TGT.txt" "$BIN/test.$SRC-$TGT.$TGT.idx" -- \
        "${bin_inputs[@]}"; then
    skipped fairseq-preprocess
else
    # fairseq-preprocess refuses to overwrite its dictionaries
    rm -f "$BIN/dict.$SRC.txt" "$BIN/dict.$TGT.txt"
    timed fairseq-preprocess fairseq-preprocess --source-lang "$SRC" --target-lang "$TGT" \
        --trainpref "$BPE/train" --validpref "$BPE/valid" --testpref "$BPE/test" \
        --destdir "$BIN" --workers "$WORKERS"
fi

reorder_bin=$BIN/train.reorder.$SRC-$TGT
if fresh "$reorder_bin.bin" "$reorder_bin.idx" -- "$BPE/train.reorder" "$BPE/train.$SRC"; then
    skipped "binarize train.reorder"
else
    timed "binarize train.reorder" xlpe-binarize --reorder "$BPE/train.reorder" \
        --source "$BPE/train.$SRC" --destdir "$BIN" --split train \
        --source-lang "$SRC" --target-lang "$TGT"
fi

echo "== done: $BIN (gold word alignments: $CORPUS/{valid,test}.gold.align)" >&2
