"""What a CHECKPOINT_DIR holds between runs of xlpe-train: the earlier run it continues (of
the same model and schedule, or refused), the record of which model and schedule that is
(schedule.env, which xlpe-evaluate decodes with), and ``--restart``'s setting aside of an
earlier run, nothing deleted."""
import glob
import os
import sys
import time

from ..io.outputs import atomic_output
from .script_options import Refused, read_settings


def earlier_run(run):
    """Whether SAVE_DIR/schedule.env is written before training: in a folder of this run's
    checkpoints (an interrupted training can be evaluated) or of none. A folder of another
    model's checkpoints is refused, not relabeled, before any lock or write; fairseq-train then
    refuses a checkpoint_last.pt of other data or parameters (tasks/data_provenance.py)."""
    save_dir = run.save_dir
    if not glob.glob(os.path.join(glob.escape(save_dir), "checkpoint*.pt")):
        return True
    schedule_env = os.path.join(save_dir, "schedule.env")
    if not os.path.isfile(schedule_env):
        return False
    before = read_settings(schedule_env, ("SCHEDULE", "TRAINED_MODEL"))
    trained_before, schedule_before = before.get("TRAINED_MODEL", ""), before.get("SCHEDULE", "")
    if (trained_before, schedule_before) != (run.model, run.schedule):
        raise Refused(
            f"{save_dir} holds the checkpoints of {trained_before} on the schedule "
            f"{schedule_before} (its schedule.env), not of {run.model} on {run.schedule}: "
            "train into another folder, or pass --restart to start afresh (the old run is "
            "kept in a subfolder)", 1)
    return True


def write_schedule(path, schedule, model):
    """schedule.env: the schedule and model of the run in its folder, written atomically."""
    with atomic_output(path) as stream:
        stream.write(f"SCHEDULE={schedule}\nTRAINED_MODEL={model}\n")


def set_aside_run(save_dir, name):
    """--restart: SAVE_DIR's earlier run (checkpoints, records, outputs) moved into
    SAVE_DIR/replaced-TIME, nothing deleted, so that the new run starts afresh."""
    entries = [entry for entry in os.listdir(save_dir)
               if entry != ".xlpe-lock" and not entry.startswith("replaced-")]
    if not entries:
        return
    aside = os.path.join(save_dir, time.strftime("replaced-%Y%m%d-%H%M%S"))
    os.makedirs(aside, exist_ok=True)
    for entry in entries:
        os.rename(os.path.join(save_dir, entry), os.path.join(aside, entry))
    print(f"{name}: --restart: the earlier run in {save_dir} moved to {aside}", file=sys.stderr)
