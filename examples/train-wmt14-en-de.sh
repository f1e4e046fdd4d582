#!/usr/bin/env bash
# Train on WMT'14 En-De prepared by data_prep/prepare-wmt14-en-de.sh: Transformer base
# (DPE, Reordering Embeddings) or big (XL PE, Reordering Embeddings) on the same data-bin,
# each model on its paper's schedule (train_common.sh, --schedule).
#
#   examples/train-wmt14-en-de.sh DATA --model M [--size base|big] [options of train_common.sh]
#
# e.g. examples/train-wmt14-en-de.sh data/wmt14-en-de --model xlpe --size big --gpus 8 --fp16
set -euo pipefail
source "$(dirname "$0")/train_common.sh"
for argument in "$@"; do
    [[ $argument != -h && $argument != --help ]] || show_help "$0" "$(dirname "$0")/train_common.sh"
done
if [[ $# -lt 1 ]]; then
    echo "usage: $0 DATA --model M [--size base|big] [options]" >&2
    exit 2
fi
DATASET=wmt14-en-de
SRC=en
TGT=de
DATA=$1
shift
SIZES="base big"
# the recipe builds one joined dictionary
SHARE=--share-all-embeddings
train_main "$@"
