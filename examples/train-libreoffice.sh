#!/usr/bin/env bash
# Train on a LibreOffice help corpus of data_prep/prepare-libreoffice.sh: xlpe-train's recipe
# libreoffice (xlpe_fairseq/workflow/dataset_recipes.py) under this script's name; --help lists the
# options.
exec python -m xlpe_fairseq.workflow.train --prog "$0" --recipe libreoffice "$@"
