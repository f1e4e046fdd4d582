"""Reading the preorderer's training data: all of it, or a bounded seeded sample."""
import tracemalloc

import pytest

from xlpe_fairseq.io import InputError
from xlpe_fairseq.plugin_errors import ReorderFileError
from xlpe_fairseq.preordering import train
from xlpe_fairseq.preordering.corpus import read_sample_with_reorder, read_source_with_reorder
from xlpe_fairseq.preordering.preorderer import Preorderer


def write_corpus(tmp_path, lines, name="train"):
    """``lines`` sentences ``w{k} x{k} y{k}`` with positions ``2 0 1`` (``0 1 2`` every 5th)."""
    source = tmp_path / f"{name}.src"
    reorder = tmp_path / f"{name}.reorder"
    source.write_text("".join(f"w{k} x{k} y{k}\n" for k in range(lines)))
    reorder.write_text("".join("0 1 2\n" if k % 5 == 0 else "2 0 1\n" for k in range(lines)))
    return str(source), str(reorder)


def test_a_sample_is_a_subset_of_the_pairs_as_they_are(tmp_path):
    source, reorder = write_corpus(tmp_path, 1000)
    sentences, positions = read_sample_with_reorder(source, reorder, 100, seed=1)
    assert len(sentences) == len(positions) == 100, "the sample has the size asked for"
    every = dict(zip(map(tuple, read_source_with_reorder(source, reorder)[0]),
                     read_source_with_reorder(source, reorder)[1]))
    for sentence, order in zip(sentences, positions):
        assert every[tuple(sentence)] == order, f"{sentence}: positions of another line"
    indices = [int(s[0][1:]) for s in sentences]
    assert indices == sorted(indices), "sampled lines keep the corpus's order"


def test_the_sample_depends_on_its_seed_only(tmp_path):
    source, reorder = write_corpus(tmp_path, 1000)
    first = read_sample_with_reorder(source, reorder, 50, seed=1)[0]
    assert read_sample_with_reorder(source, reorder, 50, seed=1)[0] == first, \
        "ensemble members given one --sample-seed must train on one sample"
    assert read_sample_with_reorder(source, reorder, 50, seed=2)[0] != first


@pytest.mark.parametrize("size", [1000, 5000])
def test_a_sample_as_large_as_the_corpus_is_the_corpus(tmp_path, size):
    source, reorder = write_corpus(tmp_path, 1000)
    assert read_sample_with_reorder(source, reorder, size, seed=1) == \
        read_source_with_reorder(source, reorder)


def test_memory_holds_the_sample_not_the_corpus(tmp_path):
    source, reorder = write_corpus(tmp_path, 200000)
    tracemalloc.start()
    try:
        read_sample_with_reorder(source, reorder, 1000, seed=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the whole corpus as token lists takes ~100 MB; the sample's index set and 1,000 lines
    # well under 10
    assert peak < 10 * 2**20, f"reading a sample of 1,000 of 200,000 lines peaked at " \
        f"{peak / 2**20:.1f} MiB: the corpus is held in memory"


def test_every_reorder_line_is_checked_not_only_the_sampled_ones(tmp_path):
    source, reorder = write_corpus(tmp_path, 100)
    lines = open(reorder).read().splitlines()
    lines[73] = "0 1"
    open(reorder, "w").write("\n".join(lines) + "\n")
    with pytest.raises(ReorderFileError, match=r"line 74"):
        read_sample_with_reorder(source, reorder, 1, seed=1)


def test_unequal_files_are_refused(tmp_path):
    source, reorder = write_corpus(tmp_path, 100)
    open(reorder, "a").write("0 1 2\n")
    with pytest.raises(InputError, match="differ in length"):
        read_sample_with_reorder(source, reorder, 10, seed=1)


def test_the_training_command_trains_on_the_sample(tmp_path, capsys):
    source, reorder = write_corpus(tmp_path, 400)
    model = str(tmp_path / "preorderer.pt")
    train.main(["--source", source, "--reorder", reorder, "--save", model, "--epochs", "1",
                "--hidden-dim", "8", "--embed-dim", "8", "--pair-dim", "8", "--threads", "1",
                "--sample", "40", "--sample-seed", "3"])
    assert "epoch 1:" in capsys.readouterr().err
    vocabulary = Preorderer.load(model).vocabulary
    # 40 sampled sentences of 3 words each: 120 words and the special tokens, of the 1,200
    assert 120 <= len(vocabulary) < 130, f"a vocabulary of {len(vocabulary)} tokens: the " \
        "model did not train on the 40 sampled sentences alone"
