#!/usr/bin/env bash
# Train on WMT'17 Zh-En or En-Zh prepared by data_prep/prepare-wmt17-zh-en.sh (XL PE's
# Transformer big by default; base also offered).
#
#   examples/train-wmt17-zh-en.sh {zh-en|en-zh} DATA --model M [--size big|base] [options]
set -euo pipefail
source "$(dirname "$0")/train_common.sh"
for argument in "$@"; do
    [[ $argument != -h && $argument != --help ]] || show_help "$0" "$(dirname "$0")/train_common.sh"
done
if [[ $# -lt 2 ]]; then
    echo "usage: $0 {zh-en|en-zh} DATA --model M [options]" >&2
    exit 2
fi
DATASET=wmt17-$1
SRC=${1%-*}
TGT=${1#*-}
DATA=$2
shift 2
SIZES="big base"
# separate Chinese and English dictionaries
SHARE=--share-decoder-input-output-embed
train_main "$@"
