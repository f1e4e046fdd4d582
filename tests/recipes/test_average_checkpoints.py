"""xlpe-average-checkpoints: the newest N numbered checkpoints, parameters averaged, an update
that ended an epoch (for which fairseq writes no update checkpoint) included from the file
that holds it, or named when none does."""
import os

import pytest
import torch

from xlpe_fairseq.evaluation.average_checkpoints import average, last_checkpoints, main


def save(path, value, step):
    torch.save({"model": {"w": torch.full((2,), value, dtype=torch.float16),
                          "count": torch.tensor(step)}, "cfg": {"step": step}}, path)


def save_fairseq(path, update, interval=20):
    """What fairseq saves: the update in the optimizer history, the interval in the config."""
    torch.save({"model": {"w": torch.full((2,), float(update))},
                "cfg": {"checkpoint": {"save_interval_updates": interval}},
                "optimizer_history": [{"num_updates": update}]}, path)


def names(paths):
    return [os.path.basename(path) for path in paths]


def test_update_checkpoints_win_and_the_newest_are_averaged(tmp_path):
    for step, value in ((1000, 1.0), (2000, 2.0), (3000, 4.0), (10000, 6.0)):
        save(tmp_path / f"checkpoint_1_{step}.pt", value, step)
    save(tmp_path / "checkpoint3.pt", 100.0, 0)  # epoch checkpoints lose to update ones
    paths, notes = last_checkpoints(tmp_path, 3)
    assert names(paths) == [
        "checkpoint_1_10000.pt", "checkpoint_1_3000.pt", "checkpoint_1_2000.pt"]
    assert notes == []
    state = average(paths)
    assert state["model"]["w"].dtype == torch.float16
    assert torch.equal(state["model"]["w"], torch.full((2,), 4.0, dtype=torch.float16))
    assert state["cfg"] == {"step": 10000}  # the newest checkpoint's configuration


def epoch_ending_run(tmp_path):
    """examples/train.sh's folder (--no-epoch-checkpoints, a checkpoint every 20 updates, the
    last 5 kept) after 300 updates, where updates 260 and 300 ended an epoch."""
    for epoch, update in ((3, 200), (3, 220), (4, 240), (5, 280)):
        save_fairseq(tmp_path / f"checkpoint_{epoch}_{update}.pt", update)
    save_fairseq(tmp_path / "checkpoint_last.pt", 300)
    save_fairseq(tmp_path / "checkpoint_best.pt", 240)


def test_the_last_update_that_ended_an_epoch_is_averaged_from_checkpoint_last(tmp_path):
    epoch_ending_run(tmp_path)
    paths, notes = last_checkpoints(tmp_path, 5)
    assert names(paths) == ["checkpoint_last.pt", "checkpoint_5_280.pt", "checkpoint_4_240.pt",
                            "checkpoint_3_220.pt", "checkpoint_3_200.pt"], (
        "update 300 ended an epoch: only checkpoint_last.pt holds it")
    assert notes == [
        "checkpoint_last.pt stands for update 300, which ended an epoch (fairseq writes no "
        "update checkpoint there)",
        "no checkpoint holds update 260 (fairseq saves none for an update that ends an epoch "
        "under --no-epoch-checkpoints): averaging updates 300, 280, 240, 220, 200"]
    assert torch.equal(average(paths)["model"]["w"], torch.full((2,), 248.0))


def test_an_epoch_checkpoint_stands_for_the_update_it_ended(tmp_path):
    epoch_ending_run(tmp_path)
    save_fairseq(tmp_path / "checkpoint4.pt", 260)  # saved without --no-epoch-checkpoints
    save_fairseq(tmp_path / "checkpoint3.pt", 230)  # between two saves: not in the series
    paths, notes = last_checkpoints(tmp_path, 5)
    assert names(paths) == ["checkpoint_last.pt", "checkpoint_5_280.pt", "checkpoint4.pt",
                            "checkpoint_4_240.pt", "checkpoint_3_220.pt"]
    assert "checkpoint4.pt stands for update 260, which ended an epoch" in notes[1]
    assert len(notes) == 2, notes


def test_a_last_checkpoint_off_the_series_is_left_out(tmp_path):
    for update in (260, 280, 300):
        save_fairseq(tmp_path / f"checkpoint_5_{update}.pt", update)
    save_fairseq(tmp_path / "checkpoint_last.pt", 310)  # --max-update 310: not a save point
    paths, notes = last_checkpoints(tmp_path, 3)
    assert names(paths) == ["checkpoint_5_300.pt", "checkpoint_5_280.pt", "checkpoint_5_260.pt"]
    assert notes == []


def test_the_command_says_what_it_chose(tmp_path, capsys):
    epoch_ending_run(tmp_path)
    main(["--checkpoint-dir", str(tmp_path), "--num", "5",
          "--output", str(tmp_path / "checkpoint_avg5.pt")])
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (f"xlpe-average-checkpoints: {tmp_path / 'checkpoint_avg5.pt'} = mean of "
                      "checkpoint_last.pt, checkpoint_5_280.pt, checkpoint_4_240.pt, "
                      "checkpoint_3_220.pt, checkpoint_3_200.pt")
    assert err[1].startswith("xlpe-average-checkpoints: checkpoint_last.pt stands for update 300")
    assert err[2].startswith("xlpe-average-checkpoints: no checkpoint holds update 260")


def test_too_few_checkpoints_is_an_error_naming_the_folder(tmp_path, capsys):
    save(tmp_path / "checkpoint1.pt", 1.0, 1)
    with pytest.raises(SystemExit):
        main(["--checkpoint-dir", str(tmp_path), "--num", "2", "--output", str(tmp_path / "a.pt")])
    assert f"{tmp_path}: 1 numbered checkpoints, 2 wanted" in capsys.readouterr().err
