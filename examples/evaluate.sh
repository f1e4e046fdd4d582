#!/usr/bin/env bash
# Evaluate a model trained by examples/train.sh or a train-*.sh script the way its paper
# did: the checkpoint (the last N averaged with xlpe-average-checkpoints, or the best on dev),
# beam and length penalty of its schedule; translate the test split with fairseq-generate
# and print detokenized sacreBLEU with its signature (xlpe-bleu; its tokenizer by the target
# language: zh, ja-mecab, ko-mecab, else 13a; Chinese and Japanese written without the
# segmenter's spaces first).
#
#   examples/evaluate.sh DATA SAVE_DIR [--model M] [--schedule S] [--average N] [--beam K]
#                        [--lenpen A] [--subset test|valid] [--preorderer-nbest N]
#                        [--tokenize T] [--cpu] [--dry-run]
#
# DATA is the recipe's OUTDIR (data_prep/prepare-corpus.sh's OUT or another recipe's; its
# recipe.env names the languages and whether text was lowercased; the reference scored is
# OUT/reference/SUBSET.TGT, copied when OUT was prepared, and every file read must be as
# OUT/provenance.json recorded it, the checkpoint trained on OUT's data: docs/input-rules.md),
# SAVE_DIR the training's checkpoint folder, M the trained model (it picks the data-bin
# variant: xlpe and xlpe-* read the preorderer's test positions; default: the model
# examples/train.sh trained there, from SAVE_DIR/schedule.env; required for other folders).
# The schedule is the one the training used (SAVE_DIR/schedule.env, written by
# train_common.sh), or --schedule:
#   dpe-iwslt, dpe  the last 5 checkpoints averaged, beam 5 (lenpen 1.0; dpe: 0.6, the
#                   authors' command)
#   re              checkpoint_best.pt (the best dev BLEU), beam 4
#   xlpe            the last 20 checkpoints averaged, beam 4, lenpen 0.6 (Transformer big)
# A folder with fewer numbered checkpoints than the schedule averages (a short training)
# averages those it has, or takes checkpoint_best.pt if it has fewer than 2, and says so.
# --average N (0: checkpoint_best.pt), --beam K and --lenpen A override the schedule's;
# --subset (default test) the split. XL PE models (xlpe, xlpe-*, encoder-free-inxl) decode
# each sentence with each of DATA/preorderer.pt's N best reorderings and keep the
# best-scoring translation (fairseq-generate --preorderer-nbest; default N = 4, which gained
# 0.05-0.32 BLEU over the best reordering alone on En->Tr, Tr->En and Ko->En at 3-4 times the
# decoding time, docs/preorderer.md; 1: the data-bin's test positions, one decode).
# --tokenize T, sacreBLEU's tokenizer for BLEU
# (xlpe-bleu --tokenize); --cpu decodes on the CPU. --dry-run prints the commands of a
# complete training instead of running them. Options go before or after the operands (or
# after --, operands only). Every value (and the test split's data, the reference and the
# BLEU tokenizer) is checked before any work starts: a bad one is one line, exit status 2.
#
# SAVE_DIR receives generate-SUBSET.out (fairseq-generate's output, only when complete) and .log,
# hypotheses-SUBSET.TGT (the detokenized translations as scored, one a line), bleu-SUBSET.json
# (the scores), provenance-SUBSET.json (what they were made from, written last), and
# checkpoint_avgN.pt where it averages; an earlier run's outputs of the split are removed first.
set -euo pipefail

source "$(dirname "$0")/train_common.sh"

