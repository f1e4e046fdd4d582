#!/usr/bin/env bash
# Your own parallel corpus, from raw text to the data-bins of every model family: xlpe-prepare
# (xlpe_fairseq/workflow/prepare.py) under this script's name; --help lists the options.
exec python -m xlpe_fairseq.workflow.prepare --prog "$0" "$@"
