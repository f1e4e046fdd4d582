# Sourced by the GPU lease scripts of these studies, with the script's arguments:
#
#   source docs/results/gpu_lease.sh SEED CORPUS WORK [more xlpe-study options]
#
# It checks and names them, and run_lease STUDY_OPTIONS... runs the one seed of xlpe-study every
# lease runs: the gpu-iwslt profile, four runs at once, each scored with its checkpoint of lowest
# valid loss, against transformer. SRC and TGT (en, tr) name the languages, JOBS (4) how many
# runs train at once. The options after WORK come last, so they win (a CPU dry run: --cpu
# --updates 2).
if [[ $# -lt 3 ]]; then
    echo "usage: $0 SEED CORPUS WORK [xlpe-study options]" >&2
    exit 2
fi
SEED=$1
CORPUS=$2
WORK=$3
LEASE_OPTIONS=("${@:4}")
SRC=${SRC:-en}
TGT=${TGT:-tr}

run_lease() {
    exec xlpe-study --source-lang "$SRC" --target-lang "$TGT" \
        --reference "$CORPUS/raw/test.$TGT" --profile gpu-iwslt --checkpoint best \
        --train-args "--num-workers 0 --save-interval 1000 --validate-interval 1000" \
        --baseline transformer "$@" \
        --seeds "$SEED" --jobs "${JOBS:-4}" --work "$WORK" "${LEASE_OPTIONS[@]}"
}
