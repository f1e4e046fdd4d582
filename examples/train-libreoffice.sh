#!/usr/bin/env bash
# Train on a LibreOffice help corpus of data_prep/prepare-libreoffice.sh (~34k pairs for
# en-de, ~18k for en-tr; IWSLT-sized or smaller: the DPE paper's IWSLT setup, size "small").
#
#   examples/train-libreoffice.sh PAIR DATA --model M [options of examples/train_common.sh]
#
# e.g. examples/train-libreoffice.sh en-tr data/libreoffice-en-tr --model xlpe
set -euo pipefail
source "$(dirname "$0")/train_common.sh"
for argument in "$@"; do
    [[ $argument != -h && $argument != --help ]] || show_help "$0" "$(dirname "$0")/train_common.sh"
done
if [[ $# -lt 2 ]]; then
    echo "usage: $0 PAIR DATA --model M [options]" >&2
    exit 2
fi
DATASET=libreoffice-$1
SRC=${1%-*}
TGT=${1#*-}
DATA=$2
shift 2
SIZES=small
# the recipe builds one joined dictionary
SHARE=--share-all-embeddings
train_main "$@"
