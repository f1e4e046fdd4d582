#!/usr/bin/env bash
# Train on IWSLT'14 prepared by data_prep/prepare-iwslt14.sh, with the DPE paper's IWSLT setup for
# every model: xlpe-train's recipe iwslt14 (xlpe_fairseq/workflow/dataset_recipes.py) under this
# script's name; --help lists the options.
exec python -m xlpe_fairseq.workflow.train --prog "$0" --recipe iwslt14 "$@"
