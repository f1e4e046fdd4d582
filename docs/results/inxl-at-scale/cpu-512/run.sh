#!/usr/bin/env bash
# InXL (both inits) against the Transformer at the gpu-iwslt profile's size (512/1024, 6+6) on
# the CPU: the profile's model, lr (5e-4, inverse_sqrt), dropout and label smoothing, with
# 1,024-token batches and the warm-up cut from 1,000 to 200 updates so that the learning rate
# peaks inside a budget a CPU can train. THREADS (1) threads a run, JOBS (2) runs at once;
# each run resumes from its checkpoint_last.pt when called again (fairseq reseeds every
# update, so a resumed run trains as an unbroken one would). DATA/xlpe may be a link to
# another position set (the monotone control: examples/position_sets.sh's monotone).
#
#   [ROWS='transformer inxl-identity inxl-xavier'] docs/results/inxl-at-scale/cpu-512/run.sh \
#       DATA OUT [UPDATES] [SEED...]
#
# ROWS: transformer, inxl-INIT[-uvS] (INIT identity or xavier; S: --xlpe-uv-lr-scale, 1 when
# not named, the rate these rows were measured at: the default is inxl-xavier-uv0.25),
# inxl-INIT-xlwN (N: --xlpe-xl-warmup-updates),
# combination-INIT and headxl (both with one XL head of four, as the IWSLT preset has it).
# DATA: the data-bin folder of data_prep/prepare-libreoffice.sh en-tr (text/ and xlpe/).
# OUT gets logs/ROW-sSEED.log (training NLL every 40 updates, validation every 80) and
# checkpoints/; UPDATES: 1200; SEEDS: 1.
set -u
DATA=$1
OUT=$2
UPDATES=${3:-1200}
shift $(( $# < 3 ? $# : 3 ))
SEEDS=("${@:-1}")
JOBS=${JOBS:-2}
mkdir -p "$OUT/logs" "$OUT/checkpoints"
source "$(dirname "$0")/../gpu_iwslt.sh"
INXL=(--arch transformer_xlpe --xlpe-mode inxl)
ONE_HEAD=(--arch transformer_xlpe --xlpe-heads 1)
FULL_RATE=(--xlpe-uv-lr-scale 1)

# run NAME DATA_BIN SEED OPTIONS...
run() {
    local name=$1 data_bin=$2 seed=$3
    shift 3
    OMP_NUM_THREADS=${THREADS:-1} python3 -m fairseq_cli.train "$data_bin" --user-dir "$USER_DIR" \
        --task translation_reorder --source-lang en --target-lang tr "${SETTINGS[@]}" --cpu \
        "$@" --seed "$seed" --max-tokens 1024 --warmup-updates 200 --max-update "$UPDATES" \
        --num-workers 0 --log-interval 40 --validate-interval 1000 \
        --validate-interval-updates 80 --save-interval 1000 --save-interval-updates 80 \
        --keep-interval-updates 1 --save-dir "$OUT/checkpoints/$name-s$seed" \
        >> "$OUT/logs/$name-s$seed.log" 2>&1
    echo "$name-s$seed: exit $?" >> "$OUT/exits.txt"
}

for seed in "${SEEDS[@]}"; do
    for row in ${ROWS:-transformer inxl-identity inxl-xavier}; do
        while (( $(jobs -rp | wc -l) >= JOBS )); do wait -n; done
        case $row in
            transformer) run "$row" "$DATA/text" "$seed" --arch transformer & ;;
            inxl-*-uv*) init=${row#inxl-}
                run "$row" "$DATA/xlpe" "$seed" "${INXL[@]}" --xlpe-init "${init%-uv*}" \
                    --xlpe-uv-lr-scale "${row##*-uv}" & ;;
            inxl-*-xlw*) init=${row#inxl-}
                run "$row" "$DATA/xlpe" "$seed" "${INXL[@]}" --xlpe-init "${init%-xlw*}" \
                    --xlpe-xl-warmup-updates "${row##*-xlw}" "${FULL_RATE[@]}" & ;;
            inxl-*) run "$row" "$DATA/xlpe" "$seed" "${INXL[@]}" --xlpe-init "${row#inxl-}" \
                "${FULL_RATE[@]}" & ;;
            combination-*) run "$row" "$DATA/xlpe" "$seed" "${ONE_HEAD[@]}" \
                --xlpe-mode combination --xlpe-init "${row#combination-}" "${FULL_RATE[@]}" & ;;
            headxl) run "$row" "$DATA/xlpe" "$seed" "${ONE_HEAD[@]}" --xlpe-mode headxl & ;;
        esac
    done
done
wait
