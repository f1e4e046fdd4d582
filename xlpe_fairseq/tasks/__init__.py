"""fairseq tasks of the plugin."""
from . import translation_reorder  # noqa: F401
