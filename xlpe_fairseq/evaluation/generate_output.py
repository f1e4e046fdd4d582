"""Reading ``fairseq-generate`` output back into corpus order: the one reader every command uses.

fairseq prints the lines of a sentence together (``S-``, ``T-``, ``H-``, ``D-``, ``P-``, ``A-``
..., each ``{letter}-{id}\\t...``), sentences in batch order, the hypotheses as
``H-{id}\\t{score}\\t{text}``, a sentence's ``--nbest`` hypotheses best first (descending
score). A run that lost sentences (e.g. without ``--required-batch-size-multiple 1``) must not
be scored as if complete, and two outputs joined must not be scored as one, so the reader
checks that every id from 0 to n-1 is there, once, its lines together and its hypotheses'
scores falling: two runs' lines merged by id would otherwise pass for an n-best list, and
whichever run came first would be scored. ``T-{id}\\t{text}`` is the target fairseq read from
the data-bin, kept to check a reference against (``reference_check``).
"""
import re
from typing import List, NamedTuple, Optional, Tuple

from ..io import text_lines

HYPOTHESIS = re.compile(r"^H-(\d+)\t([^\t]*)\t(.*)$")
# every line fairseq-generate prints about a sentence starts with a letter, "-" and its id
SENTENCE_LINE = re.compile(r"^([A-Z])-(\d+)\t")
# lines printed once per sentence (the others once per --nbest hypothesis): met twice, the
# sentence starts again, also when a joined output starts with the id the first one ended with
ONCE_PER_SENTENCE = {"S", "T"}
TARGET = re.compile(r"^T-(\d+)\t(.*)$")


class IncompleteGenerationError(ValueError):
    """fairseq-generate output that does not hold one hypothesis per input sentence."""


class GenerateOutput(NamedTuple):
    """A fairseq-generate run in corpus order: each sentence's best hypothesis, and its
    ``T-`` line as (line number, text), or None where the output has no ``T-`` lines."""
    hypotheses: List[str]
    targets: Optional[List[Optional[Tuple[int, str]]]]


def read_hypotheses(path, expected_count, expected_from="the reference"):
    """Return the best hypothesis text per sentence id, in corpus order (``read_generate_output``)."""
    return read_generate_output(path, expected_count, expected_from).hypotheses


def read_generate_output(path, expected_count, expected_from="the reference"):
    """Read a fairseq-generate output: a ``GenerateOutput`` of ``expected_count`` sentences.

    ``expected_from`` names where ``expected_count`` comes from (e.g. the reference file), to
    blame it rather than ``path`` when the two hold different numbers of sentences. The lines
    of one sentence, its ``--nbest`` hypotheses among them, come together: an id met again
    after another sentence's lines, on a line of any kind, or a second ``S-`` or ``T-`` line
    of one sentence, means two outputs were joined; so does a hypothesis scored above the one
    before it of the same sentence.
    """
    by_id, first_line, current_id, current_tags = {}, {}, None, set()
    targets, previous = {}, None  # the sentence's last hypothesis: (score, as written, line)
    with text_lines(path) as lines:
        for lineno, line in enumerate(lines, start=1):
            match = HYPOTHESIS.match(line)
            if line.startswith("H-") and not (match and _is_number(match.group(2))):
                raise IncompleteGenerationError(
                    f"{path} line {lineno}: not a hypothesis line (expected "
                    "'H-ID<TAB>SCORE<TAB>TEXT' with a whole-number ID and a numeric SCORE)")
            tagged = SENTENCE_LINE.match(line)
            if not tagged:
                continue
            tag, sentence_id = tagged.group(1), int(tagged.group(2))
            if sentence_id != current_id or tag in current_tags & ONCE_PER_SENTENCE:
                if sentence_id in first_line:
                    raise IncompleteGenerationError(
                        f"{path} line {lineno}: sentence {sentence_id} again (first at line "
                        f"{first_line[sentence_id]}); expected the output of one "
                        "fairseq-generate run, each sentence once")
                first_line[sentence_id] = lineno
                current_id, current_tags, previous = sentence_id, set(), None
            current_tags.add(tag)
            if match:
                score = float(match.group(2))
                if previous is not None and score > previous[0]:
                    raise IncompleteGenerationError(
                        f"{path} line {lineno}: sentence {sentence_id}'s hypothesis scores "
                        f"{match.group(2)}, above the one before it ({previous[1]}, line "
                        f"{previous[2]}); expected the output of one fairseq-generate run, "
                        "whose n-best hypotheses come best first (two runs merged by id?)")
                previous = (score, match.group(2), lineno)
                by_id.setdefault(sentence_id, match.group(3))
            elif tag == "T":
                targets[sentence_id] = (lineno, TARGET.match(line).group(2))
    if not by_id:
        raise IncompleteGenerationError(
            f"{path}: no hypotheses (expected fairseq-generate output, 'H-ID<TAB>SCORE<TAB>TEXT' "
            "lines)")
    without = [i for i in first_line if i not in by_id]
    if without:
        raise IncompleteGenerationError(
            f"{path} line {first_line[without[0]]}: sentence {without[0]} has no hypothesis "
            f"(no 'H-{without[0]}' line among its lines); expected complete fairseq-generate "
            "output")
    missing = [i for i in range(expected_count) if i not in by_id]
    if len(by_id) > expected_count or (missing and sorted(by_id) == list(range(len(by_id)))):
        # every id from 0 up is there: the test set and the reference differ in length
        raise IncompleteGenerationError(
            f"{expected_from} has {expected_count} lines but {path} holds hypotheses for "
            f"{len(by_id)} sentences (ids 0..{max(by_id)}): is it the reference of this test set?")
    if missing:
        raise IncompleteGenerationError(
            f"{path}: expected hypotheses for sentences 0..{expected_count - 1}, found "
            f"{len(by_id)}; first missing ids: {missing[:10]} (run fairseq-generate with "
            "--required-batch-size-multiple 1 and the full --gen-subset)"
        )
    return GenerateOutput([by_id[i] for i in range(expected_count)],
                          [targets.get(i) for i in range(expected_count)] if targets else None)


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True
