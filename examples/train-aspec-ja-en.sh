#!/usr/bin/env bash
# Train on WAT'17 ASPEC Ja-En prepared by data_prep/prepare-aspec-ja-en.sh (XL PE: big;
# Reordering Embeddings: base and big, Table 3), each on its paper's schedule (train_common.sh).
#
#   examples/train-aspec-ja-en.sh DATA --model M [--size big|base] [options of train_common.sh]
set -euo pipefail
source "$(dirname "$0")/train_common.sh"
for argument in "$@"; do
    [[ $argument != -h && $argument != --help ]] || show_help "$0" "$(dirname "$0")/train_common.sh"
done
if [[ $# -lt 1 ]]; then
    echo "usage: $0 DATA --model M [options]" >&2
    exit 2
fi
DATASET=aspec-ja-en
SRC=ja
TGT=en
DATA=$1
shift
SIZES="big base"
# separate Japanese and English dictionaries
SHARE=--share-decoder-input-output-embed
train_main "$@"
