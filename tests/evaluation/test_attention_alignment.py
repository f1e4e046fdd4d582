"""xlpe-aer on a tiny checkpoint: attention links of the penultimate decoder layer, merged
from BPE pieces to words, scored against the exact synthetic gold; aligner links as rows."""
import json

import pytest

from evaluation.tiny_checkpoints import session_checkpoints, session_lstm_checkpoint
from xlpe_fairseq.evaluation.alignment_error_rate import read_predicted, word_index_of_pieces
from xlpe_fairseq.evaluation.attention_alignment import attention_links, load_model, main


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return session_checkpoints(tmp_path_factory)


def piece_links(word_links, source_pieces, target_pieces):
    """Every piece pair of linked words: BPE-level links that merge back to ``word_links``."""
    source_word, target_word = word_index_of_pieces(source_pieces), word_index_of_pieces(target_pieces)
    return {(i, j) for i, wi in enumerate(source_word) for j, wj in enumerate(target_word)
            if (wi, wj) in word_links}


def test_model_and_aligner_rows(tiny, tmp_path):
    corpus, checkpoints = tiny
    checkpoint = checkpoints["tied"]
    raw, bpe = corpus["raw"], corpus["bpe"]
    sources = [line.split() for line in (bpe / "test.xx").read_text().splitlines()]
    targets = [line.split() for line in (bpe / "test.yy").read_text().splitlines()]
    gold = read_predicted(raw / "test.align")
    oracle = tmp_path / "oracle.bpe.align"
    oracle.write_text("".join(
        " ".join(f"{i}-{j}" for i, j in sorted(piece_links(g, s, t))) + "\n"
        for g, s, t in zip(gold, sources, targets)
    ))
    result = tmp_path / "aer.json"
    main(["--gold", str(raw / "test.align"), "--source-bpe", str(bpe / "test.xx"),
          "--target-bpe", str(bpe / "test.yy"), "--checkpoint", f"model={checkpoint}",
          "--data-bin", str(corpus["data_bin"]), "--bpe-links", f"oracle={oracle}",
          "--links", f"gold={raw / 'test.align'}", "--write-links", str(tmp_path / "links"),
          "--json", str(result)])
    rows = {row["name"]: row for row in json.loads(result.read_text())}
    assert rows["gold"]["aer"] == 0.0 and rows["oracle"]["aer"] == 0.0
    assert 0.0 <= rows["model"]["aer"] <= 1.0 and rows["model"]["sentences"] == 12

    predicted = read_predicted(tmp_path / "links" / "model.align")
    assert len(predicted) == 12
    for links, source_line, target_line in zip(
        predicted, (raw / "test.xx").read_text().splitlines(), (raw / "test.yy").read_text().splitlines()
    ):
        source_words, target_words = len(source_line.split()), len(target_line.split())
        assert all(i < source_words and j < target_words for i, j in links)
        # argmax attention links every target piece, hence every target word
        assert {j for _, j in links} == set(range(target_words))


def test_bpe_text_that_does_not_match_the_binarized_split_names_the_line(tiny, capsys):
    corpus, checkpoints = tiny
    checkpoint = checkpoints["tied"]
    raw = corpus["raw"]
    with pytest.raises(SystemExit) as exit_info:
        main(["--gold", str(raw / "test.align"), "--source-bpe", str(raw / "test.xx"),
              "--target-bpe", str(raw / "test.yy"), "--checkpoint", str(checkpoint),
              "--data-bin", str(corpus["data_bin"])])
    assert exit_info.value.code == 1
    assert "test.xx:" in capsys.readouterr().err



def test_lstm_reads_its_attention_columns_in_its_own_padding(tiny, tmp_path_factory):
    """fairseq's LSTM right-pads the source that the task left-pads, and so are the columns
    of its attention: a left-padded batch must give the links of a right-padded one."""
    corpus, _ = tiny
    checkpoint = session_lstm_checkpoint(tmp_path_factory)
    links = {}
    for left_pad in (True, False):
        model, task = load_model(str(checkpoint), str(corpus["data_bin"]))
        task.cfg.left_pad_source = left_pad
        links[left_pad] = attention_links(model, task, "test")
    assert len({source_length for _, source_length, _ in links[True]}) > 1, (
        "the test split needs sentences of several lengths, else nothing is padded")
    assert links[True] == links[False], "an LSTM's links changed with the source's padding"
    for sentence_links, source_length, target_length in links[True]:
        assert {j for _, j in sentence_links} == set(range(target_length))
        assert all(i < source_length for i, _ in sentence_links), "a link points past the source"
