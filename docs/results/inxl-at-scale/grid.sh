#!/usr/bin/env bash
# Learning curves of InXL against the Transformer at the gpu-iwslt profile (512/1024, 6+6,
# fp16, lr 5e-4, warmup 1,000), all runs at once on one GPU: the default (random U and V
# stepped a quarter as far: --xlpe-uv-lr-scale 0.25, which kept pace at this size on the CPU)
# against Eq. 7 as the GPU run that lagged trained it (the same at the full learning rate,
# "-paper"), with the identity init (U = I, V = 0) at the quarter (the default before it), at
# the full rate and at a tenth of the step (-uv0.1, the default before that, which kept pace
# on the CPU with half the XL term and gave up chrF at 128 wide), the XL
# positions themselves (monotone), the Combination mode, and width and depth for the paper's
# setting (2+2 layers at 512, 6+6 at 256).
#
#   docs/results/inxl-at-scale/grid.sh DATA OUT [UPDATES] [DEVICE_OPTIONS]
#
# DATA holds text/ (the data-bin of data_prep/prepare-libreoffice.sh en-tr), xlpe/ (its xlpe
# data-bin) and monotone/ (examples/position_sets.sh's monotone set, links resolved). OUT gets
# one log per run (train_inner every 50 updates, valid every 250) and, per InXL run,
# xlpe-inxl-diagnostics of the last checkpoint on valid. UPDATES: 1500; DEVICE_OPTIONS:
# --fp16 (--cpu for a dry run). TRAIN_SECONDS stops training runs that would overrun a lease;
# EXTRA adds fairseq-train options to every run (a dry run: EXTRA='--max-tokens 300').
set -u
DATA=$1
OUT=$2
UPDATES=${3:-1500}
DEVICE=${4:---fp16}
TRAIN_SECONDS=${TRAIN_SECONDS:-100000}
CHECKPOINTS=${CHECKPOINTS:-$OUT/checkpoints}
mkdir -p "$OUT" "$CHECKPOINTS"
: > "$OUT/exits.txt"
source "$(dirname "$0")/gpu_iwslt.sh"
WIDE=(--encoder-embed-dim 256 --decoder-embed-dim 256)
SHALLOW=(--encoder-layers 2 --decoder-layers 2)
INXL=(--arch transformer_xlpe --xlpe-mode inxl)
COMBINATION=(--arch transformer_xlpe --xlpe-mode combination --xlpe-heads 1)

# run NAME DATA_BIN SEED OPTIONS...
run() {
    local name=$1 data_bin=$2 seed=$3
    shift 3
    OMP_NUM_THREADS=1 timeout "$TRAIN_SECONDS" python3 -m fairseq_cli.train "$data_bin" \
        --user-dir "$USER_DIR" --task translation_reorder --source-lang en --target-lang tr \
        "${SETTINGS[@]}" ${EXTRA:-} "$DEVICE" "$@" --seed "$seed" --max-update "$UPDATES" \
        --num-workers 0 --log-interval 50 --validate-interval 1000 \
        --validate-interval-updates 250 --save-interval 1000 --save-interval-updates "$UPDATES" \
        --keep-interval-updates 1 --no-save-optimizer-state --save-dir "$CHECKPOINTS/$name" \
        > "$OUT/$name.log" 2>&1
    echo "$name: exit $?" >> "$OUT/exits.txt"
}

PAPER=(--xlpe-init xavier --xlpe-uv-lr-scale 1)
run transformer "$DATA/text" 1 --arch transformer &
run transformer-s2 "$DATA/text" 2 --arch transformer &
run inxl "$DATA/xlpe" 1 "${INXL[@]}" &
run inxl-s2 "$DATA/xlpe" 2 "${INXL[@]}" &
run inxl-paper "$DATA/xlpe" 1 "${INXL[@]}" "${PAPER[@]}" &
run inxl-paper-s2 "$DATA/xlpe" 2 "${INXL[@]}" "${PAPER[@]}" &
IDENTITY=(--xlpe-init identity)
run inxl-identity-uv1 "$DATA/xlpe" 1 "${INXL[@]}" "${IDENTITY[@]}" --xlpe-uv-lr-scale 1 &
run inxl-identity-uv0.1 "$DATA/xlpe" 1 "${INXL[@]}" "${IDENTITY[@]}" --xlpe-uv-lr-scale 0.1 &
run inxl-identity "$DATA/xlpe" 1 "${INXL[@]}" "${IDENTITY[@]}" &
run inxl-monotone "$DATA/monotone" 1 "${INXL[@]}" &
run combination "$DATA/xlpe" 1 "${COMBINATION[@]}" &
run combination-paper "$DATA/xlpe" 1 "${COMBINATION[@]}" "${PAPER[@]}" &
run transformer-2+2 "$DATA/text" 1 --arch transformer "${SHALLOW[@]}" &
run inxl-paper-2+2 "$DATA/xlpe" 1 "${INXL[@]}" "${PAPER[@]}" "${SHALLOW[@]}" &
run transformer-256 "$DATA/text" 1 --arch transformer "${WIDE[@]}" &
run inxl-paper-256 "$DATA/xlpe" 1 "${INXL[@]}" "${PAPER[@]}" "${WIDE[@]}" &
wait

for checkpoint in "$CHECKPOINTS"/{inxl,combination}*/checkpoint_last.pt; do
    [[ -f $checkpoint ]] || continue
    name=$(basename "$(dirname "$checkpoint")")
    data_bin=$DATA/xlpe
    [[ $name == *monotone* ]] && data_bin=$DATA/monotone
    python3 -m xlpe_fairseq.evaluation.inxl_diagnostics --checkpoint "$checkpoint" \
        --data-bin "$data_bin" > "$OUT/$name.diagnostics.json" 2>> "$OUT/diagnostics.err" &
done
wait
# a run stopped by TRAIN_SECONDS (exit 124) still has its curve; any other exit is a failure
failed=$(grep -v -E ': exit (0|124)$' "$OUT/exits.txt")
if [[ -n $failed ]]; then
    echo "grid.sh: runs failed (logs in $OUT):" $failed >&2
    exit 1
fi
