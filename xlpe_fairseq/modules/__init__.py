"""Building blocks shared by the plugin's models."""
from .relative_positions import (
    ALiBiPositions,
    PositionalSelfAttention,
    RelativePositionScheme,
    RotaryPositions,
    ShawRelativePositions,
    T5RelativeBias,
    relative_distances,
)
from .sinusoidal_positions import SinusoidalPositionsAt, positions_from_reorder

__all__ = [
    "ALiBiPositions",
    "PositionalSelfAttention",
    "RelativePositionScheme",
    "RotaryPositions",
    "ShawRelativePositions",
    "SinusoidalPositionsAt",
    "T5RelativeBias",
    "positions_from_reorder",
    "relative_distances",
]
