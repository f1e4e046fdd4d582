"""Building blocks shared by the plugin's models."""
from .sinusoidal_positions import SinusoidalPositionsAt, positions_from_reorder

__all__ = ["SinusoidalPositionsAt", "positions_from_reorder"]
