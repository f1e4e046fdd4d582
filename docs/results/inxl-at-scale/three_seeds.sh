#!/usr/bin/env bash
# One GPU lease: does the default InXL (xavier U and V stepped a quarter as far), which gains
# 1.3-2.3 BLEU at the CPU profile's size, keep pace at the size researchers train? Three seeds
# of transformer and xlpe-inxl at the gpu-iwslt profile (512/1024, 6+6, fp16, 8,192 tokens a
# batch) on LibreOffice En->Tr, all six runs at once on one card, to 1,300 updates: the budget,
# batch, checkpoint (the last) and decoding of the earlier three-seed comparison, where the old
# setting lost 1.25 BLEU (../study-gpu-en-tr), so that the rows sit side by side. XL PE is
# decoded with the preorderer's test positions and the oracle's.
#
#   docs/results/inxl-at-scale/three_seeds.sh CORPUS WORK [more xlpe-study options]
#
# CORPUS: the OUT of data_prep/prepare-libreoffice.sh en-tr with examples/position_sets.sh's
# oracle set in CORPUS/sets, or its copy that scripts/gpu_lease/pack.sh makes. SRC and TGT (en,
# tr) name the languages, JOBS (6) how many runs train at once (xlpe-study allows no more than
# the machine's cores); EXTRA adds fairseq-train options to every run, and the options after
# WORK come last, so they win (a CPU dry run: JOBS=2, EXTRA with a narrow model, --cpu
# --updates 2).
#
# Sizing, from the throughput measured on the H100 and H200 (study-gpu-en-tr, benchmark-h200):
# 12 runs of this profile on one card trained at 3.0-4.2 updates/s each (about 43 together) and
# 4 runs at 7.7-8.8 (about 33), so 6 runs get at least 33 / 6 = 5.5 updates/s each: 1,300
# updates in 180-240 s. Beam-5 decoding of the 1,000 test sentences by models this undertrained
# (long, repetitive outputs) took 2-4 minutes a run beside 11 others; here 9 decodes (InXL's
# two position sets one after the other), 6 at most at a time, take 2-6 minutes. The batch
# stays the profile's (12 such runs fitted an 80 GB card). So a device command of about 8
# minutes (run.sh's LEASE_SECONDS=450) trains every run and decodes most of them; the runs save
# at updates 500 and 1,000 (and at 1,300), so a command cut in training loses at most 500
# updates, and the same call again while the machine is warm resumes them and decodes the rest.
# On the device (the tool's call, its carry and the resume: README.md, "The next GPU lease"):
#
#   LEASE_SECONDS=450 scripts/gpu_lease/run.sh inxl-three-seeds bash -c \
#       'docs/results/inxl-at-scale/three_seeds.sh "$CORPUS" "$RESULTS/work" "$@"' three_seeds
set -euo pipefail
if [[ $# -lt 2 ]]; then
    echo "usage: $0 CORPUS WORK [more xlpe-study options]" >&2
    exit 2
fi
CORPUS=$1
WORK=$2
SRC=${SRC:-en}
TGT=${TGT:-tr}
# as the earlier leases ran: six trainings of one thread each beside the card's work
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# the earlier comparison's, with saves every 500 updates (fairseq would otherwise save only
# when training ends, and a cut run would start again from update 0)
TRAIN_ARGS="--num-workers 0 --save-interval 1000 --validate-interval 1000"
TRAIN_ARGS+=" --save-interval-updates 500 --keep-interval-updates 1${EXTRA:+ $EXTRA}"
exec xlpe-study --data-bin "$CORPUS/data-bin/dpe" --xlpe-data-bin "$CORPUS/data-bin/xlpe" \
    --positions "oracle=$CORPUS/sets/oracle" --test-positions oracle --preorderer-nbest 1 \
    --source-lang "$SRC" --target-lang "$TGT" --reference "$CORPUS/raw/test.$TGT" \
    --profile gpu-iwslt --updates 1300 \
    --train-args "$TRAIN_ARGS" \
    --models transformer xlpe-inxl --baseline transformer --seeds 1 2 3 --jobs "${JOBS:-6}" \
    --work "$WORK" "${@:3}"
