#!/usr/bin/env bash
# Train on IWSLT'14 prepared by data_prep/prepare-iwslt14.sh, with the DPE paper's IWSLT
# setup for every model (examples/train_common.sh: size "small", schedule dpe-iwslt: 15k
# updates, the last 5 checkpoints averaged; DPE's order-loss weight lambda 0.3).
#
#   examples/train-iwslt14.sh PAIR DATA --model M [options of examples/train_common.sh]
#
# e.g. examples/train-iwslt14.sh en-de data/iwslt14-en-de --model dpe
# then examples/evaluate.sh data/iwslt14-en-de checkpoints/iwslt14-en-de/dpe-small
set -euo pipefail
source "$(dirname "$0")/train_common.sh"
for argument in "$@"; do
    [[ $argument != -h && $argument != --help ]] || show_help "$0" "$(dirname "$0")/train_common.sh"
done
if [[ $# -lt 2 ]]; then
    echo "usage: $0 PAIR DATA --model M [options]" >&2
    exit 2
fi
DATASET=iwslt14-$1
SRC=${1%-*}
TGT=${1#*-}
DATA=$2
shift 2
SIZES=small
# fairseq's IWSLT'14 setup: separate dictionaries, tied decoder input/output embeddings
SHARE=--share-decoder-input-output-embed
train_main "$@"
