"""Reading and validating reorder positions.

A reorder line holds one integer per source BPE token (EOS excluded): the 0-based position
that token takes in the target-ordered source. It is a permutation of ``0..n-1``, with one
exception: DPE order targets written by ``xlpe-reorder --method dpe --unaligned skip`` mark a
token without an order target (an unaligned word) with ``-1`` (NO_ORDER_TARGET), and the other
tokens then form a permutation of ``0..m-1`` among themselves. Only the order loss accepts
that (``allow_no_target``); models that read positions as input need full permutations.

The plugin defines the format (its dataset reads it); reorder extraction, the preorderer and
the preprocessing commands write and read it through here.
"""
from ..plugin_errors import ReorderFileError


NO_ORDER_TARGET = -1

_NO_TARGET_HINT = (
    f"({NO_ORDER_TARGET} marks a token without an order target, from `xlpe-reorder --method dpe "
    "--unaligned skip`; only DPE's order loss accepts it, models and tools that read positions "
    "need a full permutation: use --unaligned keep or --method btg)"
)


def validate_permutation(values, expected_len, where, allow_no_target=False):
    """Check that ``values`` (ints, a list or a 1-D tensor) is a permutation of 0..expected_len-1.

    With ``allow_no_target``, NO_ORDER_TARGET (-1) entries are allowed and the other m values
    must be a permutation of 0..m-1. ``where`` names the place for the error message, e.g.
    ``"data/train.reorder line 7"``.
    """
    values = [int(v) for v in values]
    if len(values) != expected_len:
        raise ReorderFileError(
            f"{where}: expected {expected_len} positions (one per source token), "
            f"found {len(values)}"
        )
    unsupervised = values.count(NO_ORDER_TARGET) if allow_no_target else 0
    ranked = expected_len - unsupervised
    seen = set()
    for k, value in enumerate(values):
        if value == NO_ORDER_TARGET and allow_no_target:
            continue
        if not 0 <= value < ranked:
            hint = f" {_NO_TARGET_HINT}" if value == NO_ORDER_TARGET else ""
            among = f" ({ranked} tokens have an order target)" if unsupervised else ""
            raise ReorderFileError(
                f"{where}: position {value} (token {k}) is out of range "
                f"0..{ranked - 1}{among}{hint}"
            )
        if value in seen:
            raise ReorderFileError(
                f"{where}: position {value} occurs twice, so the line is not a "
                f"permutation of 0..{ranked - 1}"
            )
        seen.add(value)


def parse_reorder_line(text, expected_len, path, lineno, allow_no_target=False):
    """Parse one reorder line into a list of ints and validate it as a permutation
    (with NO_ORDER_TARGET entries if ``allow_no_target``, see validate_permutation).

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
    validate_permutation(values, expected_len, where, allow_no_target)
    return values


def _is_int(field):
    try:
        int(field)
    except ValueError:
        return False
    return True
