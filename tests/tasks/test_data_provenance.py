"""A checkpoint carries the fingerprint of the data it learned from, and fairseq's own commands
hold it to the data-bin they are given: other dictionaries are refused in fairseq-generate, a
resume on another training split or model in fairseq-train, in one line each."""
import shutil

import pytest
import torch

from support.errors import assert_plugin_error
from support.fairseq_commands import USER_DIR, generate, run, training_args
from synthetic_corpus import preprocess_corpus, write_corpus
from xlpe_fairseq.io.digests import CHECKPOINT_KEY, data_fingerprint


def train(data_bin, save_dir, max_update, family="reorder-emb", *extra, expect_failure=False):
    return run("fairseq_cli.train", *training_args(data_bin, family, save_dir, max_update),
               "--no-epoch-checkpoints", *extra, expect_failure=expect_failure)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """Two data-bins of the synthetic corpus: the first's training split, and another drawn
    with another seed (other dictionaries), and a checkpoint trained on the first."""
    root = tmp_path_factory.mktemp("provenance")
    first = preprocess_corpus(write_corpus(root / "raw", sizes={"train": 120, "valid": 8,
                                                                  "test": 8}), root / "first")
    other = preprocess_corpus(write_corpus(root / "raw-other", sizes={"train": 60, "valid": 8,
                                                                        "test": 8}, seed=7),
                              root / "other")
    train(first, root / "checkpoints", 2)
    return root, first, other


def test_every_checkpoint_records_the_dictionaries_and_training_split_it_learned_from(corpora):
    root, first, _ = corpora
    state = torch.load(root / "checkpoints" / "checkpoint_last.pt", weights_only=False)
    assert state["task_state"][CHECKPOINT_KEY] == data_fingerprint([str(first)])


def test_generate_refuses_a_checkpoint_on_a_data_bin_of_other_dictionaries(corpora):
    root, first, other = corpora
    assert (first / "dict.xx.txt").read_text() != (other / "dict.xx.txt").read_text()
    result = run("fairseq_cli.generate", other, "--user-dir", USER_DIR, "--task",
                 "translation_reorder", "--path", root / "checkpoints" / "checkpoint_last.pt",
                 "--gen-subset", "test", "--beam", "1", expect_failure=True)
    assert_plugin_error(result, 1, f"trained on {first}, not on {other}")
    assert "its token ids mean other words here" in result.stderr


def test_a_new_test_set_binarized_with_the_model_s_dictionaries_decodes(corpora, tmp_path):
    """The usual way to score a trained model on a new test set: a data-bin of the model's
    dictionaries and a test split only."""
    root, first, _ = corpora
    test_only = tmp_path / "test-only"
    test_only.mkdir()
    for path in first.iterdir():
        if path.name.startswith(("dict.", "test.")):
            shutil.copy(path, test_only / path.name)
    result = generate(test_only, root / "checkpoints" / "checkpoint_last.pt", "--beam", "1")
    assert result.stdout.count("\nH-") + result.stdout.startswith("H-") == 8


def test_train_refuses_to_resume_on_another_training_split(corpora, tmp_path):
    root, first, _ = corpora
    changed = tmp_path / "changed"
    shutil.copytree(first, changed)
    # the same dictionaries, one training sentence fewer
    shutil.copytree(root / "checkpoints", tmp_path / "checkpoints")
    raw = write_corpus(tmp_path / "raw", sizes={"train": 120, "valid": 8, "test": 8})
    for lang in ("xx", "yy"):
        lines = (raw / f"train.{lang}").read_text().splitlines()[:-1]
        (raw / f"train.{lang}").write_text("\n".join(lines) + "\n")
    rebuilt = tmp_path / "rebuilt"
    run("fairseq_cli.preprocess", "--source-lang", "xx", "--target-lang", "yy", "--trainpref",
        raw / "train", "--destdir", rebuilt, "--srcdict", first / "dict.xx.txt", "--tgtdict",
        first / "dict.yy.txt", "--workers", "1")
    for path in rebuilt.glob("train.*"):
        shutil.copy(path, changed / path.name)
    assert ((changed / "train.xx-yy.xx.idx").read_bytes()
            != (first / "train.xx-yy.xx.idx").read_bytes())
    result = train(changed, tmp_path / "checkpoints", 4, expect_failure=True)
    assert_plugin_error(result, 1, "checkpoint_last.pt", "cannot resume", "trained on")
    assert "its training split differs" in result.stderr and "--restart" in result.stderr
    # fine-tuning on new data with the model's dictionaries is what --restore-file is for
    train(changed, tmp_path / "fine-tuned", 4, "reorder-emb", "--restore-file",
          tmp_path / "checkpoints" / "checkpoint_last.pt", "--reset-optimizer",
          "--reset-dataloader", "--reset-meters", "--reset-lr-scheduler")


def test_train_refuses_to_resume_a_checkpoint_of_another_model(corpora, tmp_path):
    root, first, _ = corpora
    shutil.copytree(root / "checkpoints", tmp_path / "checkpoints")
    before = (tmp_path / "checkpoints" / "checkpoint_last.pt").read_bytes()
    result = train(first, tmp_path / "checkpoints", 4, "rope", expect_failure=True)
    assert_plugin_error(result, 1, "cannot resume", "transformer_reorder_emb",
                        "transformer_rope")
    assert (tmp_path / "checkpoints" / "checkpoint_last.pt").read_bytes() == before
    result = train(first, tmp_path / "checkpoints", 4, "reorder-emb", "--encoder-layers", "2",
                   expect_failure=True)
    assert_plugin_error(result, 1, "cannot resume", "other parameters", "encoder.layers.1.")
