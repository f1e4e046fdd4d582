"""Alignment error rate (Och & Ney 2003), precision and recall of word alignments.

Gold links are ``i-j`` (sure) or ``i?j`` (possible), 0-based source-target word indices; the
sure links S are also possible, S ⊆ P. For predicted links A, summed over the corpus:

    AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|),  precision = |A∩P| / |A|,  recall = |A∩S| / |S|

The XL PE paper (Ding et al. 2020, §4.3) scores attention alignments this way against manual
word alignments. Models and aligners work on BPE pieces; ``merge_bpe_links`` maps their links
back to words (``@@`` ends a non-final piece) so that they are scored on the gold's words.
"""
import dataclasses

from ..io import InputError, read_lines

SURE = "-"
POSSIBLE = "?"
BPE_CONTINUATION = "@@"


def parse_link(text, where):
    """``(i, j, separator)`` of one link ``i-j`` or ``i?j``; ``where`` names file and line."""
    for separator in (SURE, POSSIBLE):
        left, found, right = text.partition(separator)
        if found:
            if left.isdigit() and right.isdigit():
                return int(left), int(right), separator
            break
    raise InputError(f"{where}: {text!r} is not a link i-j (sure) or i?j (possible)")


def parse_gold(line, where):
    """``(sure, possible)`` link sets of one gold line; every sure link is also possible."""
    sure, possible = set(), set()
    for text in line.split():
        i, j, separator = parse_link(text, where)
        possible.add((i, j))
        if separator == SURE:
            sure.add((i, j))
    return sure, possible


def parse_predicted(line, where):
    """The link set of one predicted line; predictions have no possible/sure distinction."""
    links = set()
    for text in line.split():
        i, j, separator = parse_link(text, where)
        if separator != SURE:
            raise InputError(f"{where}: predicted links are i-j; {text!r} marks a possible link")
        links.add((i, j))
    return links


def read_gold(path):
    """``[(sure, possible), ...]``, one per line of ``path``; InputError for a gold standard
    without a single sure link, against which every prediction, none included, would score a
    perfect AER of 0."""
    gold = [parse_gold(line, f"{path}:{n}") for n, line in enumerate(read_lines(path), 1)]
    if not any(sure for sure, _ in gold):
        raise InputError(f"{path}: no sure links in {len(gold)} sentences (expected gold "
                         "alignments, 'i-j' sure and 'i?j' possible links)")
    return gold


def read_predicted(path):
    """``[links, ...]``, one set per line of ``path``."""
    return [parse_predicted(line, f"{path}:{n}") for n, line in enumerate(read_lines(path), 1)]


def read_tokens(path):
    """Whitespace tokens per line (BPE text or words)."""
    return [line.split() for line in read_lines(path)]


def format_links(links):
    """``i-j`` links sorted by source then target index, space separated."""
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


def word_index_of_pieces(pieces):
    """For each BPE piece, the index of the word it belongs to (``@@`` joins to the next)."""
    index, word = [], 0
    for piece in pieces:
        index.append(word)
        if not piece.endswith(BPE_CONTINUATION):
            word += 1
    return index


def word_count(pieces):
    """Number of words the BPE pieces spell."""
    return word_index_of_pieces(pieces)[-1] + 1 if pieces else 0


def check_in_range(links, source_length, target_length, where, unit):
    """Raise InputError for a link that points past the sentence (mismatched files)."""
    for i, j in sorted(links):
        if i >= source_length or j >= target_length:
            raise InputError(
                f"{where}: link {i}-{j} is outside the sentence pair ({source_length} source "
                f"and {target_length} target {unit}); are the files from the same corpus split?"
            )


def merge_bpe_links(links, source_pieces, target_pieces, where="links"):
    """Word links from BPE-piece links: words are linked if any of their pieces are."""
    check_in_range(links, len(source_pieces), len(target_pieces), where, "BPE pieces")
    source_word = word_index_of_pieces(source_pieces)
    target_word = word_index_of_pieces(target_pieces)
    return {(source_word[i], target_word[j]) for i, j in links}


@dataclasses.dataclass
class AlignmentCounts:
    """Corpus sums of the set sizes in the AER formula; add sentences with ``add``."""

    predicted: int = 0  # |A|
    sure: int = 0  # |S|
    predicted_sure: int = 0  # |A∩S|
    predicted_possible: int = 0  # |A∩P|
    sentences: int = 0

    def add(self, predicted, sure, possible):
        self.predicted += len(predicted)
        self.sure += len(sure)
        self.predicted_sure += len(predicted & sure)
        # S ⊆ P by definition, even where a caller passes the sets apart
        self.predicted_possible += len(predicted & (possible | sure))
        self.sentences += 1

    @property
    def aer(self):
        # no prediction and no sure gold link: nothing was got wrong
        denominator = self.predicted + self.sure
        return 1.0 - (self.predicted_sure + self.predicted_possible) / denominator if denominator else 0.0

    @property
    def precision(self):
        return self.predicted_possible / self.predicted if self.predicted else 0.0

    @property
    def recall(self):
        return self.predicted_sure / self.sure if self.sure else 0.0

    def as_dict(self):
        return {"aer": self.aer, "precision": self.precision, "recall": self.recall,
                **dataclasses.asdict(self)}


def corpus_scores(predicted, gold, predicted_name="predicted links", gold_name="gold"):
    """``AlignmentCounts`` of predicted link sets against ``(sure, possible)`` gold pairs."""
    if len(predicted) != len(gold):
        raise InputError(
            f"{predicted_name} has {len(predicted)} sentences and {gold_name} {len(gold)}"
        )
    counts = AlignmentCounts()
    for links, (sure, possible) in zip(predicted, gold):
        counts.add(links, sure, possible)
    return counts
