#!/usr/bin/env bash
# Train one model family on a corpus of data_prep/prepare-corpus.sh: xlpe-train
# (xlpe_fairseq/workflow/train.py) under this script's name; --help lists the options.
exec python -m xlpe_fairseq.workflow.train --prog "$0" "$@"
