"""Reading ``fairseq-generate`` output back into corpus order.

fairseq prints hypotheses in batch order as ``H-{id}\\t{score}\\t{text}``. A run that lost
sentences (e.g. without ``--required-batch-size-multiple 1``) must not be scored as if
complete, so the reader checks that every id from 0 to n-1 is present exactly once.
"""
import re

from ..preprocessing.io_utils import open_text

HYPOTHESIS = re.compile(r"^H-(\d+)\t([^\t]*)\t(.*)$")


class IncompleteGenerationError(ValueError):
    """fairseq-generate output that does not hold one hypothesis per input sentence."""


def read_hypotheses(path, expected_count):
    """Return the best hypothesis text per sentence id, in corpus order."""
    by_id = {}
    with open_text(path) as lines:
        for line in lines:
            match = HYPOTHESIS.match(line.rstrip("\n"))
            if match:
                sentence_id = int(match.group(1))
                by_id.setdefault(sentence_id, match.group(3))
    missing = [i for i in range(expected_count) if i not in by_id]
    if missing or len(by_id) != expected_count:
        raise IncompleteGenerationError(
            f"{path}: expected hypotheses for sentences 0..{expected_count - 1}, found "
            f"{len(by_id)}; first missing ids: {missing[:10]} (run fairseq-generate with "
            "--required-batch-size-multiple 1 and the full --gen-subset)"
        )
    return [by_id[i] for i in range(expected_count)]
