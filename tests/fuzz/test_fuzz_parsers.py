"""Property tests of the parsers every command relies on: line reading, reorder lines,
alignment links, BPE codes, and the reorder rules over random alignments.

Each parser either returns a well-formed result or raises the tool's own input error naming
the file and line; no other exception. Budgets: fuzz_settings.py.
"""
import os
import tempfile

from hypothesis import assume, given, strategies as st

from fuzz.fuzz_settings import fuzz_settings
from xlpe_fairseq.io import InputError, count_lines, read_lines
from xlpe_fairseq.preprocessing.bpe import read_codes
from xlpe_fairseq.reordering.btg_rules import btg_positions
from xlpe_fairseq.reordering.dpe_rules import UNALIGNED_CHOICES, dpe_positions
from xlpe_fairseq.reordering.extract import parse_link_columns, parse_links
from xlpe_fairseq.data.reorder_file import parse_reorder_line
from xlpe_fairseq.plugin_errors import ReorderFileError
from xlpe_fairseq.reordering.reorder_text import reorder_tokens

# characters that break line handling: line ends of other conventions, separators that
# str.splitlines honours, a byte-order mark, NUL, digits that are not ASCII
AWKWARD = ["\r", "\r\n", "\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\ufeff", "\x00", "\t",
           " ", "²", "١", "-", "@@", "é"]
awkward_text = st.lists(st.one_of(st.sampled_from(AWKWARD), st.text(max_size=4)),
                        max_size=30).map("".join)
file_bytes = st.one_of(st.binary(max_size=200), awkward_text.map(str.encode))


def with_file(data, check):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "input.txt")
        with open(path, "wb") as f:
            f.write(data)
        check(path)


@fuzz_settings(200)
@given(file_bytes)
def test_reading_agrees_with_counting_or_names_the_line(data):
    def check(path):
        try:
            lines = read_lines(path)
        except InputError as error:
            assert str(error).startswith(f"{path} line "), error
            return
        assert len(lines) == count_lines(path), (data, lines)
        assert not any("\n" in line or "\r" in line for line in lines), lines

    with_file(data, check)


@fuzz_settings(200)
@given(file_bytes)
def test_codes_parse_or_name_the_line(data):
    def check(path):
        try:
            merges = read_codes(path)
        except InputError as error:
            assert str(error).startswith(path), error
            return
        assert merges and all(len(m) == 3 and m[0] and m[1] and m[2] >= 0 for m in merges)

    with_file(data, check)


@fuzz_settings(300)
@given(awkward_text, st.integers(0, 6))
def test_reorder_lines_parse_to_permutations_or_name_the_line(text, length):
    try:
        values = parse_reorder_line(text, length, "f.reorder", 7)
    except ReorderFileError as error:
        assert str(error).startswith("f.reorder line 7: "), error
        return
    assert sorted(values) == list(range(length)), (text, values)


@fuzz_settings(300)
@given(st.permutations(range(12)).flatmap(
    lambda p: st.tuples(st.just(p), st.integers(0, 12))))
def test_a_permutation_round_trips_and_reorders_every_token_once(case):
    permutation, n = case
    positions = [p for p in permutation if p < n]
    text = " ".join(map(str, positions))
    assert parse_reorder_line(text, n, "f", 1) == positions
    tokens = [f"t{k}" for k in range(n)]
    assert sorted(reorder_tokens(tokens, positions)) == sorted(tokens)


@fuzz_settings(300)
@given(awkward_text, st.integers(0, 5), st.integers(0, 5))
def test_links_parse_inside_the_sentence_pair_or_are_refused(text, n_src, n_tgt):
    try:
        links = parse_links(text, n_src, n_tgt)
    except InputError:
        try:
            parse_link_columns(text, n_src, n_tgt)
        except InputError:
            return
        raise AssertionError(f"parse_link_columns accepts {text!r}, parse_links does not")
    assert all(0 <= i < n_src and 0 <= j < n_tgt for i, j in links), links
    sources, targets = parse_link_columns(text, n_src, n_tgt)
    assert list(zip(sources, targets)) == links


alignments = st.integers(1, 14).flatmap(lambda n_src: st.tuples(
    st.just(n_src), st.integers(1, 14)).flatmap(lambda sizes: st.tuples(
        st.just(sizes[0]), st.just(sizes[1]),
        st.lists(st.tuples(st.integers(0, sizes[0] - 1), st.integers(0, sizes[1] - 1)),
                 max_size=30))))


@fuzz_settings(300)
@given(alignments, st.sampled_from(UNALIGNED_CHOICES), st.lists(st.booleans(), min_size=14,
                                                                 max_size=14))
def test_reorder_rules_give_permutations_for_any_alignment(alignment, unaligned, pieces):
    n_src, _, links = alignment
    positions = dpe_positions(n_src, links, unaligned)
    ranked = [p for p in positions if p != -1]
    assert len(positions) == n_src and sorted(ranked) == list(range(len(ranked))), positions
    assume(n_src > 0)
    # some tokens are BPE pieces of a word ("@@"), which btg moves together
    tokens = [f"w{k}@@" if piece and k < n_src - 1 else f"w{k}"
              for k, piece in zip(range(n_src), pieces)]
    positions = btg_positions(tokens, links)
    assert sorted(positions) == list(range(n_src)), positions
