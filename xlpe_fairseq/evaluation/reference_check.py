"""Whether a reference is the one a fairseq-generate run translated: checked against its ``T-``
lines, the targets fairseq read from the data-bin.

A reference of another test set with as many lines is otherwise scored without a word (12.32
BLEU where the output's own targets give 100). A ``T-`` line is the reference as the data-bin
holds it: tokenized (and lowercased if the corpus was), BPE removed by ``--remove-bpe``, and a
word the dictionary lacks written ``<<unk>>``; the reference given is usually the raw text. The
check is the strictest one that no correct pair fails: a line is compared as its characters
outside what these steps change, so after any detokenization too, both sides
(``comparable``):

- without whitespace, since tokenization, word segmentation and detokenization only move
  spaces (tested on every language the pipeline treats apart: Moses, jieba, MeCab), nor the
  joiners and private-use characters with which the tokens record the spacing
  (``text.spacing``);
- without ASCII control characters, which the Moses tokenizer drops;
- without ``@`` and sentencepiece's ``▁``, the BPE marks, should an output keep them;
- case-folded, since a lowercased corpus may be scored against its raw text;
- with each ``<<unk>>`` standing for any characters, as the word it replaced;
- as written or with XML escapes undone (``&apos;``, ``&amp;``...), since a data-bin made with
  the Perl Moses tokenizer's defaults (fairseq's own IWSLT'14 script) holds them, where the
  plugin's tokenizer writes none and keeps an ``&amp;`` the text had.

Any other reference is refused at its first line that differs; a correct pair never is, so
the check refuses rather than warns. An output without ``T-`` lines (``fairseq-interactive``,
or a data-bin without targets) cannot be checked and is scored as before.
"""
import html
import re

from ..io import InputError

# fairseq writes a target word missing from its dictionary so (Dictionary.unk_string(escape=True))
UNKNOWN = "<<unk>>"
_IGNORED = re.compile("[\\s\x00-\x1f@\u2581\uffed\U000f0000-\U000ffffd]+")
# a line quoted in a message is cut to this many characters
QUOTED = 60


def comparable(text):
    """``text`` as tokenization, BPE and detokenization leave it (the module docstring)."""
    return _IGNORED.sub("", text).casefold()


def matches(target, reference):
    """Whether a ``T-`` line's ``target`` can be the ``reference`` line: equal as
    ``comparable`` text, each ``<<unk>>`` of ``target`` standing for any characters, with or
    without its XML escapes undone."""
    return _matches(target, reference) or (
        "&" in target and _matches(html.unescape(target), reference))


def _matches(target, reference):
    pieces = [comparable(piece) for piece in target.split(UNKNOWN)]
    text = comparable(reference)
    if len(pieces) == 1:
        return pieces[0] == text
    first, *middle, last = pieces
    end = len(text) - len(last)
    if end < len(first) or not text.startswith(first) or not text.endswith(last):
        return False
    # each piece at its earliest place: a later one would leave the rest less room
    position = len(first)
    for piece in middle:
        found = text.find(piece, position, end)
        if found < 0:
            return False
        position = found + len(piece)
    return True


def check_reference(references, targets, reference_path, generate_path):
    """Raise InputError naming the first line of ``references`` that is not its sentence's
    ``T-`` line in ``targets`` (``GenerateOutput.targets``: (line number, text) or None per
    sentence; None for an output without ``T-`` lines, which checks nothing)."""
    for index, (reference, target) in enumerate(zip(references, targets or ())):
        if target is not None and not matches(target[1], reference):
            lineno, text = target
            raise InputError(
                f"{reference_path} line {index + 1}: {_quoted(reference)} is not the target "
                f"{generate_path} translated ({_quoted(text)}, its T- line {lineno}; compared "
                "without spaces, case, BPE marks, XML escapes and <<unk>> words): is it the "
                "reference of this test set?")


def _quoted(line):
    return repr(line if len(line) <= QUOTED else line[:QUOTED] + "...")
