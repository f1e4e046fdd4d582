"""fairseq models of the plugin; importing a module registers its model and presets."""
from . import transformer_dpe  # noqa: F401
from . import transformer_xlpe  # noqa: F401
from . import transformer_reorder_emb  # noqa: F401
from . import baselines  # noqa: F401
from . import transformer_positions  # noqa: F401
