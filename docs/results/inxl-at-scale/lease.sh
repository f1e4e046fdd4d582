#!/usr/bin/env bash
# One GPU lease of the XL PE at-scale study: one seed of transformer, xlpe-inxl (the default:
# random U and V stepped a quarter as far), xlpe-inxl-paper (the same stepped as every other
# weight: Eq. 7 as the GPU run that lagged trained it) and xlpe-combination at the gpu-iwslt
# profile (512/1024, 6+6, fp16, 4,000 updates), four runs at once; XL PE rows decoded with the
# preorderer's test positions and the oracle's; each run scored with its checkpoint of lowest
# valid loss (the last one overfits this corpus after 3,000-3,500 updates).
#
#   docs/results/inxl-at-scale/lease.sh SEED CORPUS WORK [more xlpe-study options]
#
# CORPUS: the OUT of data_prep/prepare-libreoffice.sh en-tr, with the position sets of
# examples/position_sets.sh in CORPUS/sets (oracle). SRC, TGT, JOBS and the options after WORK:
# see ../gpu_lease.sh.
# Three leases (SEED 1, 2, 3) give three seeds; copying each lease's WORK/runs (without *.pt)
# into one folder and running the study there with --seeds 1 2 3 reports them together.
set -euo pipefail
source "$(dirname "$0")/../gpu_lease.sh"
run_lease --data-bin "$CORPUS/data-bin/dpe" --xlpe-data-bin "$CORPUS/data-bin/xlpe" \
    --positions "oracle=$CORPUS/sets/oracle" --test-positions oracle \
    --models transformer xlpe-inxl xlpe-inxl-paper xlpe-combination \
    --variant "xlpe-inxl-paper=xlpe-inxl --xlpe-init xavier --xlpe-uv-lr-scale 1"
