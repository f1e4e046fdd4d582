#!/usr/bin/env bash
# Train on the LibreOffice help En-De corpus: examples/train-libreoffice.sh en-de.
#
#   examples/train-libreoffice-en-de.sh DATA --model M [options of examples/train_common.sh]
set -euo pipefail
exec "$(dirname "$0")/train-libreoffice.sh" en-de "$@"
