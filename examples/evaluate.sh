#!/usr/bin/env bash
# Evaluate a model trained by examples/train.sh or a train-*.sh script the way its paper
# did: the checkpoint (the last N averaged with xlpe-average-checkpoints, or the best on dev),
# beam and length penalty of its schedule; translate the test split with fairseq-generate
# and print detokenized sacreBLEU with its signature (xlpe-bleu; its tokenizer by the target
# language: zh, ja-mecab, ko-mecab, else 13a; Chinese and Japanese words joined again first).
#
#   examples/evaluate.sh DATA SAVE_DIR --model M [--schedule S] [--average N] [--beam K]
#                        [--lenpen A] [--subset test|valid] [--tokenize T] [--cpu] [--dry-run]
#
# DATA is the recipe's OUTDIR (data_prep/prepare-corpus.sh's OUT or another recipe's; its
# recipe.env names the languages, the raw references and whether text was lowercased),
# SAVE_DIR the training's checkpoint folder, M the trained model (it picks the data-bin
# variant: xlpe and xlpe-* read the preorderer's test positions). The schedule is the
# one the training used (SAVE_DIR/schedule.env, written by train_common.sh), or --schedule:
#   dpe-iwslt, dpe  the last 5 checkpoints averaged, beam 5 (lenpen 1.0; dpe: 0.6, the
#                   authors' command)
#   re              checkpoint_best.pt (the best dev BLEU), beam 4
#   xlpe            the last 20 checkpoints averaged, beam 4, lenpen 0.6 (Transformer big)
# --average N (0: checkpoint_best.pt), --beam K and --lenpen A override the schedule's;
# --tokenize T, sacreBLEU's tokenizer for BLEU (xlpe-bleu --tokenize).
# --dry-run prints the commands instead of running them. Options go before or after the
# operands.
set -euo pipefail

usage() {
    echo "usage: $0 DATA SAVE_DIR --model M [--schedule S] [--average N] [--beam K] [--lenpen A] [--subset S] [--tokenize T] [--cpu] [--dry-run]" >&2
    exit 2
}
MODEL=""
SCHEDULE_OPTION=""
AVERAGE_OPTION=""
BEAM_OPTION=""
LENPEN_OPTION=""
SUBSET=test
TOKENIZE=()
DEVICE=()
DRY_RUN=0
OPERANDS=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --model | --schedule | --average | --beam | --lenpen | --subset | --tokenize)
            [[ $# -ge 2 ]] || { echo "$1 needs a value" >&2; usage; } ;;&
        --model) MODEL=$2; shift 2 ;;
        --schedule) SCHEDULE_OPTION=$2; shift 2 ;;
        --average) AVERAGE_OPTION=$2; shift 2 ;;
        --beam) BEAM_OPTION=$2; shift 2 ;;
        --lenpen) LENPEN_OPTION=$2; shift 2 ;;
        --subset) SUBSET=$2; shift 2 ;;
        --tokenize) TOKENIZE=(--tokenize "$2"); shift 2 ;;
        --cpu) DEVICE=(--cpu); shift ;;
        --dry-run) DRY_RUN=1; shift ;;
        -*) echo "unknown option $1" >&2; usage ;;
        *) OPERANDS+=("$1"); shift ;;
    esac
done
[[ ${#OPERANDS[@]} -eq 2 ]] || usage
DATA=${OPERANDS[0]}
SAVE_DIR=${OPERANDS[1]}
[[ -n $MODEL ]] || { echo "--model is required" >&2; usage; }
if [[ ! -e $DATA/recipe.env ]]; then
    echo "$DATA/recipe.env: no such file; is $DATA a data_prep recipe's OUTDIR?" >&2
    exit 1
fi
source "$DATA/recipe.env"
source "$(dirname "$0")/train_common.sh"
BIN=$(model_data_bin "$MODEL")
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1

SCHEDULE=""
if [[ -n $SCHEDULE_OPTION ]]; then
    SCHEDULE=$SCHEDULE_OPTION
elif [[ -f $SAVE_DIR/schedule.env ]]; then
    source "$SAVE_DIR/schedule.env"
else
    echo "$SAVE_DIR/schedule.env: no such file (train-*.sh writes it); pass --schedule," \
        "one of: $SCHEDULES" >&2
    exit 2
fi
set_schedule "$SCHEDULE" base
AVERAGE=${AVERAGE_OPTION:-$AVERAGE}
BEAM=${BEAM_OPTION:-$BEAM}
LENPEN=${LENPEN_OPTION:-$LENPEN}

# run COMMAND...: run it, or print it under --dry-run
run() {
    if ((DRY_RUN)); then
        printf '%q ' "$@"
        echo
    else
        "$@"
    fi
}

if ((AVERAGE > 0)); then
    CHECKPOINT=$SAVE_DIR/checkpoint_avg$AVERAGE.pt
    run xlpe-average-checkpoints --checkpoint-dir "$SAVE_DIR" --num "$AVERAGE" \
        --output "$CHECKPOINT"
else
    CHECKPOINT=$SAVE_DIR/checkpoint_best.pt
fi
echo "schedule $SCHEDULE: $(basename "$CHECKPOINT"), beam $BEAM, lenpen $LENPEN" >&2

OUTPUT=$SAVE_DIR/generate-$SUBSET.out
# --required-batch-size-multiple 1: fairseq-generate drops the last sentences otherwise
GENERATE=(
    fairseq-generate "$BIN" --user-dir "$USER_DIR" --task translation_reorder
    --source-lang "$SRC" --target-lang "$TGT" --gen-subset "$SUBSET" --path "$CHECKPOINT"
    --beam "$BEAM" --lenpen "$LENPEN" --batch-size 128 --required-batch-size-multiple 1
    --remove-bpe "${DEVICE[@]}"
)
if ((DRY_RUN)); then
    run "${GENERATE[@]}"
    exit 0
fi
"${GENERATE[@]}" >"$OUTPUT" 2>"$SAVE_DIR/generate-$SUBSET.log" ||
    { tail -20 "$SAVE_DIR/generate-$SUBSET.log" >&2; exit 1; }

NAME="$(basename "$DATA") $MODEL ($(basename "$CHECKPOINT"), $SUBSET)"
if ((LOWERCASE)); then
    # lowercased data (IWSLT): the reference is the lowercased tokenized text, detokenized
    xlpe-bleu --name "$NAME" --generate-output "$OUTPUT" --reference "$DATA/tok/$SUBSET.$TGT" \
        --target-lang "$TGT" --tokenized-reference --json "$SAVE_DIR/bleu-$SUBSET.json" \
        "${TOKENIZE[@]}"
else
    xlpe-bleu --name "$NAME" --generate-output "$OUTPUT" --reference "$RAW/$SUBSET.$TGT" \
        --target-lang "$TGT" --json "$SAVE_DIR/bleu-$SUBSET.json" "${TOKENIZE[@]}"
fi
