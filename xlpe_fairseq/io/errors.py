"""The errors a command reports as one line: bad input data, a failed external tool, an
option value out of range; positions that are no permutation, a data-bin without the
positions a model needs. Every other module imports them from here (``reordering`` and
``plugin_errors`` re-export theirs), so the ground floor imports nothing above it."""


class InputError(ValueError):
    """Bad input data; the message names the file and, where it applies, the 1-based line."""


class ToolError(RuntimeError):
    """An external tool (aligner, symmetrizer) failed; the message holds its stderr."""


class OptionError(ValueError):
    """Options that cannot work together or a value out of range (a usage error, exit 2)."""


class ReorderFileError(ValueError):
    """A reorder line or tensor that is not a permutation of the source positions."""


class MissingReorderPositionsError(FileNotFoundError):
    """A model needs reorder positions for a split and the data-bin has none."""


# the plugin's errors about the user's data: one line wherever they are raised
INPUT_ERRORS = (InputError, ReorderFileError, MissingReorderPositionsError)
