"""An ensemble of preorderers decodes on the members' mean pair scores, saves as one checkpoint
that every preorderer path loads, and its command refuses what it cannot combine."""
import pytest
import torch

from xlpe_fairseq.preordering import ensemble, predict
from xlpe_fairseq.preordering.preorderer import Preorderer, PreordererEnsemble
from xlpe_fairseq.preordering.train import train_preorderer
from xlpe_fairseq.reordering.btg_rules import is_btg_reachable


def small_preorderer(synthetic_train, seed):
    sentences, positions = synthetic_train
    return train_preorderer(sentences[:300], positions[:300], epochs=1, hidden_dim=16,
                            embed_dim=8, pair_dim=8, batch_tokens=300, seed=seed)


@pytest.fixture(scope="module")
def members(synthetic_train):
    return [small_preorderer(synthetic_train, seed) for seed in (1, 2)]


def write_lines(path, rows):
    path.write_text("".join(" ".join(map(str, row)) + "\n" for row in rows))
    return str(path)


def test_pair_scores_are_the_members_mean(members, synthetic_test):
    sentences = synthetic_test[0][:8]
    expected = (members[0].pair_scores(sentences) + members[1].pair_scores(sentences)) / 2
    with torch.no_grad():
        assert torch.allclose(PreordererEnsemble(members).pair_scores(sentences), expected)


def test_an_ensemble_of_one_model_twice_predicts_as_the_model(members, synthetic_test):
    sentences = synthetic_test[0][:60]
    model = members[0]
    twice = PreordererEnsemble([model, model], inversion_penalty=model.inversion_penalty)
    assert twice.predict(sentences) == model.predict(sentences)


def test_predictions_are_btg_consistent_permutations(members, synthetic_test):
    sentences = [[], ["noun1"], ["never-seen"] * 3] + synthetic_test[0][:60]
    for sentence, positions in zip(sentences, PreordererEnsemble(members).predict(sentences)):
        assert sorted(positions) == list(range(len(sentence)))
        assert is_btg_reachable(positions), positions


def test_members_predict_without_dropout_and_keep_their_mode(members, synthetic_test):
    sentences = synthetic_test[0][:30]
    for member in members:
        member.scorer.train()
    pair = PreordererEnsemble(members)
    assert pair.predict(sentences) == pair.predict(sentences), "dropout left on in the search"
    assert all(member.scorer.training for member in members)
    for member in members:
        member.scorer.eval()


def test_command_writes_a_checkpoint_every_preorderer_path_loads(members, synthetic_test,
                                                                 tmp_path, capsys):
    paths = []
    for k, member in enumerate(members):
        paths.append(str(tmp_path / f"member{k}.pt"))
        member.save(paths[-1])
    valid_source = write_lines(tmp_path / "valid.src", synthetic_test[0][:50])
    valid_reorder = write_lines(tmp_path / "valid.reorder", synthetic_test[1][:50])
    saved = str(tmp_path / "ensemble.pt")
    ensemble.main(["--preorderers", *paths, "--valid-source", valid_source,
                   "--valid-reorder", valid_reorder, "--save", saved, "--threads", "1"])
    log = capsys.readouterr().err
    assert "inversion penalty" in log and "kept" in log, log
    loaded = Preorderer.load(saved)
    assert isinstance(loaded, PreordererEnsemble) and len(loaded.members) == 2
    sentences = synthetic_test[0][:50]
    in_memory = PreordererEnsemble(members, inversion_penalty=loaded.inversion_penalty)
    assert loaded.predict(sentences) == in_memory.predict(sentences)
    output = str(tmp_path / "test.reorder")
    predict.main(["--preorderer", saved, "--source", valid_source, "--output", output])
    predicted = [list(map(int, line.split())) for line in open(output).read().splitlines()]
    assert predicted == loaded.predict(sentences)


def test_without_valid_the_penalty_is_the_members_mean(members, tmp_path, capsys):
    paths = []
    for k, (member, penalty) in enumerate(zip(members, (0.5, 1.0))):
        member.inversion_penalty = penalty
        paths.append(str(tmp_path / f"member{k}.pt"))
        member.save(paths[-1])
    saved = str(tmp_path / "ensemble.pt")
    ensemble.main(["--preorderers", *paths, "--save", saved, "--threads", "1"])
    assert Preorderer.load(saved).inversion_penalty == pytest.approx(0.75)
    for member in members:
        member.inversion_penalty = 0.0


def test_one_checkpoint_is_not_an_ensemble(members, tmp_path, capsys):
    path = str(tmp_path / "member.pt")
    members[0].save(path)
    with pytest.raises(SystemExit) as exit_info:
        ensemble.main(["--preorderers", path, "--save", str(tmp_path / "e.pt")])
    assert exit_info.value.code == 2
    assert "two or more" in capsys.readouterr().err


def test_an_ensemble_as_a_member_is_refused_in_one_line(members, tmp_path, capsys):
    paths = []
    for k, member in enumerate(members):
        paths.append(str(tmp_path / f"member{k}.pt"))
        member.save(paths[-1])
    nested = str(tmp_path / "nested.pt")
    PreordererEnsemble(members).save(nested)
    with pytest.raises(SystemExit) as exit_info:
        ensemble.main(["--preorderers", paths[0], nested, "--save", str(tmp_path / "e.pt")])
    assert exit_info.value.code == 1
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and nested in error and "members" in error, error
    assert not (tmp_path / "e.pt").exists()
