"""workflow/checkpoint_folder.py: a CHECKPOINT_DIR's earlier run is continued only when it is
of the same model and schedule, its record says which, and --restart keeps it aside."""
from types import SimpleNamespace

import pytest

from xlpe_fairseq.workflow.checkpoint_folder import earlier_run, set_aside_run, write_schedule
from xlpe_fairseq.workflow.script_options import Refused


def run_in(folder, model="dpe", schedule="dpe-iwslt"):
    return SimpleNamespace(save_dir=str(folder), model=model, schedule=schedule,
                           name="xlpe-train")


def test_a_folder_without_checkpoints_gets_its_record_before_training(tmp_path):
    assert earlier_run(run_in(tmp_path)) is True


def test_checkpoints_of_the_same_model_and_schedule_are_continued(tmp_path):
    (tmp_path / "checkpoint_last.pt").write_bytes(b"")
    write_schedule(tmp_path / "schedule.env", "dpe-iwslt", "dpe")
    assert (tmp_path / "schedule.env").read_text() == "SCHEDULE=dpe-iwslt\nTRAINED_MODEL=dpe\n"
    assert earlier_run(run_in(tmp_path)) is True


def test_checkpoints_of_another_model_are_refused_not_relabeled(tmp_path):
    (tmp_path / "checkpoint_last.pt").write_bytes(b"")
    write_schedule(tmp_path / "schedule.env", "dpe-iwslt", "transformer")
    with pytest.raises(Refused) as refused:
        earlier_run(run_in(tmp_path))
    said = str(refused.value)
    assert refused.value.exit_status == 1 and "\n" not in said and (
        "holds the checkpoints of transformer on the schedule dpe-iwslt (its schedule.env), "
        "not of dpe on dpe-iwslt" in said), said
    assert "TRAINED_MODEL=transformer" in (tmp_path / "schedule.env").read_text()


def test_checkpoints_without_a_record_get_none_before_training(tmp_path):
    """A folder of checkpoints fairseq-train wrote by hand: no record is made up for them
    before training; fairseq-train itself refuses a checkpoint of other data."""
    (tmp_path / "checkpoint_last.pt").write_bytes(b"")
    assert earlier_run(run_in(tmp_path)) is False


def test_restart_sets_the_earlier_run_aside_and_deletes_nothing(tmp_path, capsys):
    for name in ("checkpoint_last.pt", "schedule.env", "train.log", ".xlpe-lock"):
        (tmp_path / name).write_text(name)
    set_aside_run(str(tmp_path), "xlpe-train")
    aside = [entry for entry in tmp_path.iterdir() if entry.name.startswith("replaced-")]
    assert len(aside) == 1, list(tmp_path.iterdir())
    assert sorted(p.name for p in aside[0].iterdir()) == [
        "checkpoint_last.pt", "schedule.env", "train.log"]
    assert (tmp_path / ".xlpe-lock").exists(), "the lock of the running command stays"
    assert f"moved to {aside[0]}" in capsys.readouterr().err
