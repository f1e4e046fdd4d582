"""fairseq criterions of the plugin."""
from . import label_smoothed_cross_entropy_with_order  # noqa: F401
