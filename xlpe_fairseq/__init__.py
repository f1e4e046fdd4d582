"""xlpe-fairseq: a fairseq plugin for cross-lingual word order in Transformer NMT.

Load it with ``--user-dir <path>/xlpe_fairseq`` (``xlpe-user-dir`` prints the path), or import
it, to get the ``translation_reorder`` task, the ``label_smoothed_cross_entropy_with_order``
criterion, the ``transformer_xlpe`` / ``transformer_dpe`` / ``transformer_reorder_emb`` models
(and the baselines' position schemes), and the ``xlpe`` tokenizer. Importing it registers
them with fairseq and allows, by name, the few objects fairseq's checkpoints pickle under torch's
weights-only loading (``io.checkpoints``).
"""
from .fairseq_support import check_fairseq

# a fairseq the plugin cannot run on is one line that says what to install, not the failure
# of an import deep inside fairseq
check_fairseq()

from . import criterions, models, tasks, tokenizer  # noqa: E402,F401  (they register)
from .io.checkpoints import allow_fairseq_checkpoint_globals  # noqa: E402

allow_fairseq_checkpoint_globals()
