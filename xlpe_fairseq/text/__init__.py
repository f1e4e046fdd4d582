"""Text rules of the ground floor: ``spacing``, the raw line's spacing recorded in its tokens."""
