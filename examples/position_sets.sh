#!/usr/bin/env bash
# Position sets for `xlpe-study --positions NAME=DATA_BIN`: the pair's binarized text with other
# reorder positions, to test whether XL PE uses the positions it is given.
#
#   examples/position_sets.sh DATA_BIN BPE_DIR SRC TGT OUT
#
# DATA_BIN: a data-bin of the pair (its text and dictionaries are linked, not copied; its reorder
# files are not used). BPE_DIR: the recipe's bpe/ folder, with {train,valid,test}.SRC and the
# BTG oracle of each split's alignment, {split}.btg.reorder (xlpe-prepare writes them). Writes
#   OUT/oracle    the oracle in every split: its test row uses the test alignment, and so the
#                 reference: an upper bound, not a system;
#   OUT/monotone  every sentence in source order: XL PE with nothing reordered, the control;
# and, where the recipe ran the cross-fitted preorderer (XLPE_TRAIN_POSITIONS=predicted or mixed
# writes BPE_DIR/train.pred.reorder and train.mixed.reorder),
#   OUT/predicted train on the cross-fitted predictions, valid/test on the preorderer's
#                 ({split}.pred.reorder): trained on positions like those it is tested on;
#   OUT/mixed     train on the per-sentence mix of oracle and cross-fitted positions, valid/test
#                 on the preorderer's;
# and, with DPE_CHECKPOINT=PATH (a transformer_dpe checkpoint trained on this text),
#   OUT/dpe-network every split in the order that checkpoint's DPE network predicts
#                 (xlpe-dpe-order): DPE's learnt order read as a preorderer, so that XL PE
#                 can be tested on it (--test-positions dpe-network).
# Nothing under DATA_BIN or BPE_DIR is written; a set is built under a temporary name and then
# moved into place.
set -euo pipefail
source "$(dirname "$0")/../data_prep/options.sh"
for argument in "$@"; do
    [[ $argument != -h && $argument != --help ]] || show_help "$0"
done
if [[ $# -ne 5 ]]; then
    echo "usage: $0 DATA_BIN BPE_DIR SRC TGT OUT" >&2
    exit 2
fi
check_language SRC "$3" || exit 2
check_language TGT "$4" || exit 2
for operand in DATA_BIN:"$1" BPE_DIR:"$2" OUT:"$5"; do
    if [[ -z ${operand#*:} ]]; then
        echo "${operand%%:*} must name a folder, not ''" >&2
        exit 2
    fi
done
DATA_BIN=$(readlink -f "$1") BPE=$2 SRC=$3 TGT=$4 OUT=$5
SPLITS=(train valid test)
for split in "${SPLITS[@]}"; do
    for file in "$BPE/$split.$SRC" "$BPE/$split.btg.reorder" \
            "$DATA_BIN/$split.$SRC-$TGT.$SRC.idx" "$DATA_BIN/dict.$SRC.txt"; do
        if [[ ! -f $file ]]; then
            echo "$0: missing $file" >&2
            exit 1
        fi
    done
done
CROSS_FITTED=()
for set in predicted:train.pred.reorder mixed:train.mixed.reorder; do
    if [[ -f $BPE/${set#*:} ]]; then
        CROSS_FITTED+=("$set")
    fi
done
if ((${#CROSS_FITTED[@]})); then
    for split in valid test; do
        if [[ ! -f $BPE/$split.pred.reorder ]]; then
            echo "$0: missing $BPE/$split.pred.reorder (the preorderer's $split positions, for" \
                "the sets trained on cross-fitted positions)" >&2
            exit 1
        fi
    done
fi
if [[ -n ${DPE_CHECKPOINT:-} && ! -f $DPE_CHECKPOINT ]]; then
    echo "$0: DPE_CHECKPOINT $DPE_CHECKPOINT: no such file" >&2
    exit 1
fi
mkdir -p "$OUT"
PARTIAL=""  # the set being built, removed if the script stops before moving it into place
trap 'rm -rf "$PARTIAL"' EXIT

build_set() {  # NAME POSITIONS_OF_SPLIT_COMMAND
    local name=$1 make_positions=$2 tmp="$OUT/$1.part" split file
    PARTIAL=$tmp
    rm -rf "$tmp"
    mkdir "$tmp"
    for file in "$DATA_BIN"/dict.*.txt "$DATA_BIN"/*."$SRC-$TGT".{"$SRC","$TGT"}.{bin,idx}; do
        ln -s "$file" "$tmp/"
    done
    for split in "${SPLITS[@]}"; do
        "$make_positions" "$split" > "$tmp/$split.reorder.txt"
        xlpe-binarize --reorder "$tmp/$split.reorder.txt" --source "$BPE/$split.$SRC" \
            --destdir "$tmp" --split "$split" --source-lang "$SRC" --target-lang "$TGT"
    done
    rm "$tmp"/*.reorder.txt
    rm -rf "$OUT/$name"
    mv "$tmp" "$OUT/$name"
    echo "== $OUT/$name" >&2
}
oracle_positions() { cat "$BPE/$1.btg.reorder"; }
monotone_positions() {
    awk '{ line = ""; for (i = 0; i < NF; i++) line = line (i ? " " : "") i; print line }' \
        "$BPE/$1.$SRC"
}
build_set oracle oracle_positions
build_set monotone monotone_positions
cross_fitted_positions() {  # SPLIT: $TRAIN_POSITIONS for train, the preorderer's elsewhere
    if [[ $1 == train ]]; then cat "$TRAIN_POSITIONS"; else cat "$BPE/$1.pred.reorder"; fi
}
for set in "${CROSS_FITTED[@]}"; do
    TRAIN_POSITIONS=$BPE/${set#*:}
    build_set "${set%%:*}" cross_fitted_positions
done
dpe_network_positions() {  # SPLIT: the DPE network's order, via a file in the set being built
    local file="$PARTIAL/$1.dpe-network.reorder"
    xlpe-dpe-order --checkpoint "$DPE_CHECKPOINT" --data-bin "$DATA_BIN" --split "$1" \
        --output "$file" >&2
    cat "$file"
    rm "$file"
}
if [[ -n ${DPE_CHECKPOINT:-} ]]; then
    build_set dpe-network dpe_network_positions
fi
