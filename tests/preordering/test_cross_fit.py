"""Cross-fitted training positions: each fold predicted by a preorderer that never saw it."""
import pytest

from xlpe_fairseq.preordering import cross_fit
from xlpe_fairseq.reordering.btg_rules import is_btg_reachable


def test_each_fold_is_predicted_by_a_preorderer_trained_on_the_others(monkeypatch,
                                                                      synthetic_train):
    sentences, positions = synthetic_train[0][:30], synthetic_train[1][:30]
    trained_on = []

    class Remembers:
        def __init__(self, seen):
            self.seen = seen

        def predict(self, batch):
            assert not any(s in self.seen for s in batch), "a fold was predicted by its own model"
            return [list(range(len(s))) for s in batch]

    def fake_train(train_sentences, train_positions, valid, log, **settings):
        trained_on.append(len(train_sentences))
        return Remembers(train_sentences)

    # distinct sentences, so "seen in training" is a plain membership test
    sentences = [s + [f"id{k}"] for k, s in enumerate(sentences)]
    positions = [p + [len(p)] for p in positions]
    monkeypatch.setattr(cross_fit, "train_preorderer", fake_train)
    predicted = cross_fit.cross_fit(sentences, positions, folds=3)
    assert trained_on == [20, 20, 20]
    assert [len(p) for p in predicted] == [len(s) for s in sentences]


def test_command_writes_predicted_and_mixed_positions(tmp_path, synthetic_train):
    sentences, positions = synthetic_train[0][:60], synthetic_train[1][:60]
    source = tmp_path / "train.src"
    source.write_text("".join(" ".join(s) + "\n" for s in sentences))
    reorder = tmp_path / "train.reorder"
    reorder.write_text("".join(" ".join(map(str, p)) + "\n" for p in positions))
    cross_fit.main(["--source", str(source), "--reorder", str(reorder), "--folds", "2",
                    "--epochs", "1", "--hidden-dim", "8", "--embed-dim", "8", "--pair-dim", "8",
                    "--output", str(tmp_path / "pred.reorder"),
                    "--mixed-output", str(tmp_path / "mixed.reorder")])
    predicted = [list(map(int, line.split()))
                 for line in (tmp_path / "pred.reorder").read_text().splitlines()]
    mixed = [list(map(int, line.split()))
             for line in (tmp_path / "mixed.reorder").read_text().splitlines()]
    assert len(predicted) == len(mixed) == len(sentences)
    assert all(is_btg_reachable(p) and len(p) == len(s) for p, s in zip(predicted, sentences))
    assert all(m in (o, p) for m, o, p in zip(mixed, positions, predicted))


def test_mix_takes_the_asked_share_of_oracle_positions():
    oracle = [[0, 1]] * 1000
    predicted = [[1, 0]] * 1000
    mixed = cross_fit.mix(oracle, predicted, 0.3, seed=1)
    assert 250 < sum(m == [0, 1] for m in mixed) < 350
    assert mixed == cross_fit.mix(oracle, predicted, 0.3, seed=1), "seeded: the same mix again"


def test_one_fold_is_refused():
    with pytest.raises(ValueError, match="at least 2 folds"):
        cross_fit.cross_fit([["a", "b"]], [[1, 0]], folds=1)


def test_one_fold_on_the_command_line_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "train.src").write_text("a b\n")
    (tmp_path / "train.reorder").write_text("1 0\n")
    with pytest.raises(SystemExit) as exit_info:
        cross_fit.main(["--source", str(tmp_path / "train.src"),
                        "--reorder", str(tmp_path / "train.reorder"), "--folds", "1",
                        "--output", str(tmp_path / "pred.reorder")])
    assert exit_info.value.code == 2, "--folds 1 must stop before any training"
    assert "--folds: expected a whole number of at least 2, got '1'" in capsys.readouterr().err
    assert not (tmp_path / "pred.reorder").exists()
