#!/usr/bin/env bash
# Hebrew->English Bible corpus (PyPI bible-alignments, manual gold alignments for valid/test)
# prepared for fairseq-train --task translation_reorder with DPE (and, with --xlpe, XL PE)
# reorder positions: xlpe-bible-corpus gets the corpus, then xlpe_fairseq/workflow/
# bible_recipe.py prepares it under this script's name; --help lists the options.
exec python -m xlpe_fairseq.workflow.bible_recipe --prog "$0" "$@"
