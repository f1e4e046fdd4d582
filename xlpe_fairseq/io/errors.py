"""The errors a command reports as one line: bad input data, a failed external tool, an
option value out of range. The plugin's own (positions that are no permutation, a data-bin
without the positions a model needs) derive from them (``plugin_errors``), so that the ground
floor imports nothing above it."""


class InputError(ValueError):
    """Bad input data; the message names the file and, where it applies, the 1-based line."""


class ToolError(RuntimeError):
    """An external tool (aligner, symmetrizer) failed; the message holds its stderr."""


class OptionError(ValueError):
    """Options that cannot work together or a value out of range (a usage error, exit 2)."""
