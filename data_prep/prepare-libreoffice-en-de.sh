#!/usr/bin/env bash
# English->German LibreOffice help corpus: data_prep/prepare-libreoffice.sh en-de.
#
#   data_prep/prepare-libreoffice-en-de.sh [--raw-dir DIR] OUTDIR
set -euo pipefail
if [[ $# -lt 1 ]]; then
    echo "usage: $0 [--raw-dir DIR] OUTDIR" >&2
    exit 2
fi
exec "$(dirname "$0")/prepare-libreoffice.sh" en-de "$@"
