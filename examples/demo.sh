#!/usr/bin/env bash
# The README's demo (`make demo`): real Hebrew->English data from PyPI, prepared by the
# plugin's own pipeline; fairseq's `transformer` and the plugin's models trained with
# identical small settings; the whole test split translated; detokenized sacreBLEU for each.
#
#   examples/demo.sh [--updates N] [--models "transformer dpe ..."] [--work DIR] [--gpu]
#
# --updates   training updates per model (default 500 on CPU: about four minutes each on 2 cores)
# --models    any of: transformer dpe re-encoder re-decoder re-both xlpe-inxl xlpe-headxl
#             xlpe-combination (default "transformer dpe"); the xlpe-* models read
#             DIR/data/data-bin-xlpe (BTG oracle positions for train, preorderer ones for
#             valid/test), which is prepared only when one of them is asked for;
#             XLPE_TRAIN_POSITIONS=predicted in the environment trains them on the
#             preorderer's positions instead (see data_prep/prepare-bible-he-en.sh)
# --work      output folder (default work/demo); data preparation is reused on rerun
# --gpu       train and decode on the GPU with --fp16 (use with a larger --updates)
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=work/demo
UPDATES=500
MODELS="transformer dpe"
DEVICE_FLAGS=(--cpu)
while [[ $# -gt 0 ]]; do
    case $1 in
        --updates) UPDATES=$2; shift 2 ;;
        --models) MODELS=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --gpu) DEVICE_FLAGS=(--fp16); shift ;;
        *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 PYTHONWARNINGS=ignore
USER_DIR=$HERE/xlpe_fairseq
DATA=$WORK/data
BIN=$DATA/data-bin

XLPE_BIN=$DATA/data-bin-xlpe
PREORDER_SCORE=$DATA/preorderer.test-score.txt
XLPE=0
for model in $MODELS; do
    if [[ $model == xlpe-* ]]; then
        XLPE=1
    fi
done

XLPE=$XLPE bash "$HERE/data_prep/prepare-bible-he-en.sh" "$DATA"

# Identical for every model: half the width of the DPE paper's IWSLT models (§4.2: 256/1024,
# 2+2 layers), twice as fast on 2 CPU cores, which buys the demo twice the updates.
COMMON=(
    --user-dir "$USER_DIR" --task translation_reorder --source-lang he --target-lang en
    --encoder-embed-dim 128 --encoder-ffn-embed-dim 512 --encoder-layers 2 --encoder-attention-heads 4
    --decoder-embed-dim 128 --decoder-ffn-embed-dim 512 --decoder-layers 2 --decoder-attention-heads 4
    --share-decoder-input-output-embed --dropout 0.2
    --criterion label_smoothed_cross_entropy_with_order --label-smoothing 0.1
    --optimizer adam --adam-betas "(0.9, 0.98)" --lr 0.002 --lr-scheduler inverse_sqrt
    --warmup-updates 200 --max-tokens 4096 --max-update "$UPDATES" --seed 1
    --no-epoch-checkpoints --log-format simple --log-interval 50 --num-workers 0
    "${DEVICE_FLAGS[@]}"
)

model_flags() {
    case $1 in
        transformer) echo --arch transformer ;;
        dpe) echo --arch transformer_dpe --order-lambda 0.5 ;;
        re-encoder|re-decoder|re-both) echo --arch transformer_reorder_emb --reorder-emb "${1#re-}" ;;
        # tau = 1 of the 4 heads: the paper's best share, 4 of 16 (Ding et al. 2020, Fig. 3)
        xlpe-inxl|xlpe-headxl|xlpe-combination)
            echo --arch transformer_xlpe --xlpe-mode "${1#xlpe-}" --xlpe-heads 1 ;;
        *) echo "unknown model $1" >&2; return 2 ;;
    esac
}

# XL PE models need pos_XL for every split, which only data-bin-xlpe has.
model_data() {
    if [[ $1 == xlpe-* ]]; then
        echo "$XLPE_BIN"
    else
        echo "$BIN"
    fi
}

for model in $MODELS; do
    flags=$(model_flags "$model")
    data=$(model_data "$model")
    out=$WORK/$model
    # a rerun trains from scratch: fairseq would otherwise resume from checkpoint_last.pt
    rm -rf "$out"
    mkdir -p "$out"
    echo "== train $model ($UPDATES updates)" >&2
    start=$EPOCHREALTIME
    # shellcheck disable=SC2086  # $flags is a list of options
    fairseq-train "$data" "${COMMON[@]}" $flags --save-dir "$out/checkpoints" >"$out/train.log" 2>&1 \
        || { tail -30 "$out/train.log" >&2; exit 1; }
    awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.0f\n", e - s }' >"$out/train_seconds"
    grep -E "\| train \|" "$out/train.log" | tail -1 >&2

    echo "== translate the test split with $model" >&2
    fairseq-generate "$data" --user-dir "$USER_DIR" --task translation_reorder \
        --source-lang he --target-lang en --gen-subset test \
        --path "$out/checkpoints/checkpoint_last.pt" --beam 5 --batch-size 100 \
        --required-batch-size-multiple 1 --remove-bpe --num-workers 0 "${DEVICE_FLAGS[@]}" \
        >"$out/generate.out" 2>"$out/generate.log" || { tail -30 "$out/generate.log" >&2; exit 1; }
    xlpe-bleu --name "$model" --generate-output "$out/generate.out" \
        --reference "$DATA/corpus/test.en" --target-lang en --tokenized-reference \
        --json "$out/bleu.json"
done

# The preorderer's score goes into the footer only when XL PE models were trained.
score_file=""
if [[ $XLPE == 1 ]]; then
    score_file=$PREORDER_SCORE
fi
python - "$WORK" "$score_file" $MODELS <<'PY'
import json, sys
from pathlib import Path

work, score_file, models = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
lines = ["| model | BLEU | chrF | train seconds | test sentences |", "|---|---|---|---|---|"]
for model in models:
    score = json.loads((work / model / "bleu.json").read_text())
    seconds = (work / model / "train_seconds").read_text().strip()
    lines.append(f"| {model} | {score['bleu']:.2f} | {score['chrf']:.2f} | {seconds} | {score['sentences']} |")
lines.append("")
lines.append(f"sacreBLEU: {score['bleu_signature']}")
if score_file:
    lines += ["", "XL PE test positions: the preorderer vs the BTG oracle of the test alignment",
              "```", Path(score_file).read_text().rstrip(), "```"]
table = "\n".join(lines) + "\n"
(work / "results.md").write_text(table)
print(table)
PY
echo "== results: $WORK/results.md" >&2
