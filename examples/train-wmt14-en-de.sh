#!/usr/bin/env bash
# Train on WMT'14 En-De prepared by data_prep/prepare-wmt14-en-de.sh (base or big): xlpe-train's
# recipe wmt14-en-de (xlpe_fairseq/workflow/dataset_recipes.py) under this script's name; --help
# lists the options.
exec python -m xlpe_fairseq.workflow.train --prog "$0" --recipe wmt14-en-de "$@"
