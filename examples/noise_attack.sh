#!/usr/bin/env bash
# The noise attack of XL PE (Ding et al. 2020, §4.5, Fig. 4): transformer_xlpe models trained
# with a ratio of their training tokens given a wrong reorder position by random swaps of two
# positions (--reorder-noise; drawn once per sentence), each translating the test split;
# xlpe-noise-curve then writes the BLEU table and plot.
#
#   examples/noise_attack.sh --data-bin DIR --reference REF [--tokenized-reference]
#       [--preorderer P.pt] [--source-lang he] [--target-lang en] [--updates N]
#       [--noises "0 0.05 0.1 0.15 0.2"] [--model-args "..."] [--work DIR] [--gpu]
#
# --data-bin     fairseq data-bin with train.reorder.{src}-{tgt}.{bin,idx} (xlpe-binarize)
# --reference    test references, one per line (e.g. corpus/test.en of prepare-bible-he-en.sh)
# --tokenized-reference  the reference is Moses-tokenized
# --preorderer   xlpe-preorder-train checkpoint; needed unless valid and test have reorder files
# --updates      training updates per model (default: the demo's, examples/demo_settings.sh)
# --noises       --reorder-noise values, one model each (default: the paper's 0 to 0.2)
# --model-args   fairseq-train options appended to the defaults below (later options win)
# --work         output folder (default work/noise_attack); a model with a finished
#                checkpoint is not trained again
# --gpu          train and decode on the GPU with --fp16
#
# Needs xlpe-fairseq's environment on PATH (fairseq-train, fairseq-generate), as `make demo`.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$HERE/data_prep/options.sh"
WORK=work/noise_attack
UPDATES=
NOISES="0 0.05 0.1 0.15 0.2"
SRC=he
TGT=en
DATA_BIN=
REFERENCE=
PREORDERER=
TOKENIZED_REFERENCE=()
MODEL_ARGS=
DEVICE_FLAGS=(--cpu)
# each value checked as it is read, an empty one too, before any work
while [[ $# -gt 0 ]]; do
    case $1 in
        --data-bin | --reference | --preorderer | --source-lang | --target-lang | --updates | \
                --noises | --model-args | --work)
            need_value "$1" $# || exit 2 ;;&
        --data-bin | --reference | --preorderer | --work)
            if [[ -z $2 ]]; then
                echo "$1 must name a file or folder, not ''" >&2
                exit 2
            fi ;;&
        --data-bin) DATA_BIN=$2; shift 2 ;;
        --reference) REFERENCE=$2; shift 2 ;;
        --tokenized-reference) TOKENIZED_REFERENCE=(--tokenized-reference); shift ;;
        --preorderer) PREORDERER=$2; shift 2 ;;
        --source-lang) check_language --source-lang "$2" || exit 2; SRC=$2; shift 2 ;;
        --target-lang) check_language --target-lang "$2" || exit 2; TGT=$2; shift 2 ;;
        --updates) check_whole --updates "$2" 1 || exit 2; UPDATES=$WHOLE; shift 2 ;;
        --noises)
            read -r -a noises <<<"$2"
            if ((${#noises[@]} == 0)); then
                echo "--noises must list at least one ratio, not '$2'" >&2
                exit 2
            fi
            for noise in "${noises[@]}"; do
                if ! check_number --noises "$noise" 2>/dev/null ||
                        ! awk -v v="$noise" 'BEGIN { exit !(v >= 0 && v <= 1) }'; then
                    echo "--noises must be ratios from 0 to 1, not '$noise'" >&2
                    exit 2
                fi
            done
            NOISES=$2
            shift 2 ;;
        --model-args) MODEL_ARGS=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --gpu) DEVICE_FLAGS=(--fp16); shift ;;
        -h | --help) show_help "$0" ;;
        *) echo "unknown option $1 (see $0 --help)" >&2; exit 2 ;;
    esac
done
source "$HERE/examples/demo_settings.sh"
UPDATES=${UPDATES:-$DEMO_UPDATES}
if [[ -z $DATA_BIN || -z $REFERENCE ]]; then
    echo "--data-bin and --reference are required (see $0 --help)" >&2
    exit 2
fi
for f in "$DATA_BIN/train.reorder.$SRC-$TGT.idx" "$REFERENCE" ${PREORDERER:+"$PREORDERER"}; do
    [[ -f $f ]] || { echo "$f: no such file" >&2; exit 2; }
done
export PYTHONWARNINGS=ignore
USER_DIR=$HERE/xlpe_fairseq
PREORDER_FLAGS=()
if [[ -n $PREORDERER ]]; then
    PREORDER_FLAGS=(--preorderer "$PREORDERER")
fi

# The demo's settings; InXL + HeadXL with tau = 1 of the 4 heads. Identical for every noise
# ratio.
demo_settings "$UPDATES"
COMMON=(
    --user-dir "$USER_DIR" --task translation_reorder --source-lang "$SRC" --target-lang "$TGT"
    --arch transformer_xlpe --xlpe-mode combination --xlpe-heads 1 "${DEMO_SETTINGS[@]}"
    "${PREORDER_FLAGS[@]}" "${DEVICE_FLAGS[@]}"
)

OUTPUTS=()
for noise in $NOISES; do
    out=$WORK/noise-$noise
    mkdir -p "$out"
    if [[ ! -f $out/checkpoints/checkpoint_last.pt ]]; then
        echo "== train transformer_xlpe with --reorder-noise $noise ($UPDATES updates)" >&2
        # shellcheck disable=SC2086  # $MODEL_ARGS is a list of options
        fairseq-train "$DATA_BIN" "${COMMON[@]}" --reorder-noise "$noise" $MODEL_ARGS \
            --save-dir "$out/checkpoints" >"$out/train.log" 2>&1 \
            || { tail -30 "$out/train.log" >&2; exit 1; }
    fi
    echo "== translate the test split (noise $noise)" >&2
    fairseq-generate "$DATA_BIN" --user-dir "$USER_DIR" --task translation_reorder \
        --source-lang "$SRC" --target-lang "$TGT" --gen-subset test \
        --path "$out/checkpoints/checkpoint_last.pt" --beam 5 --batch-size 100 \
        --required-batch-size-multiple 1 --remove-bpe --num-workers 0 \
        "${PREORDER_FLAGS[@]}" "${DEVICE_FLAGS[@]}" \
        >"$out/generate.out" 2>"$out/generate.log" || { tail -30 "$out/generate.log" >&2; exit 1; }
    OUTPUTS+=("$noise=$out/generate.out")
done

# python -m rather than the xlpe-noise-curve entry point: it works from a checkout whose
# console scripts were installed before the command existed
python -m xlpe_fairseq.evaluation.noise_attack --generate-outputs "${OUTPUTS[@]}" \
    --name "XL PE (combination)" --reference "$REFERENCE" --target-lang "$TGT" \
    "${TOKENIZED_REFERENCE[@]}" --output-dir "$WORK"
echo "== results: $WORK/noise_curve.md, $WORK/noise_curve.png" >&2
