#!/usr/bin/env bash
# Train on WMT'17 Zh-En or En-Zh prepared by data_prep/prepare-wmt17-zh-en.sh: xlpe-train's recipe
# wmt17-zh-en (xlpe_fairseq/workflow/dataset_recipes.py) under this script's name; --help lists the
# options.
exec python -m xlpe_fairseq.workflow.train --prog "$0" --recipe wmt17-zh-en "$@"
