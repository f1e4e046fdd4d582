#!/usr/bin/env bash
# English->German LibreOffice help corpus: data_prep/prepare-libreoffice.sh en-de.
#
#   data_prep/prepare-libreoffice-en-de.sh [--raw-dir DIR] OUTDIR
#
# Its options, settings and their defaults are those of data_prep/prepare-libreoffice.sh:
set -euo pipefail
source "$(dirname "$0")/options.sh"
for argument in "$@"; do
    if [[ $argument == -h || $argument == --help ]]; then
        (show_help "$0")
        echo
        exec "$(dirname "$0")/prepare-libreoffice.sh" --help
    fi
done
if [[ $# -lt 1 ]]; then
    echo "usage: $0 [--raw-dir DIR] OUTDIR" >&2
    exit 2
fi
exec "$(dirname "$0")/prepare-libreoffice.sh" en-de "$@"
