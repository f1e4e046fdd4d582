"""The data fingerprint a checkpoint carries: what a model learned from, its dictionaries and
its training split."""
from xlpe_fairseq.io.digests import data_fingerprint


def test_the_fingerprint_covers_dictionaries_and_the_training_split_only(tmp_path):
    data_bin = tmp_path / "data-bin"
    data_bin.mkdir()
    for name, text in (("dict.en.txt", "a 1\n"), ("dict.fr.txt", "b 1\n"),
                       ("train.en-fr.en.bin", "1"), ("test.en-fr.en.bin", "2")):
        (data_bin / name).write_text(text)
    before = data_fingerprint([str(data_bin)])
    (data_bin / "test.en-fr.en.bin").write_text("a new test set")
    assert data_fingerprint([str(data_bin)]) == before, "a new test split decodes"
    (data_bin / "train.en-fr.en.bin").write_text("other training data")
    assert data_fingerprint([str(data_bin)])["train"] != before["train"]
