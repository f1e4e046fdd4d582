#!/usr/bin/env bash
# One GPU lease of the XL PE at-scale study: one seed of transformer, xlpe-inxl (the default:
# U = I, V = 0, stepped a quarter as far), xlpe-inxl-paper (random U and V stepped as every other
# weight: Eq. 7 as the GPU run that lagged trained it) and xlpe-combination at the gpu-iwslt
# profile (512/1024, 6+6, fp16, 4,000 updates), four runs at once; XL PE rows decoded with the
# preorderer's test positions and the oracle's; each run scored with its checkpoint of lowest
# valid loss (the last one overfits this corpus after 3,000-3,500 updates).
#
#   docs/results/inxl-at-scale/lease.sh SEED CORPUS WORK [more xlpe-study options]
#
# CORPUS: the OUT of data_prep/prepare-libreoffice.sh en-tr, with the position sets of
# examples/position_sets.sh in CORPUS/sets (oracle). SRC and TGT (en, tr) name the languages;
# JOBS (4) runs train at once, at most the machine's cores.
# Options after WORK go to xlpe-study after these and win (a CPU dry run: --cpu --updates 2).
# Three leases (SEED 1, 2, 3) give three seeds; copying each lease's WORK/runs (without *.pt)
# into one folder and running the study there with --seeds 1 2 3 reports them together.
set -euo pipefail
if [[ $# -lt 3 ]]; then
    echo "usage: $0 SEED CORPUS WORK [xlpe-study options]" >&2
    exit 2
fi
SEED=$1
CORPUS=$2
WORK=$3
shift 3
SRC=${SRC:-en}
TGT=${TGT:-tr}
exec xlpe-study --data-bin "$CORPUS/data-bin/dpe" --xlpe-data-bin "$CORPUS/data-bin/xlpe" \
    --positions "oracle=$CORPUS/sets/oracle" --test-positions oracle \
    --source-lang "$SRC" --target-lang "$TGT" --reference "$CORPUS/raw/test.$TGT" \
    --profile gpu-iwslt --checkpoint best \
    --train-args "--num-workers 0 --save-interval 1000 --validate-interval 1000" \
    --models transformer xlpe-inxl xlpe-inxl-paper xlpe-combination \
    --variant "xlpe-inxl-paper=xlpe-inxl --xlpe-init xavier --xlpe-uv-lr-scale 1" \
    --baseline transformer \
    --seeds "$SEED" --jobs "${JOBS:-4}" --work "$WORK" "$@"
