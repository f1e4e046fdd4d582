"""fairseq models of the plugin; importing a module registers its model and presets."""
from . import transformer_dpe  # noqa: F401
