"""``xlpe-dpe-order``: the order a DPE network predicts, written as a reorder file."""
from types import SimpleNamespace

import pytest
import torch
from fairseq.data import Dictionary

from xlpe_fairseq.evaluation import dpe_order as dpe_order_module
from xlpe_fairseq.evaluation.dpe_order import main, nearest_positions, ranked_positions
from xlpe_fairseq.modules import SinusoidalPositionsAt

DIM = 16


class FixedOutputs:
    """A transformer_dpe stand-in whose DPE network outputs the sinusoids of given positions."""

    def __init__(self, positions, padding_idx):
        table = SinusoidalPositionsAt(DIM, padding_idx)
        self.order_targets = table
        self.encoder = SimpleNamespace(
            embed_tokens=lambda tokens: torch.zeros(*tokens.shape, DIM),
            dynamic_positions=lambda tokens, embeddings: table(positions) + 0.01)


def test_ranking_breaks_ties_by_the_earlier_word():
    assert ranked_positions([2, 0, 0, 1], [0, 1, 2, 3]) == [3, 0, 1, 2], \
        "words 1 and 2 both predict position 0: the earlier goes first"
    assert ranked_positions([0, 1, 2], [0, 1, 2]) == [0, 1, 2]
    assert ranked_positions([], []) == []


def test_each_word_takes_the_sentence_position_nearest_its_output():
    vocab = Dictionary()
    pad, eos = vocab.pad(), vocab.eos()
    # left-padded; sentence 0's words output the sinusoids of 2, 0, 3 (3 is EOS's position,
    # no candidate: the nearest word position is 2); sentence 1 has one word
    src_tokens = torch.LongTensor([[5, 6, 7, eos], [pad, pad, 8, eos]])
    outputs = torch.LongTensor([[2, 0, 3, 3], [-1, -1, 0, 1]])
    sentences = nearest_positions(FixedOutputs(outputs, pad), src_tokens, pad, eos)
    assert sentences == [([2, 0, 2], [0, 1, 2]), ([0], [0])], sentences
    assert ranked_positions(*sentences[0]) == [1, 0, 2]


def test_bad_inputs_fail_in_one_line_and_write_nothing(tmp_path, monkeypatch, capsys):
    checkpoint = tmp_path / "model.pt"
    checkpoint.write_bytes(b"weights")
    data_bin = tmp_path / "data-bin"
    data_bin.mkdir()
    (data_bin / "valid.xx-yy.xx.bin").write_bytes(b"")
    output = tmp_path / "out.reorder"
    # a checkpoint of another model: its encoder has no DPE network
    monkeypatch.setattr(dpe_order_module, "load_model",
                        lambda checkpoint, data_bin: (torch.nn.Linear(1, 1), None))
    cases = [
        (["--checkpoint", tmp_path / "missing.pt", "--data-bin", data_bin],
         "missing.pt: no such file"),
        (["--checkpoint", checkpoint, "--data-bin", tmp_path / "nowhere"], "no such directory"),
        (["--checkpoint", checkpoint, "--data-bin", data_bin, "--split", "dev"], "no split 'dev'"),
        (["--checkpoint", checkpoint, "--data-bin", data_bin], "has no DPE network"),
        (["--checkpoint", checkpoint, "--data-bin", data_bin, "--output", checkpoint],
         "model.pt"),
    ]
    for args, expected in cases:
        with pytest.raises(SystemExit) as exit_:
            main([*map(str, args), *(["--output", str(output)] if "--output" not in args else [])])
        error = capsys.readouterr().err.strip().splitlines()
        assert exit_.value.code == 1, f"{args}: exit {exit_.value.code}"
        assert len(error) == 1 and error[0].startswith("xlpe-dpe-order: error: "), error
        assert expected in error[0], f"expected {expected!r} in {error[0]!r}"
        assert not output.exists(), f"{args}: a failed run leaves no output"
    assert checkpoint.read_bytes() == b"weights", "the input must not be overwritten"
