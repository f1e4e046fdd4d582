"""fairseq datasets that carry reorder positions beside the parallel text."""
from .reorder_dataset import LanguagePairWithReorderDataset, load_reorder_positions

__all__ = ["LanguagePairWithReorderDataset", "load_reorder_positions"]
