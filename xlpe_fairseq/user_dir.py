"""The plugin's folder, the one fairseq's ``--user-dir`` imports it from (``xlpe-user-dir``
prints it)."""
from pathlib import Path

PLUGIN_DIR = str(Path(__file__).resolve().parent)
