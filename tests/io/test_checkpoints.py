"""Checkpoints read by one loader: a name that is no file is one line naming it."""
import pytest

from xlpe_fairseq.io.checkpoints import read_checkpoint
from xlpe_fairseq.io.errors import InputError


def test_an_empty_checkpoint_name_is_refused_as_such():
    with pytest.raises(InputError, match="^'': an empty name, expected a preorderer$"):
        read_checkpoint("", "preorderer")
