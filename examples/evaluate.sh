#!/usr/bin/env bash
# Evaluate a model trained by examples/train.sh the way its paper did: xlpe-evaluate
# (xlpe_fairseq/workflow/evaluate.py) under this script's name; --help lists the options.
exec python -m xlpe_fairseq.workflow.evaluate --prog "$0" "$@"
