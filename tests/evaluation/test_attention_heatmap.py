"""xlpe-attention-heatmap: forced-decoding attention of two tiny checkpoints in one PNG."""
import numpy as np
import pytest

from evaluation.tiny_checkpoints import session_checkpoints, session_lstm_checkpoint
from xlpe_fairseq.evaluation.attention_heatmap import display_token, forced_attention, main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return session_checkpoints(tmp_path_factory)


def test_right_to_left_tokens_are_drawn_in_visual_order():
    assert display_token("s1@@") == "s1@@"
    # letters reversed, each vowel point stays on its letter, the BPE marker stays last
    assert display_token("\u05d1\u05b9\u05e7@@") == "\u05e7\u05d1\u05b9@@"


def test_attention_rows_are_distributions_over_the_source(tiny):
    corpus, checkpoints = tiny
    attention, source, target, layer = forced_attention(
        str(checkpoints["tied"]), str(corpus["data_bin"]), "test", 3)
    assert layer == 0, "the penultimate of two decoder layers"
    expected_source = (corpus["bpe"] / "test.xx").read_text().splitlines()[3].split() + ["</s>"]
    expected_target = (corpus["bpe"] / "test.yy").read_text().splitlines()[3].split() + ["</s>"]
    assert (source, target) == (expected_source, expected_target)
    assert attention.shape == (len(target), len(source))
    np.testing.assert_allclose(attention.sum(axis=1), 1.0, rtol=1e-5)


def test_an_lstm_shows_its_one_attention(tiny, tmp_path_factory):
    corpus, _ = tiny
    attention, source, target, layer = forced_attention(
        str(session_lstm_checkpoint(tmp_path_factory)), str(corpus["data_bin"]), "test", 3)
    assert layer == 1, "an LSTM's attention comes after its last (second) layer"
    assert attention.shape == (len(target), len(source))
    np.testing.assert_allclose(attention.sum(axis=1), 1.0, rtol=1e-5)


def test_heatmap_png_of_two_checkpoints(tiny, tmp_path):
    corpus, checkpoints = tiny
    output = tmp_path / "heatmap.png"
    main(["--checkpoint", f"tied={checkpoints['tied']}", f"untied={checkpoints['untied']}",
          "--data-bin", str(corpus["data_bin"]), "--index", "1", "--output", str(output)])
    assert output.read_bytes().startswith(PNG_MAGIC)


def test_index_out_of_range_names_the_data(tiny, tmp_path, capsys):
    corpus, checkpoints = tiny
    with pytest.raises(SystemExit):
        main(["--checkpoint", str(checkpoints["tied"]), str(checkpoints["untied"]),
              "--data-bin", str(corpus["data_bin"]), "--index", "999",
              "--output", str(tmp_path / "x.png")])
    assert "no index 999" in capsys.readouterr().err
