#!/usr/bin/env bash
# Hebrew->English Bible corpus (PyPI bible-alignments, manual gold alignments for valid/test)
# prepared for every model (with --xlpe) or every model but XL PE: xlpe-bible-corpus gets the
# corpus into OUTDIR/corpus (already tokenized), then xlpe-prepare prepares OUTDIR from it in
# its own layout (xlpe_fairseq/workflow/bible_recipe.py runs both); --help lists the options.
exec python -m xlpe_fairseq.workflow.bible_recipe --prog "$0" "$@"
