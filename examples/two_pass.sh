#!/usr/bin/env bash
# The two-pass Transformer of Zheng et al. (2021, §3.1, Fig. 2, Table 2), the baseline DPE
# replaces: a reordering Transformer learns source -> target-ordered source (the training
# split's DPE reorder positions applied to its source, xlpe-reorder-text), a translation
# Transformer learns target-ordered source -> target; at test time the source goes through
# both. Both use the demo's settings (examples/demo_settings.sh) and fairseq's transformer.
#
#   examples/two_pass.sh [--data DIR] [--work DIR] [--updates N] [--src he] [--tgt en]
#       [--model-args "..."] [--gpu]
#
# --data      a prepare-*.sh OUTDIR: bpe/{train,test}.{src,tgt}, bpe/train.reorder,
#             data-bin/dict.{src,tgt}.txt, corpus/test.{tgt} (the Moses-tokenized reference)
#             (default work/demo/data, which is prepared if missing)
# --work      output folder (default work/demo/two-pass); its results: bleu.json and
#             generate.out (the second pass), reordered.test.{src} (the first pass)
# --updates   training updates per Transformer (default: the demo's)
# --model-args  fairseq-train options appended to the demo's (later options win)
# --gpu       train and decode on the GPU with --fp16
#
# Neither pass validates during training: only the training split has reorder positions.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$HERE/examples/demo_settings.sh"
DATA=work/demo/data
WORK=work/demo/two-pass
UPDATES=$DEMO_UPDATES
SRC=he
TGT=en
MODEL_ARGS=
DEVICE_FLAGS=(--cpu)
while [[ $# -gt 0 ]]; do
    case $1 in
        --data) DATA=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --updates) UPDATES=$2; shift 2 ;;
        --src) SRC=$2; shift 2 ;;
        --tgt) TGT=$2; shift 2 ;;
        --model-args) MODEL_ARGS=$2; shift 2 ;;
        --gpu) DEVICE_FLAGS=(--fp16); shift ;;
        *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 PYTHONWARNINGS=ignore
USER_DIR=$HERE/xlpe_fairseq
# the target-ordered source is a language of its own to fairseq, with the source dictionary
ORD=${SRC}ord

if [[ $DATA == work/demo/data && ! -f $DATA/bpe/train.reorder ]]; then
    bash "$HERE/data_prep/prepare-bible-he-en.sh" "$DATA"
fi
for f in "$DATA/bpe/train.$SRC" "$DATA/bpe/train.$TGT" "$DATA/bpe/train.reorder" \
         "$DATA/bpe/test.$SRC" "$DATA/data-bin/dict.$SRC.txt" "$DATA/data-bin/dict.$TGT.txt" \
         "$DATA/corpus/test.$TGT"; do
    [[ -f $f ]] || { echo "$f: no such file (see the header of $0)" >&2; exit 2; }
done

rm -rf "$WORK"
mkdir -p "$WORK/text"
TEXT=$WORK/text
ln -s "$(realpath "$DATA/bpe/train.$SRC")" "$TEXT/train.$SRC"
ln -s "$(realpath "$DATA/bpe/train.$TGT")" "$TEXT/train.$TGT"
xlpe-reorder-text --source "$DATA/bpe/train.$SRC" --reorder "$DATA/bpe/train.reorder" \
    --output "$TEXT/train.$ORD"

# binarize PAIR-SRC PAIR-TGT DESTDIR ARGS...: fairseq-preprocess with the data's dictionaries
binarize() {
    local src=$1 tgt=$2 dest=$3
    shift 3
    local dict_src=$DATA/data-bin/dict.${src/%ord/}.txt dict_tgt=$DATA/data-bin/dict.${tgt/%ord/}.txt
    fairseq-preprocess --source-lang "$src" --target-lang "$tgt" --srcdict "$dict_src" \
        --tgtdict "$dict_tgt" --destdir "$dest" --workers "$(nproc)" "$@" >"$dest.log" 2>&1 \
        || { tail -20 "$dest.log" >&2; exit 1; }
    # --only-source writes no target dictionary, which fairseq-generate still reads
    cp -n "$dict_tgt" "$dest/dict.$tgt.txt"
}

