"""xlpe-average-checkpoints: the newest N numbered checkpoints, parameters averaged."""
import pytest
import torch

from xlpe_fairseq.evaluation.average_checkpoints import average, last_checkpoints, main


def save(path, value, step):
    torch.save({"model": {"w": torch.full((2,), value, dtype=torch.float16),
                          "count": torch.tensor(step)}, "cfg": {"step": step}}, path)


def test_update_checkpoints_win_and_the_newest_are_averaged(tmp_path):
    for step, value in ((1000, 1.0), (2000, 2.0), (3000, 4.0), (10000, 6.0)):
        save(tmp_path / f"checkpoint_1_{step}.pt", value, step)
    save(tmp_path / "checkpoint3.pt", 100.0, 0)  # epoch checkpoints lose to update ones
    paths = last_checkpoints(tmp_path, 3)
    assert [p.rsplit("/", 1)[1] for p in paths] == [
        "checkpoint_1_10000.pt", "checkpoint_1_3000.pt", "checkpoint_1_2000.pt"]
    state = average(paths)
    assert state["model"]["w"].dtype == torch.float16
    assert torch.equal(state["model"]["w"], torch.full((2,), 4.0, dtype=torch.float16))
    assert state["cfg"] == {"step": 10000}  # the newest checkpoint's configuration


def test_too_few_checkpoints_is_an_error_naming_the_folder(tmp_path, capsys):
    save(tmp_path / "checkpoint1.pt", 1.0, 1)
    with pytest.raises(SystemExit):
        main(["--checkpoint-dir", str(tmp_path), "--num", "2", "--output", str(tmp_path / "a.pt")])
    assert f"{tmp_path}: 1 numbered checkpoints, 2 wanted" in capsys.readouterr().err
