"""Fuzz tests of the console commands, run in-process through their entry points.

Every input gets random lines, tokens and line ends (LF, CRLF, lone CR, a missing last one, a
byte-order mark) or plain random bytes; alignments and permutations are random and sometimes
out of range. Whatever the input, the rule of docs/input-rules.md must hold:

- exit status 0, or 1 with one line ``PROG: error: ...`` and no traceback;
- on 1, no output and no hidden temporary file; on 0, only the outputs, each with as many
  lines as the input it comes from;
- the inputs are never changed.

CI runs a fixed, derandomized budget (see fuzz_settings.py; the whole suite, parsers
included, takes well under a minute on two cores). A longer random run::

    XLPE_FUZZ_EXAMPLES=2000 python -m pytest tests/fuzz -q --hypothesis-show-statistics
"""
import os
import tempfile

from hypothesis import given, strategies as st

from fuzz.fuzz_settings import fuzz_settings
from support.input_rule import check_rule, files
from xlpe_fairseq.io import count_lines, read_lines
from xlpe_fairseq.preordering.preorderer import Preorderer
from xlpe_fairseq.preordering.vocabulary import Vocabulary
from xlpe_fairseq.text.tokenization import tokenize_line
from xlpe_fairseq.data.reorder_file import parse_reorder_line

TOKENS = ["a", "b", "ab@@", "c", "é", "x-y", "0", "1", "2", "1-0", "0-1", "²", "\u00a0", "\x0b",
          "\u2028", "\x85", "\t", "ﬁ", "\ufeff", "e s 9", "low", "lowest", "newer"]
ENDINGS = ["\n"] * 6 + ["\r\n", "\r"]


def encode(lines, endings, mark, last_end):
    """File bytes of ``lines`` ended by ``endings``, maybe a byte-order mark first and the
    last line end left out."""
    text = ("\ufeff" if mark else "") + "".join(a + b for a, b in zip(lines, endings))
    return (text if last_end or not text else text[:-1]).encode()


def file_bytes(lines):
    """One file: ``lines`` (a strategy of line lists) with random line ends, or random bytes."""
    structured = lines.flatmap(lambda ls: st.builds(
        encode, st.just(ls), st.lists(st.sampled_from(ENDINGS), min_size=len(ls),
                                      max_size=len(ls)), st.booleans(), st.booleans()))
    return st.one_of(structured, structured, structured, st.binary(max_size=60))


def parallel_files(width, rows, broken_rows=None):
    """The ``width`` files of one corpus from rows of lines (``rows``: a strategy of tuples,
    one line of each file), so that line counts mostly agree; each file gets its own line
    ends, and sometimes an extra line or random bytes. A quarter of the corpora take their
    rows from ``broken_rows`` instead, if given."""
    def build(rows):
        files = [[row[k] for row in rows] for k in range(width)]
        return st.tuples(*(file_bytes(st.sampled_from([lines] * 4 + [lines + ["a"]]))
                           for lines in files))

    corpora = [st.lists(rows, max_size=7)] * 3
    if broken_rows is not None:
        corpora.append(st.lists(broken_rows, max_size=7))
    return st.one_of(corpora).flatmap(build)


def with_positions(sentence):
    """``(sentence, a reorder line of it)``."""
    return st.permutations(range(len(sentence.split()))).map(
        lambda p: (sentence, " ".join(map(str, p))))


def with_links(source, target):
    """``(source, target, links inside the pair)``."""
    n_src, n_tgt = len(source.split()), len(target.split())
    inside = st.lists(st.tuples(st.integers(0, max(n_src - 1, 0)),
                                st.integers(0, max(n_tgt - 1, 0))), max_size=8)
    return inside.map(lambda ls: (source, target, " ".join(f"{i}-{j}" for i, j in ls)))


words = st.lists(st.sampled_from(TOKENS), max_size=6).map(" ".join)
word_file = file_bytes(st.lists(words, max_size=7))
links = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=6).map(
    lambda ls: " ".join(f"{i}-{j}" for i, j in ls))
permutation_lines = st.permutations(range(5)).flatmap(
    lambda p: st.integers(0, 5).map(lambda n: " ".join(str(v) for v in p if v < n)))
positions_or_words = st.one_of(permutation_lines, permutation_lines, words)
aligner_words = st.lists(st.sampled_from(["a", "b", "low", "lowest", "c"]), min_size=1,
                         max_size=5).map(" ".join)
codes_file = file_bytes(st.one_of(st.just(["a b 5", "ab c 3"]), st.lists(
    st.one_of(st.just("a b 5"), st.just("ab c 3"), words), max_size=4)))
parallel = st.sampled_from([("1", "100"), ("2", "1")])  # --workers, --chunk-size


@fuzz_settings(30)
@given(word_file, parallel, st.booleans())
def test_tokenize(text, workers, tokenize):
    # the Moses rules loaded here once, which forked workers inherit, not in every worker
    tokenize_line("a", "en")
    with files(**{"in.en": text}) as folder:
        check_rule("xlpe-tokenize", folder,
                   ["--lang", "en", "--input", str(folder / "in.en"), "--output",
                    str(folder / "out" / "tok.en"), "--workers", workers[0],
                    "--chunk-size", workers[1]] + ([] if tokenize else ["--no-tokenize"]),
                   {"out/tok.en": "in.en"})


@fuzz_settings(30)
@given(word_file, codes_file, parallel)
def test_bpe_apply(text, codes, workers):
    with files(**{"tok.en": text, "codes": codes}) as folder:
        check_rule("xlpe-bpe", folder,
                   ["apply", "--codes", str(folder / "codes"), "--input", str(folder / "tok.en"),
                    "--output", str(folder / "bpe.en"), "--workers", workers[0],
                    "--chunk-size", workers[1]], {"bpe.en": "tok.en"})


