#!/usr/bin/env bash
# The two-pass Transformer of Zheng et al. (2021, §3.1, Fig. 2), the baseline DPE replaces, and
# the four rows of DPE Table 2: xlpe_fairseq/workflow/two_pass.py runs it, with the demo's
# Transformer trained and decoded as xlpe-train and xlpe-evaluate do; --help lists the options.
source "$(dirname "$0")/demo_settings.sh"
exec python -m xlpe_fairseq.workflow.two_pass --prog "$0" "$@"