# train NAME DATA-BIN SRC TGT: fairseq's transformer with the demo's settings, no validation
train() {
    local name=$1 bin=$2 src=$3 tgt=$4
    echo "== train the $name Transformer ($src -> $tgt, $UPDATES updates)" >&2
    # shellcheck disable=SC2086  # $MODEL_ARGS is a list of options
    fairseq-train "$bin" --user-dir "$USER_DIR" --task translation_reorder --arch transformer \
        --source-lang "$src" --target-lang "$tgt" "${DEMO_SETTINGS[@]}" "${DEVICE_FLAGS[@]}" \
        --disable-validation $MODEL_ARGS --save-dir "$WORK/$name/checkpoints" >"$WORK/$name.train.log" 2>&1 \
        || { tail -30 "$WORK/$name.train.log" >&2; exit 1; }
}

# translate NAME DATA-BIN SRC TGT OUTPUT ARGS...: the test split through checkpoint_last.pt
translate() {
    local name=$1 bin=$2 src=$3 tgt=$4 output=$5
    shift 5
    fairseq-generate "$bin" --user-dir "$USER_DIR" --task translation_reorder \
        --source-lang "$src" --target-lang "$tgt" --gen-subset test \
        --path "$WORK/$name/checkpoints/checkpoint_last.pt" --beam 5 --batch-size 100 \
        --required-batch-size-multiple 1 --num-workers 0 "${DEVICE_FLAGS[@]}" "$@" \
        >"$output" 2>"$output.log" || { tail -30 "$output.log" >&2; exit 1; }
}

demo_settings "$UPDATES"
binarize "$SRC" "$ORD" "$WORK/bin-reordering" --trainpref "$TEXT/train"
binarize "$ORD" "$TGT" "$WORK/bin-translation" --trainpref "$TEXT/train"
start=$EPOCHREALTIME
train reordering "$WORK/bin-reordering" "$SRC" "$ORD"
train translation "$WORK/bin-translation" "$ORD" "$TGT"
awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.0f\n", e - s }' >"$WORK/train_seconds"
echo "$UPDATES" >"$WORK/updates"

echo "== first pass: reorder the test source" >&2
binarize "$SRC" "$ORD" "$WORK/bin-test-1" --only-source --testpref "$DATA/bpe/test"
translate reordering "$WORK/bin-test-1" "$SRC" "$ORD" "$WORK/reordering.generate.out"
# hypotheses in test order, BPE kept: they are the second pass's source
grep -P '^H-\d+\t' "$WORK/reordering.generate.out" | sed 's/^H-//' | sort -n -k1,1 \
    | cut -f3 >"$WORK/reordered.test.$SRC"
lines=$(wc -l <"$WORK/reordered.test.$SRC")
expected=$(wc -l <"$DATA/bpe/test.$SRC")
if [[ $lines != "$expected" ]]; then
    echo "first pass translated $lines of $expected test sentences" >&2
    exit 1
fi

echo "== second pass: translate the reordered test source" >&2
ln -s "$(realpath "$WORK/reordered.test.$SRC")" "$TEXT/test.$ORD"
binarize "$ORD" "$TGT" "$WORK/bin-test-2" --only-source --testpref "$TEXT/test"
translate translation "$WORK/bin-test-2" "$ORD" "$TGT" "$WORK/generate.out" --remove-bpe
xlpe-bleu --name two-pass --generate-output "$WORK/generate.out" \
    --reference "$DATA/corpus/test.$TGT" --target-lang "$TGT" --tokenized-reference \
    --json "$WORK/bleu.json"
