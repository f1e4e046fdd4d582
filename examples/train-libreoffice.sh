#!/usr/bin/env bash
# Train on the LibreOffice help En-De corpus of data_prep/prepare-libreoffice-en-de.sh (~34k
# pairs, IWSLT-sized or smaller: the DPE paper's IWSLT setup, size "small").
#
#   examples/train-libreoffice-en-de.sh DATA --model M [options of examples/train_common.sh]
set -euo pipefail
source "$(dirname "$0")/train_common.sh"
if [[ $# -lt 1 ]]; then
    echo "usage: $0 DATA --model M [options]" >&2
    exit 2
fi
DATASET=libreoffice-en-de
SRC=en
TGT=de
DATA=$1
shift
SIZES=small
# the recipe builds one joined dictionary
SHARE=--share-all-embeddings
train_main "$@"