usage() {
    echo "usage: $0 DATA SAVE_DIR [--model M] [--schedule S] [--average N] [--beam K] [--lenpen A] [--subset S] [--preorderer-nbest N] [--tokenize T] [--cpu] [--dry-run]" >&2
    exit 2
}
ORIGINAL_ARGUMENTS=("$@")
MODEL=""
SCHEDULE_OPTION=""
AVERAGE_OPTION=""
BEAM_OPTION=""
LENPEN_OPTION=""
SUBSET=test
NBEST_OPTION=""
TOKENIZE=()
DEVICE=()
DRY_RUN=0
OPERANDS=()
# each value checked as it is read, an empty one too, before any work: one line, status 2
# shellcheck disable=SC2086 # SCHEDULES and MODELS are lists of words
while [[ $# -gt 0 ]]; do
    case $1 in
        --model | --schedule | --average | --beam | --lenpen | --subset | --tokenize | \
            --preorderer-nbest)
            need_value "$1" $# || exit 2 ;;&
        --model) check_choice --model "$2" $MODELS || exit 2; MODEL=$2; shift 2 ;;
        --schedule)
            check_choice --schedule "$2" $SCHEDULES || exit 2
            SCHEDULE_OPTION=$2
            shift 2 ;;
        --average) check_whole --average "$2" 0 || exit 2; AVERAGE_OPTION=$WHOLE; shift 2 ;;
        --beam) check_whole --beam "$2" 1 || exit 2; BEAM_OPTION=$WHOLE; shift 2 ;;
        --lenpen) check_number --lenpen "$2" || exit 2; LENPEN_OPTION=$2; shift 2 ;;
        --subset) check_choice --subset "$2" test valid || exit 2; SUBSET=$2; shift 2 ;;
        --preorderer-nbest)
            check_whole --preorderer-nbest "$2" 1 999 || exit 2
            NBEST_OPTION=$WHOLE
            shift 2 ;;
        --tokenize) TOKENIZE=(--tokenize "$2"); shift 2 ;;
        --cpu) DEVICE=(--cpu); shift ;;
        --dry-run) DRY_RUN=1; shift ;;
        -h | --help) show_help "$0" ;;
        --) shift; OPERANDS+=("$@"); break ;;
        -*) echo "unknown option $1 (--help lists them)" >&2; exit 2 ;;
        *) OPERANDS+=("$1"); shift ;;
    esac
