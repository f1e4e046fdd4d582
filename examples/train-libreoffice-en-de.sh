#!/usr/bin/env bash
# Train on the LibreOffice help En-De corpus: examples/train-libreoffice.sh en-de.
#
#   examples/train-libreoffice-en-de.sh DATA --model M [options of examples/train-libreoffice.sh]
#
# Its options and their defaults are those of examples/train-libreoffice.sh:
set -euo pipefail
source "$(dirname "$0")/../data_prep/options.sh"
for argument in "$@"; do
    if [[ $argument == -h || $argument == --help ]]; then
        (show_help "$0")
        echo
        exec "$(dirname "$0")/train-libreoffice.sh" --help
    fi
done
exec "$(dirname "$0")/train-libreoffice.sh" en-de "$@"
