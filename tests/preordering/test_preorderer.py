"""The preorderer learns systematic reordering and always predicts BTG-consistent permutations."""
import pytest
import torch

from xlpe_fairseq.preordering.metrics import corpus_scores, monotone_scores
from xlpe_fairseq.preordering.preorderer import Preorderer
from xlpe_fairseq.preordering.train import train_preorderer
from xlpe_fairseq.preordering.vocabulary import Vocabulary
from xlpe_fairseq.reordering.btg_rules import is_btg_reachable


@pytest.fixture(scope="module")
def trained(synthetic_train):
    return train_preorderer(*synthetic_train, epochs=4, hidden_dim=32, embed_dim=16,
                            pair_dim=16, batch_tokens=300)


def test_beats_monotone_on_systematic_reordering(trained, synthetic_test):
    sentences, reference = synthetic_test
    scores = corpus_scores(trained.predict(sentences), reference)
    monotone = monotone_scores(reference)
    assert scores["kendall_tau"] > monotone["kendall_tau"] + 0.1
    assert scores["fuzzy_reordering_score"] > monotone["fuzzy_reordering_score"] + 0.1


def test_predicts_a_btg_consistent_permutation_for_every_sentence(trained, synthetic_test):
    sentences = [[], ["noun1"], ["the", "adj3"], ["never-seen"] * 3,
                 ["the", "adj1", "noun2", "verb0", "word3"] * 60] + synthetic_test[0]
    predictions = trained.predict(sentences, max_tokens=50)
    for sentence, positions in zip(sentences, predictions):
        assert sorted(positions) == list(range(len(sentence)))
        assert is_btg_reachable(positions), positions


def test_results_do_not_depend_on_the_batching(trained, synthetic_test):
    sentences = synthetic_test[0][:40]
    one_by_one = [trained.predict([s])[0] for s in sentences]
    batched = trained.predict(sentences, max_tokens=64)
    assert batched == one_by_one, "the search works on rounded scores: batching must not matter"


def test_each_penalty_predicts_as_predict_with_that_penalty(trained, synthetic_test):
    """Tuning the penalty scores valid once and searches it per penalty: the result must be
    what predict gives under each penalty."""
    sentences = synthetic_test[0][:60]
    penalties = (0.0, 0.5, 2.0, 50.0)
    each = trained.predict_each_penalty(sentences, penalties, max_tokens=64)
    kept = trained.inversion_penalty
    try:
        for penalty in penalties:
            trained.inversion_penalty = penalty
            assert each[penalty] == trained.predict(sentences, max_tokens=64), penalty
    finally:
        trained.inversion_penalty = kept
    assert each[0.0] != each[50.0], "a large penalty must change the search (fewer inversions)"


def test_untrained_preorderer_is_monotone():
    preorderer = Preorderer.create(Vocabulary.build([["a", "b"]]))
    assert preorderer.predict([["a", "b", "c"]]) == [[0, 1, 2]]


def test_save_load_round_trip(trained, synthetic_test, tmp_path):
    path = tmp_path / "preorderer.pt"
    trained.save(path)
    loaded = Preorderer.load(path).to(torch.device("cpu"))
    assert loaded.device == torch.device("cpu")
    sentences = synthetic_test[0][:50]
    assert loaded.predict(sentences) == trained.predict(sentences)


def test_load_names_an_old_checkpoint_version(trained, tmp_path):
    path = tmp_path / "old.pt"
    trained.save(path)
    checkpoint = torch.load(path, weights_only=True)
    checkpoint["version"] = 1
    torch.save(checkpoint, path)
    with pytest.raises(ValueError, match="version 1.*retrain it with xlpe-preorder-train"):
        Preorderer.load(path)


def test_training_is_reproducible_for_a_seed_and_epoch_count(synthetic_train):
    sentences, positions = synthetic_train[0][:200], synthetic_train[1][:200]
    runs = [train_preorderer(sentences, positions, epochs=1, hidden_dim=8, embed_dim=8,
                             pair_dim=8, batch_tokens=300, seed=3) for _ in range(2)]
    for (name, first), second in zip(runs[0].scorer.state_dict().items(),
                                     runs[1].scorer.state_dict().values()):
        assert torch.equal(first, second), f"{name} differs between two runs with one seed"


def test_load_refuses_other_files(tmp_path):
    path = tmp_path / "other.pt"
    torch.save({"model": 1}, path)
    with pytest.raises(ValueError, match="not a preorderer checkpoint"):
        Preorderer.load(path)
