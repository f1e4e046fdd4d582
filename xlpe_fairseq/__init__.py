"""xlpe-fairseq: a fairseq plugin for cross-lingual word order in Transformer NMT.

Load it with ``--user-dir <path>/xlpe_fairseq`` to get the ``translation_reorder`` task, the
``label_smoothed_cross_entropy_with_order`` criterion and the ``transformer_xlpe`` /
``transformer_dpe`` / ``transformer_reorder_emb`` models.
"""
import os
import sys

# fairseq checkpoints pickle argparse.Namespace; torch >= 2.6 refuses them under its
# weights_only default, which breaks fairseq-generate, -interactive and --restore-file.
os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")

# fairseq's --user-dir imports this package after fairseq itself: register then. The
# data-preparation commands import only their own modules and skip fairseq's ~4 s start-up.
if "fairseq" in sys.modules:
    from . import criterions, models, tasks  # noqa: E402,F401
