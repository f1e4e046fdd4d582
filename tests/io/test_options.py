"""argparse types of the commands' options."""
import argparse

import pytest

from xlpe_fairseq.io.options import positive_int


@pytest.mark.parametrize("text", ["0", "-3", "1.5", "x"])
def test_positive_int_refuses_what_is_not_a_positive_integer(text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected a positive integer"):
        positive_int(text)
