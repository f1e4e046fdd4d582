#!/usr/bin/env bash
# One GPU lease that screens a training profile for corpora of 20-40k pairs against fairseq's
# IWSLT'14 preset (the gpu-iwslt profile, made for ~160k pairs, which overfits LibreOffice
# En-Tr's 21,564 pairs after 3,000-3,500 updates): one seed of four Transformers, each adding
# one step of what the low-resource literature recommends to the row before it, four runs at
# once on one card, 4,000 updates, validated every 500, scored with the checkpoint of lowest
# valid loss; the report gives each row's lowest valid NLL and the update it came at.
#
#   transformer          gpu-iwslt as it is (512/1024, 6+6, 4 heads, dropout 0.3, smoothing 0.1,
#                        8,192 tokens a batch)
#   regularised          + dropout on attention weights and ReLU activations (0.1 each) and
#                        label smoothing 0.2
#   regularised-4k       + 4,096 tokens a batch
#   regularised-4k-5l2h  + 5+5 layers with 2 heads each
#
#   docs/results/low-resource-profile/lease.sh SEED CORPUS WORK [more xlpe-study options]
#
# CORPUS: the OUT of data_prep/prepare-libreoffice.sh en-tr. SRC, TGT, JOBS and the options
# after WORK: see ../gpu_lease.sh.
set -euo pipefail
source "$(dirname "$0")/../gpu_lease.sh"
REGULARISED="--attention-dropout 0.1 --activation-dropout 0.1 --label-smoothing 0.2"
SMALL_BATCH="--max-tokens 4096"
SHALLOW="--encoder-layers 5 --decoder-layers 5 --encoder-attention-heads 2"
SHALLOW="$SHALLOW --decoder-attention-heads 2"
run_lease --data-bin "$CORPUS/data-bin/dpe" \
    --models transformer regularised regularised-4k regularised-4k-5l2h \
    --variant "regularised=transformer $REGULARISED" \
    --variant "regularised-4k=transformer $REGULARISED $SMALL_BATCH" \
    --variant "regularised-4k-5l2h=transformer $REGULARISED $SMALL_BATCH $SHALLOW"
