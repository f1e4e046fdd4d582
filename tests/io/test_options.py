"""Option values: one rule for every numeric option, and option strings that must split into
shell words."""
import argparse

import pytest

from xlpe_fairseq.io import OptionError
from xlpe_fairseq.io.options import (
    SEED,
    WORKERS,
    Number,
    default_workers,
    positive_int,
    shell_words,
)


@pytest.mark.parametrize("text", ["0", "-3", "1.5", "x", "", "nan", "inf", "1e3", "9" * 5000])
def test_positive_int_refuses_what_is_not_a_positive_integer(text):
    with pytest.raises(argparse.ArgumentTypeError,
                       match="expected a whole number from 1 to 9223372036854775807, got"):
        positive_int(text)


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "1e400", "abc", "", "0"])
def test_a_real_number_is_finite_and_in_range(text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected a finite number above 0"):
        Number(float, above=0)(text)


def test_values_in_range_pass_unchanged():
    assert Number(float, minimum=0, below=1)("0") == 0.0
    assert Number(float, minimum=0, maximum=100)(" 100 ") == 100.0
    assert SEED("4294967295") == 2 ** 32 - 1
    assert WORKERS(str(default_workers())) == default_workers()


def test_workers_are_capped_at_the_cores():
    with pytest.raises(argparse.ArgumentTypeError,
                       match=rf"from 1 to {default_workers()} \(the cores this process may "
                             rf"use\), got '{default_workers() + 22}'"):
        WORKERS(str(default_workers() + 22))


@pytest.mark.parametrize("value", [0, -5, float("nan"), float("inf"), 1.5, "10", True])
def test_check_refuses_a_value_that_came_another_way(value):
    with pytest.raises(OptionError, match="^--dpe-layers must be a whole number from 1 to 64, "):
        Number(int, minimum=1, maximum=64).check("--dpe-layers", value)


def test_an_unbalanced_quote_is_a_usage_error():
    assert shell_words("--beam 5 --x 'a b'") == "--beam 5 --x 'a b'"
    with pytest.raises(argparse.ArgumentTypeError, match="No closing quotation"):
        shell_words("--beam '5")


@pytest.mark.parametrize("words, value", [
    (["--log-interval", "10"], "10"),
    (["--log-interval", "10", "--cpu", "--log-interval=5"], "5"),
    (["--log-interval=5", "--log-interval", "100"], "100"),
    (["--cpu", "--log-interval"], None),
    (["--log-intervals", "3"], None),
])
def test_option_value_is_the_last_one_given_as_fairseq_reads_it(words, value):
    from xlpe_fairseq.io import option_value

    assert option_value(words, "--log-interval") == value, words
