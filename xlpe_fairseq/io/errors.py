"""The errors a command reports as one line: bad input data, a failed external tool, an
option value out of range. The plugin's own (positions that are no permutation, a data-bin
without the positions a model needs) derive from them (``plugin_errors``), so that the ground
floor imports nothing above it. Each says the exit status it ends a command with
(``exit_status``, docs/input-rules.md: 2 for the command line, else 1)."""


class InputError(ValueError):
    """Bad input data; the message names the file and, where it applies, the 1-based line."""

    exit_status = 1


class ToolError(RuntimeError):
    """An external tool (aligner, symmetrizer) failed; the message holds its stderr."""

    exit_status = 1


class OptionError(ValueError):
    """Options that cannot work together or a value out of range (a usage error, exit 2)."""

    exit_status = 2
