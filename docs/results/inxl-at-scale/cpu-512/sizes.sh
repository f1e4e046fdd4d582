#!/usr/bin/env bash
# Does InXL's tanh input saturate with width or with depth? InXL at 128, 256 and 512 wide and
# 2+2 or 6+6 layers (heads 4, FFN twice the width), both inits, trained with run.sh's
# optimiser and batches (the gpu-iwslt profile's lr 5e-4 and dropout 0.3, 1,024-token
# batches, warm-up 200) for UPDATES updates; logs PE_IN's norm and saturated share every 40
# updates, no validation, and keeps the last checkpoint for weights.py.
#
#   docs/results/inxl-at-scale/cpu-512/sizes.sh DATA OUT [UPDATES]
set -u
DATA=$1
OUT=$2
UPDATES=${3:-400}
mkdir -p "$OUT/logs" "$OUT/checkpoints"
source "$(dirname "$0")/../gpu_iwslt.sh"
for size in 128x2 128x6 256x6 512x2; do
    width=${size%x*}
    layers=${size#*x}
    for init in identity xavier; do
        name=inxl-$init-${width}-${layers}+${layers}
        [[ -f $OUT/checkpoints/$name/checkpoint_last.pt ]] && continue
        OMP_NUM_THREADS=1 python3 -m fairseq_cli.train "$DATA/xlpe" --user-dir "$USER_DIR" \
            --task translation_reorder --source-lang en --target-lang tr "${SETTINGS[@]}" --cpu \
            --arch transformer_xlpe --xlpe-mode inxl --xlpe-init "$init" --xlpe-uv-lr-scale 1 \
            --encoder-embed-dim "$width" --decoder-embed-dim "$width" \
            --encoder-ffn-embed-dim $((2 * width)) --decoder-ffn-embed-dim $((2 * width)) \
            --encoder-layers "$layers" --decoder-layers "$layers" --seed 1 --max-tokens 1024 \
            --warmup-updates 200 --max-update "$UPDATES" --num-workers 0 --log-interval 40 \
            --disable-validation --save-interval 1000 --save-interval-updates "$UPDATES" \
            --no-save-optimizer-state --save-dir "$OUT/checkpoints/$name" \
            > "$OUT/logs/$name.log" 2>&1
        echo "$name: exit $?" >> "$OUT/exits.txt"
    done
done
