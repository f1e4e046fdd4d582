"""Reorder-line parsing and permutation checks, with the error messages users will see."""
import pytest

from xlpe_fairseq.data.reorder_file import parse_reorder_line, validate_permutation
from xlpe_fairseq.plugin_errors import InputError, ReorderFileError


def test_parses_a_valid_line():
    assert parse_reorder_line("2 0 1\n", 3, "train.reorder", 4) == [2, 0, 1]


def test_empty_line_for_empty_source():
    assert parse_reorder_line("\n", 0, "train.reorder", 1) == []


def test_wrong_token_count_names_file_line_expected_found():
    with pytest.raises(ReorderFileError, match=r"train.reorder line 7: expected 3 .*found 2"):
        parse_reorder_line("1 0", 3, "train.reorder", 7)


def test_non_integer():
    with pytest.raises(ReorderFileError, match=r"train.reorder line 2: 'x' is not an integer"):
        parse_reorder_line("0 x 1", 3, "train.reorder", 2)


def test_out_of_range():
    with pytest.raises(ReorderFileError, match=r"line 3: position 3 .*out of range 0..2"):
        parse_reorder_line("0 3 1", 3, "train.reorder", 3)


def test_negative_is_out_of_range():
    with pytest.raises(ReorderFileError, match=r"position -1 .*out of range"):
        parse_reorder_line("0 -1 1", 3, "f", 1)


def test_minus_one_where_a_permutation_is_needed_explains_skip():
    with pytest.raises(ReorderFileError, match=r"f line 1: position -1 \(token 1\) is out of range "
                                               r"0..2 \(-1 marks a token without an order target.*"
                                               r"--unaligned skip.*only DPE's order loss"):
        parse_reorder_line("0 -1 1", 3, "f", 1)


def test_order_targets_accept_tokens_without_target():
    assert parse_reorder_line("1 -1 0 -1", 4, "f", 1, allow_no_target=True) == [1, -1, 0, -1]
    assert parse_reorder_line("-1 -1", 2, "f", 1, allow_no_target=True) == [-1, -1]
    validate_permutation([2, 0, 1], 3, "x", allow_no_target=True)


@pytest.mark.parametrize("line,message", [
    # 2 tokens have a target, so they must be ranked 0..1
    ("2 -1 0", r"f line 4: position 2 \(token 0\) is out of range 0..1 \(2 tokens have an order target\)"),
    ("0 -1 0", r"f line 4: position 0 occurs twice, so the line is not a permutation of 0..1"),
    ("0 -2 1", r"f line 4: position -2 \(token 1\) is out of range 0..2"),
])
def test_partial_permutation_is_still_checked(line, message):
    with pytest.raises(ReorderFileError, match=message):
        parse_reorder_line(line, 3, "f", 4, allow_no_target=True)


def test_duplicate_is_not_a_permutation():
    with pytest.raises(ReorderFileError, match=r"position 1 occurs twice.*not a permutation"):
        parse_reorder_line("1 1 0", 3, "train.reorder", 5)


def test_validate_permutation_accepts_any_int_sequence():
    validate_permutation(range(4), 4, "x")
    validate_permutation((3, 2, 1, 0), 4, "x")


def test_validate_permutation_uses_where_in_message():
    with pytest.raises(ReorderFileError, match=r"^data/train.reorder line 9: expected 2"):
        validate_permutation([0], 2, "data/train.reorder line 9")


def test_error_is_bad_input_that_commands_report_in_one_line():
    assert issubclass(ReorderFileError, InputError), "run_command turns InputError into one line"
