"""fairseq datasets that carry reorder positions beside the parallel text."""
from .reorder_dataset import (
    LanguagePairWithReorderDataset,
    ReorderPositionsError,
    load_reorder_positions,
)

__all__ = ["LanguagePairWithReorderDataset", "ReorderPositionsError", "load_reorder_positions"]
