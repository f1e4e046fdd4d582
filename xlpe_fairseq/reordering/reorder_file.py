"""Reading and validating reorder positions.

A reorder line holds one integer per source BPE token (EOS excluded): the 0-based position
that token takes in the target-ordered source. It must be a permutation of ``0..n-1``.

Kept dependency-free (no torch, no fairseq) so that the fairseq dataset and the
preprocessing commands can share it cheaply.
"""


class ReorderFileError(ValueError):
    """A reorder line or tensor that is not a permutation of the source positions."""


def validate_permutation(values, expected_len, where):
    """Check that ``values`` (ints, a list or a 1-D tensor) is a permutation of 0..expected_len-1.

    ``where`` names the place for the error message, e.g. ``"data/train.reorder line 7"``.
    """
    values = [int(v) for v in values]
    if len(values) != expected_len:
        raise ReorderFileError(
            f"{where}: expected {expected_len} positions (one per source token), "
            f"found {len(values)}"
        )
    seen = set()
    for k, value in enumerate(values):
        if not 0 <= value < expected_len:
            raise ReorderFileError(
                f"{where}: position {value} (token {k}) is out of range 0..{expected_len - 1}"
            )
        if value in seen:
            raise ReorderFileError(
                f"{where}: position {value} occurs twice, so the line is not a "
                f"permutation of 0..{expected_len - 1}"
            )
        seen.add(value)


def parse_reorder_line(text, expected_len, path, lineno):
    """Parse one reorder line into a list of ints and validate it as a permutation.

    ``lineno`` is 1-based. Raises ReorderFileError naming the file, the line, what was
    expected and what was found.
    """
    where = f"{path} line {lineno}"
    fields = text.split()
    try:
        values = [int(field) for field in fields]
    except ValueError:
        bad = next(field for field in fields if not _is_int(field))
        raise ReorderFileError(f"{where}: {bad!r} is not an integer position") from None
    validate_permutation(values, expected_len, where)
    return values


def _is_int(field):
    try:
        int(field)
    except ValueError:
        return False
    return True
