"""xlpe-train keeps its checkpoints without the optimizer's state but checkpoint_last.pt: the
update checkpoints fairseq has settled as it goes, the newest and checkpoint_best.pt once
fairseq-train has ended; the model and the update counts stay as they were."""
import torch

from xlpe_fairseq.workflow.checkpoint_keeping import CheckpointKeeping

SAVED = ("Saved checkpoint {} (epoch 1 @ {} updates, score 9.0) (writing took 0.1 seconds)")


def checkpoint(path, update):
    torch.save({"model": {"weight": torch.full((4,), float(update))},
                "cfg": {"checkpoint": {"save_interval_updates": 10}},
                "optimizer_history": [{"num_updates": update}],
                "last_optimizer_state": {"state": {0: torch.zeros(4)}}}, path)


def has_optimizer_state(path):
    return "last_optimizer_state" in torch.load(path, weights_only=False)


def folder_after_saves(tmp_path, updates):
    for update in updates:
        checkpoint(tmp_path / f"checkpoint_1_{update}.pt", update)
    for name in ("checkpoint_best.pt", "checkpoint_last.pt"):
        checkpoint(tmp_path / name, updates[-1])
    return tmp_path


def test_each_save_settles_the_update_checkpoints_fairseq_keeps_but_the_newest(tmp_path):
    folder = folder_after_saves(tmp_path, [10, 20, 30, 40])
    keeping = CheckpointKeeping.of_command(str(folder), ["--keep-interval-updates", "9",
                                                         "--keep-interval-updates", "3"])
    keeping.read("2026 | INFO | fairseq.trainer | num_updates 40")
    assert has_optimizer_state(folder / "checkpoint_1_30.pt"), "a save line starts the keeping"
    keeping.read(SAVED.format(folder / "checkpoint_1_40.pt", 40))
    stripped = {name: not has_optimizer_state(folder / name) for name in (
        "checkpoint_1_10.pt", "checkpoint_1_20.pt", "checkpoint_1_30.pt", "checkpoint_1_40.pt",
        "checkpoint_best.pt", "checkpoint_last.pt")}
    assert stripped == {
        "checkpoint_1_10.pt": False,  # past --keep-interval-updates 3: fairseq removes it
        "checkpoint_1_20.pt": True, "checkpoint_1_30.pt": True,
        "checkpoint_1_40.pt": False,  # the newest, which fairseq may still be copying
        "checkpoint_best.pt": False, "checkpoint_last.pt": False}


def test_the_end_leaves_the_optimizer_state_in_checkpoint_last_alone(tmp_path):
    folder = folder_after_saves(tmp_path, [10, 20])
    CheckpointKeeping(str(folder), 5).finish()
    for name in ("checkpoint_1_10.pt", "checkpoint_1_20.pt", "checkpoint_best.pt"):
        state = torch.load(folder / name, weights_only=False)
        assert "last_optimizer_state" not in state, name
        assert state["optimizer_history"][-1]["num_updates"] in (10, 20), "update count kept"
        assert torch.equal(state["model"]["weight"],
                           torch.full((4,), float(state["optimizer_history"][-1]["num_updates"])))
    assert has_optimizer_state(folder / "checkpoint_last.pt"), "resuming reads it"
    assert sorted(p.name for p in folder.iterdir()) == [
        "checkpoint_1_10.pt", "checkpoint_1_20.pt", "checkpoint_best.pt",
        "checkpoint_last.pt"], "no temporary file left"


def test_a_damaged_checkpoint_is_left_as_it_is(tmp_path):
    folder = folder_after_saves(tmp_path, [10, 20, 30])
    (folder / "checkpoint_1_20.pt").write_bytes(b"PK\x03\x04 truncated")
    keeping = CheckpointKeeping(str(folder), 0)
    keeping.read(SAVED.format(folder / "checkpoint_1_30.pt", 30))
    assert (folder / "checkpoint_1_20.pt").read_bytes() == b"PK\x03\x04 truncated"
    assert not has_optimizer_state(folder / "checkpoint_1_10.pt")