@fuzz_settings(20)
@given(word_file)
def test_bpe_learn(text):
    with files(**{"tok.en": text}) as folder:
        check_rule("xlpe-bpe", folder, ["learn", "--input", str(folder / "tok.en"), "--codes",
                                        str(folder / "codes"), "--merges", "5", "--workers",
                                        "1", "--min-frequency", "1"], {"codes": None})


@fuzz_settings(40)
@given(parallel_files(3, st.tuples(words, words).flatmap(lambda pair: with_links(*pair)),
                      st.tuples(words, words, st.one_of(links, words))),
    st.sampled_from(["dpe", "btg"]), parallel)
def test_reorder(corpus, method, workers):
    source, target, alignment = corpus
    with files(**{"s.he": source, "t.en": target, "a.align": alignment}) as folder:
        status = check_rule("xlpe-reorder", folder,
                            ["--method", method, "--source", str(folder / "s.he"),
                             "--target", str(folder / "t.en"), "--alignment",
                             str(folder / "a.align"), "--output", str(folder / "r"),
                             "--workers", workers[0], "--chunk-size", workers[1]],
                            {"r": "s.he"})
        if status == 0:
            for lineno, (line, positions) in enumerate(
                    zip(read_lines(folder / "s.he"), read_lines(folder / "r")), start=1):
                parse_reorder_line(positions, len(line.split()), "r", lineno)


@fuzz_settings(30)
@given(parallel_files(2, words.flatmap(with_positions), st.tuples(words, positions_or_words)),
       parallel)
def test_reorder_text(corpus, workers):
    source, reorder = corpus
    with files(**{"s.he": source, "s.reorder": reorder}) as folder:
        status = check_rule("xlpe-reorder-text", folder,
                            ["--source", str(folder / "s.he"), "--reorder",
                             str(folder / "s.reorder"), "--output", str(folder / "out"),
                             "--workers", workers[0], "--chunk-size", workers[1]],
                            {"out": "s.he"})
        if status == 0:
            assert [sorted(line.split()) for line in read_lines(folder / "out")] == \
                [sorted(line.split()) for line in read_lines(folder / "s.he")]


@fuzz_settings(30)
@given(parallel_files(2, words.flatmap(with_positions).flatmap(
    lambda pair: with_positions(pair[1])), st.tuples(positions_or_words, positions_or_words)))
def test_reorder_score(corpus):
    hypothesis, reference = corpus
    with files(**{"h": hypothesis, "r": reference}) as folder:
        check_rule("xlpe-reorder-score", folder,
                   ["--hypothesis", str(folder / "h"), "--reference", str(folder / "r")], {})


@fuzz_settings(30)
@given(parallel_files(2, words.flatmap(with_positions).map(lambda pair: pair[::-1]),
                      st.tuples(positions_or_words, words)))
def test_binarize(corpus):
    reorder, source = corpus
    with files(**{"train.reorder": reorder, "train.he": source}) as folder:
        check_rule("xlpe-binarize", folder,
                   ["--reorder", str(folder / "train.reorder"), "--source",
                    str(folder / "train.he"), "--destdir", str(folder / "bin"), "--split",
                    "train", "--source-lang", "he", "--target-lang", "en"],
                   {"bin/train.reorder.he-en.bin": None, "bin/train.reorder.he-en.idx": None})


PREORDERER = {}


def preorderer_checkpoint():
    """A small untrained preorderer, saved once for the whole module."""
    if not PREORDERER:
        folder = tempfile.mkdtemp(prefix="xlpe-fuzz-")
        PREORDERER["path"] = os.path.join(folder, "preorderer.pt")
        Preorderer.create(Vocabulary.build([["a", "b", "c"]]), embed_dim=4, hidden_dim=4,
                          pair_dim=4).save(PREORDERER["path"])
    with open(PREORDERER["path"], "rb") as f:
        return f.read()


@fuzz_settings(30)
@given(word_file)
def test_preorder(source):
    with files(**{"s.he": source, "p.pt": preorderer_checkpoint()}) as folder:
        check_rule("xlpe-preorder", folder,
                   ["--preorderer", str(folder / "p.pt"), "--source", str(folder / "s.he"),
                    "--output", str(folder / "s.reorder")], {"s.reorder": "s.he"})


def generate_output_and_reference(hypotheses):
    """fairseq-generate output of ``hypotheses`` (in order) and a reference file of them."""
    generated = [f"H-{k}\t-0.5\t{text}" for k, text in enumerate(hypotheses)]
    return st.tuples(file_bytes(st.sampled_from([generated] * 4 + [generated[1:]])),
                     file_bytes(st.sampled_from([hypotheses] * 4 + [hypotheses + ["a"]])))


@fuzz_settings(30)
@given(st.lists(words, max_size=7).flatmap(generate_output_and_reference))
def test_bleu(corpus):
    generated, reference = corpus
    with files(**{"gen.out": generated, "ref.en": reference}) as folder:
        check_rule("xlpe-bleu", folder,
                   ["--generate-output", str(folder / "gen.out"), "--reference",
                    str(folder / "ref.en"), "--target-lang", "en", "--json",
                    str(folder / "bleu.json")], {"bleu.json": None})


@fuzz_settings(6)
@given(parallel_files(2, st.tuples(aligner_words, aligner_words)))
def test_align(corpus):
    source, target = corpus
    with files(**{"s.he": source, "t.en": target}) as folder:
        check_rule("xlpe-align", folder,
                   ["--source", str(folder / "s.he"), "--target", str(folder / "t.en"),
                    "--output", str(folder / "a.align"), "--workers", "1"],
                   {"a.align": "s.he"})
