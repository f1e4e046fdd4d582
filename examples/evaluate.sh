#!/usr/bin/env bash
# Evaluate a model trained by an examples/train-*.sh script: average the last N checkpoints
# (xlpe-average-checkpoints; DPE §4.2 averages 5), translate the test split with fairseq-generate,
# and print detokenized sacreBLEU with its signature (xlpe-bleu; Chinese targets: sacreBLEU's
# zh tokenizer on the unsegmented text).
#
#   examples/evaluate.sh DATA SAVE_DIR --model M [--average N] [--beam K] [--lenpen A]
#                        [--subset test|valid] [--cpu]
#
# DATA is the recipe's OUTDIR (its recipe.env names the languages, the raw references and
# whether text was lowercased), SAVE_DIR the training --save-dir, M the trained model (it
# picks the data-bin variant: xlpe reads the preorderer's test positions). --average 0 uses
# checkpoint_best.pt. Defaults: --average 5, --beam 5 (DPE; the RE paper decoded with 4),
# --lenpen 1.0 (fairseq's).
set -euo pipefail

usage() {
    echo "usage: $0 DATA SAVE_DIR --model M [--average N] [--beam K] [--lenpen A] [--subset S] [--cpu]" >&2
    exit 2
}
[[ $# -ge 2 ]] || usage
DATA=$1
SAVE_DIR=$2
shift 2
MODEL=""
AVERAGE=5
BEAM=5
LENPEN=1.0
SUBSET=test
DEVICE=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --model) MODEL=$2; shift 2 ;;
        --average) AVERAGE=$2; shift 2 ;;
        --beam) BEAM=$2; shift 2 ;;
        --lenpen) LENPEN=$2; shift 2 ;;
        --subset) SUBSET=$2; shift 2 ;;
        --cpu) DEVICE=(--cpu); shift ;;
        *) usage ;;
    esac
done
[[ -n $MODEL ]] || usage
if [[ ! -e $DATA/recipe.env ]]; then
    echo "$DATA/recipe.env: no such file; is $DATA a data_prep recipe's OUTDIR?" >&2
    exit 1
fi
source "$DATA/recipe.env"
source "$(dirname "$0")/train_common.sh"
BIN=$(model_data_bin "$MODEL")
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1

if ((AVERAGE > 0)); then
    CHECKPOINT=$SAVE_DIR/checkpoint_avg$AVERAGE.pt
    xlpe-average-checkpoints --checkpoint-dir "$SAVE_DIR" --num "$AVERAGE" --output "$CHECKPOINT"
else
    CHECKPOINT=$SAVE_DIR/checkpoint_best.pt
fi

OUTPUT=$SAVE_DIR/generate-$SUBSET.out
# --required-batch-size-multiple 1: fairseq-generate drops the last sentences otherwise
fairseq-generate "$BIN" --user-dir "$USER_DIR" --task translation_reorder \
    --source-lang "$SRC" --target-lang "$TGT" --gen-subset "$SUBSET" --path "$CHECKPOINT" \
    --beam "$BEAM" --lenpen "$LENPEN" --batch-size 128 --required-batch-size-multiple 1 \
    --remove-bpe "${DEVICE[@]}" >"$OUTPUT" 2>"$SAVE_DIR/generate-$SUBSET.log" ||
    { tail -20 "$SAVE_DIR/generate-$SUBSET.log" >&2; exit 1; }

NAME="$(basename "$DATA") $MODEL ($(basename "$CHECKPOINT"), $SUBSET)"
if [[ $TGT == zh ]]; then
    # hypotheses are jieba words: join them back where a Chinese character meets a space,
    # and score against the raw reference with sacreBLEU's zh tokenizer
    python - "$OUTPUT" "$RAW/$SUBSET.zh" "$SAVE_DIR/hypotheses-$SUBSET.zh" <<'PY'
import re
import sys

from xlpe_fairseq.evaluation.generate_output import read_hypotheses

generate_output, reference, hypotheses = sys.argv[1:]
with open(reference, encoding="utf-8") as f:
    count = sum(1 for _ in f)
cjk = r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]"
space_at_cjk = re.compile(rf"(?<={cjk}) +| +(?={cjk})")
with open(hypotheses, "w", encoding="utf-8") as out:
    for line in read_hypotheses(generate_output, count):
        out.write(space_at_cjk.sub("", line) + "\n")
PY
    echo "$NAME:"
    sacrebleu "$RAW/$SUBSET.zh" -i "$SAVE_DIR/hypotheses-$SUBSET.zh" -tok zh -m bleu chrf
elif ((LOWERCASE)); then
    # lowercased data (IWSLT): the reference is the lowercased tokenized text, detokenized
    xlpe-bleu --name "$NAME" --generate-output "$OUTPUT" --reference "$DATA/tok/$SUBSET.$TGT" \
        --target-lang "$TGT" --tokenized-reference --json "$SAVE_DIR/bleu-$SUBSET.json"
else
    xlpe-bleu --name "$NAME" --generate-output "$OUTPUT" --reference "$RAW/$SUBSET.$TGT" \
        --target-lang "$TGT" --json "$SAVE_DIR/bleu-$SUBSET.json"
fi
