"""Reading ``fairseq-generate`` output back into corpus order.

fairseq prints hypotheses in batch order as ``H-{id}\\t{score}\\t{text}``. A run that lost
sentences (e.g. without ``--required-batch-size-multiple 1``) must not be scored as if
complete, so the reader checks that every id from 0 to n-1 is present exactly once.
"""
import re

from ..io import text_lines

HYPOTHESIS = re.compile(r"^H-(\d+)\t([^\t]*)\t(.*)$")


class IncompleteGenerationError(ValueError):
    """fairseq-generate output that does not hold one hypothesis per input sentence."""


def read_hypotheses(path, expected_count, expected_from="the reference"):
    """Return the best hypothesis text per sentence id, in corpus order.

    ``expected_from`` names where ``expected_count`` comes from (e.g. the reference file), to
    blame it rather than ``path`` when ``path`` holds more sentences than it.
    """
    by_id = {}
    with text_lines(path) as lines:
        for line in lines:
            match = HYPOTHESIS.match(line)
            if match:
                sentence_id = int(match.group(1))
                by_id.setdefault(sentence_id, match.group(3))
    if not by_id:
        raise IncompleteGenerationError(
            f"{path}: no hypotheses (expected fairseq-generate output, 'H-ID<TAB>SCORE<TAB>TEXT' "
            "lines)")
    missing = [i for i in range(expected_count) if i not in by_id]
    if not missing and len(by_id) > expected_count:
        raise IncompleteGenerationError(
            f"{expected_from} has {expected_count} lines but {path} holds hypotheses for "
            f"{len(by_id)} sentences (ids 0..{max(by_id)}): is it the reference of this test set?")
    if missing:
        raise IncompleteGenerationError(
            f"{path}: expected hypotheses for sentences 0..{expected_count - 1}, found "
            f"{len(by_id)}; first missing ids: {missing[:10]} (run fairseq-generate with "
            "--required-batch-size-multiple 1 and the full --gen-subset)"
        )
    return [by_id[i] for i in range(expected_count)]
