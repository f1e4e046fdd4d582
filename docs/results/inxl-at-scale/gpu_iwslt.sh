# Sourced by the scripts of this study: USER_DIR, the plugin's folder for --user-dir, and
# SETTINGS, the gpu-iwslt profile's fairseq-train options as one word each (its Adam betas
# without the space, so that they stay one argument).
USER_DIR=$(python3 -c 'import os, xlpe_fairseq; print(os.path.dirname(xlpe_fairseq.__file__))')
read -r -a SETTINGS < <(python3 -c '
from xlpe_fairseq.evaluation.study import PROFILES
print(" ".join(PROFILES["gpu-iwslt"]["settings"]))' | sed 's/(0.9, 0.98)/(0.9,0.98)/')
