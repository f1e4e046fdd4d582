#!/usr/bin/env bash
# Train on WAT'17 ASPEC Ja-En prepared by data_prep/prepare-aspec-ja-en.sh: xlpe-train's recipe
# aspec-ja-en (xlpe_fairseq/workflow/dataset_recipes.py) under this script's name; --help lists the
# options.
exec python -m xlpe_fairseq.workflow.train --prog "$0" --recipe aspec-ja-en "$@"