done
[[ ${#OPERANDS[@]} -eq 2 ]] || usage
DATA=${OPERANDS[0]}
SAVE_DIR=${OPERANDS[1]}
# a folder named like an option (after --) is passed on as ./-NAME, which no command parses
[[ $DATA != -* ]] || DATA=./$DATA
[[ $SAVE_DIR != -* ]] || SAVE_DIR=./$SAVE_DIR
# an empty name (an unset variable) or a system folder is refused before it is read
if ((!DRY_RUN)); then
    xlpe-provenance folder --prog evaluate.sh --what "the corpus (OUT)" -- "$DATA" >/dev/null &&
        xlpe-provenance folder --prog evaluate.sh --what "the checkpoints (SAVE_DIR)" -- \
            "$SAVE_DIR" >/dev/null || exit 1
fi
if [[ ! -e $DATA/recipe.env ]]; then
    echo "$DATA/recipe.env: no such file; is $DATA a data_prep recipe's OUTDIR?" >&2
    exit 1
fi
source "$DATA/recipe.env"
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1
# sacreBLEU's tokenizer, --tokenize's or the target language's, with what it needs installed:
# checked now, not after decoding
python - "$TGT" "${TOKENIZE[@]:1}" <<'EOF'
import sys

import sacrebleu

from xlpe_fairseq.evaluation.bleu import bleu_tokenizer
from xlpe_fairseq.io import run_command

names = list(sacrebleu.metrics.BLEU.TOKENIZERS)
if sys.argv[2:] and sys.argv[2] not in names:
    print(f"--tokenize must be one of: {' '.join(names)}, not '{sys.argv[2]}'", file=sys.stderr)
    sys.exit(2)
run_command(lambda: bleu_tokenizer(*sys.argv[1:]), "evaluate.sh")
EOF

# SCHEDULE and, from examples/train.sh, TRAINED_MODEL: how SAVE_DIR was trained
SCHEDULE="" TRAINED_MODEL=""
[[ ! -f $SAVE_DIR/schedule.env ]] || source "$SAVE_DIR/schedule.env"
SCHEDULE=${SCHEDULE_OPTION:-$SCHEDULE}
if [[ -z $SCHEDULE ]]; then
    echo "$SAVE_DIR/schedule.env: no such file (train-*.sh writes it); pass --schedule," \
        "one of: $SCHEDULES" >&2
    exit 2
fi
MODEL=${MODEL:-$TRAINED_MODEL}
if [[ -z $MODEL ]]; then
    echo "--model is required: $SAVE_DIR/schedule.env does not name it" >&2
    exit 2
fi
if [[ -n $TRAINED_MODEL && $MODEL != "$TRAINED_MODEL" ]]; then
    echo "$SAVE_DIR holds a $TRAINED_MODEL model (examples/train.sh $TRAINED_MODEL), not" \
        "$MODEL: pass --model $TRAINED_MODEL" >&2
    exit 2
fi
BIN=$(model_data_bin "$MODEL")
# XL PE's test positions: the preorderer's N best reorderings, else the data-bin's (the best)
NBEST=()
if [[ $BIN == */xlpe ]]; then
    PREORDERER_NBEST=${NBEST_OPTION:-4}
    if ((PREORDERER_NBEST > 1)); then
        if [[ ! -f $DATA/preorderer.pt ]] && ((!DRY_RUN)); then
            echo "$DATA/preorderer.pt: no such file; --preorderer-nbest $PREORDERER_NBEST" \
                "chooses among its reorderings (--preorderer-nbest 1 decodes the data-bin's" \
                "test positions)" >&2
            exit 1
        fi
        NBEST=(--preorderer "$DATA/preorderer.pt" --preorderer-nbest "$PREORDERER_NBEST")
    fi
elif [[ -n $NBEST_OPTION ]]; then
    echo "--preorderer-nbest is for XL PE models (xlpe, xlpe-*, encoder-free-inxl), not $MODEL" >&2
    exit 2
fi
set_schedule "$SCHEDULE" base
AVERAGE=${AVERAGE_OPTION:-$AVERAGE}
BEAM=${BEAM_OPTION:-$BEAM}
LENPEN=${LENPEN_OPTION:-$LENPEN}
# the reference as prepared (OUT/reference, in OUT's record), not the raw folder as it is now;
# lowercased data (IWSLT): the lowercased tokenized text, detokenized
REFERENCE=$DATA/reference/$SUBSET.$TGT
REFERENCE_FLAGS=()
((!LOWERCASE)) || REFERENCE_FLAGS=(--tokenized-reference)
# what decoding and scoring will read, before the checkpoints are averaged
if ((!DRY_RUN)); then
    if [[ ! -d $SAVE_DIR ]]; then
        echo "$SAVE_DIR: no such folder; the checkpoint folder of examples/train.sh" >&2
        exit 1
    fi
    for file in "$BIN/$SUBSET.$SRC-$TGT.$SRC.idx" "$REFERENCE"; do
        if [[ ! -f $file ]]; then
            echo "$file: no such file; has the data_prep recipe made the $SUBSET split of" \
                "$DATA?" >&2
            exit 1
        fi
    done
fi

# run COMMAND...: run it, or print it under --dry-run
run() {
    if ((DRY_RUN)); then
        printf '%q ' "$@"
        echo
    else
        "$@"
    fi
}

# a short training saves fewer numbered checkpoints than its schedule averages: those it has
# (update checkpoints, else epoch ones, as xlpe-average-checkpoints picks them)
if ((AVERAGE > 0 && !DRY_RUN)); then
    SAVED=$(find "$SAVE_DIR" -maxdepth 1 -regextype egrep \
        -regex '.*/checkpoint_[0-9]+_[0-9]+\.pt' | wc -l)
    ((SAVED)) || SAVED=$(find "$SAVE_DIR" -maxdepth 1 -regextype egrep \
        -regex '.*/checkpoint[0-9]+\.pt' | wc -l)
    if ((SAVED < AVERAGE)); then
        if [[ -n $AVERAGE_OPTION ]]; then
            echo "$SAVE_DIR: $SAVED numbered checkpoints, --average $AVERAGE wanted: pass" \
                "--average $SAVED, or --average 0 for checkpoint_best.pt" >&2
            exit 1
        fi
        instead="averaging those $SAVED"
        ((SAVED >= 2)) || instead="checkpoint_best.pt instead"
        echo "evaluate.sh: $SAVE_DIR holds $SAVED numbered checkpoints, not the $AVERAGE the" \
            "schedule averages: $instead (--average N chooses; 0: checkpoint_best.pt)" >&2
        ((SAVED >= 2)) && AVERAGE=$SAVED || AVERAGE=0
    fi
fi
if ((!DRY_RUN)); then
    # the first write: OUT read while no preparation rewrites it, SAVE_DIR written by one run
    # at a time; then OUT as its record has it, and this run's outputs only (a failure leaves
    # no earlier run's scores beside its report)
    claim_folder evaluate.sh read "$DATA" "the corpus (OUT)"
    claim_folder evaluate.sh write "$SAVE_DIR" "the checkpoints (SAVE_DIR)"
    xlpe-provenance verify-corpus --prog evaluate.sh "$DATA" --data-bin "${BIN##*/}" \
        --reference "$SUBSET" || exit 1
    rm -f -- "$SAVE_DIR/generate-$SUBSET.out" "$SAVE_DIR/hypotheses-$SUBSET.$TGT" \
        "$SAVE_DIR/bleu-$SUBSET.json" "$SAVE_DIR/provenance-$SUBSET.json"
fi
if ((AVERAGE > 0)); then
    CHECKPOINT=$SAVE_DIR/checkpoint_avg$AVERAGE.pt
    run xlpe-average-checkpoints --checkpoint-dir "$SAVE_DIR" --num "$AVERAGE" \
        --output "$CHECKPOINT"
else
    CHECKPOINT=$SAVE_DIR/checkpoint_best.pt
    if [[ ! -f $CHECKPOINT ]] && ((!DRY_RUN)); then
        echo "$CHECKPOINT: no such file; has the training in $SAVE_DIR saved a checkpoint?" >&2
        exit 1
    fi
fi
# trained on this corpus's data-bin as it is now (tasks/data_provenance.py records it)
((DRY_RUN)) || xlpe-provenance verify-checkpoint --prog evaluate.sh "$CHECKPOINT" \
    --corpus "$DATA" || exit 1
POSITIONS=""
((${#NBEST[@]})) && POSITIONS=", the preorderer's $PREORDERER_NBEST best reorderings"
echo "schedule $SCHEDULE: $(basename "$CHECKPOINT"), beam $BEAM, lenpen $LENPEN$POSITIONS" >&2

OUTPUT=$SAVE_DIR/generate-$SUBSET.out
# --required-batch-size-multiple 1: fairseq-generate drops the last sentences otherwise
GENERATE=(
    fairseq-generate "$BIN" --user-dir "$USER_DIR" --task translation_reorder
    --source-lang "$SRC" --target-lang "$TGT" --gen-subset "$SUBSET" --path "$CHECKPOINT"
    --beam "$BEAM" --lenpen "$LENPEN" --batch-size 128 --required-batch-size-multiple 1
    --remove-bpe "${NBEST[@]}" "${DEVICE[@]}"
)
if ((DRY_RUN)); then
    run "${GENERATE[@]}"
    exit 0
fi
LOG=$SAVE_DIR/generate-$SUBSET.log
# written under a hidden name and renamed when complete: a failed run leaves no partial output
PARTIAL=$(mktemp "$SAVE_DIR/.generate-$SUBSET.out.$$.XXXXXX")
trap 'rm -f "$PARTIAL"' EXIT
if ! "${GENERATE[@]}" >"$PARTIAL" 2>"$LOG"; then
    # the plugin's own errors are one line that says what to do (the log holds nothing more);
    # else fairseq's last lines, the whole report kept in the log
    if grep -m 1 '^fairseq-generate: error: ' "$LOG" >&2; then
        rm -f "$LOG"
    else
        tail -20 "$LOG" >&2
        echo "evaluate.sh: fairseq-generate failed; its whole report: $LOG" >&2
    fi
    exit 1
fi
chmod "$(printf '%o' $((0666 & ~$(umask))))" "$PARTIAL"  # mktemp's file is private
mv "$PARTIAL" "$OUTPUT"
HYPOTHESES=$SAVE_DIR/hypotheses-$SUBSET.$TGT

NAME="$(basename "$DATA") $MODEL ($(basename "$CHECKPOINT"), $SUBSET)"
xlpe-bleu --name "$NAME" --generate-output "$OUTPUT" --reference "$REFERENCE" \
    --target-lang "$TGT" "${REFERENCE_FLAGS[@]}" --json "$SAVE_DIR/bleu-$SUBSET.json" \
    --detokenized-output "$HYPOTHESES" "${TOKENIZE[@]}"
# what the scores were made from, written last
xlpe-provenance evaluation --prog evaluate.sh "$SAVE_DIR" --subset "$SUBSET" \
    --checkpoint "$CHECKPOINT" --data-bin "$BIN" --corpus "$DATA" --reference "$REFERENCE" \
    --output "$OUTPUT" --output "$HYPOTHESES" --output "$SAVE_DIR/bleu-$SUBSET.json" \
    --option "model=$MODEL" --option "schedule=$SCHEDULE" --option "average=$AVERAGE" \
    --option "beam=$BEAM" --option "lenpen=$LENPEN" \
    --option "preorderer_nbest=${PREORDERER_NBEST:-}" -- "$0" "${ORIGINAL_ARGUMENTS[@]}"
echo "evaluate.sh: translations in $HYPOTHESES (fairseq's output: $OUTPUT), scores in" \
    "$SAVE_DIR/bleu-$SUBSET.json (what they were made from: $SAVE_DIR/provenance-$SUBSET.json)" >&2
