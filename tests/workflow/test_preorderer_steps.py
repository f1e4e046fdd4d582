"""The preorderer's steps (xlpe_fairseq/workflow/preorderer_steps.py): members trained side
by side each keep a log that reads as a step run alone does, its wall time last."""
import os
import re
import sys

import pytest

from xlpe_fairseq.workflow.preorderer_steps import train_preorderers
from xlpe_fairseq.workflow.steps import Steps, made_from_file

# stands in for xlpe-preorder-train: says something, then saves
TRAIN_STUB = """#!{python}
import sys
print("epoch 1: valid tau 0.5", file=sys.stderr)
with open(sys.argv[sys.argv.index("--save") + 1], "w") as stream:
    stream.write("model\\n")
"""


def settings(jobs):
    return {"PREORDER_JOBS": str(jobs), "PREORDER_EPOCHS": "1", "PREORDER_SECONDS": "20",
            "PREORDER_LOSS": "structured", "PREORDER_DEVICE": "cpu",
            "PREORDER_BATCH_TOKENS": "2000", "PREORDER_MAX_LENGTH": "150",
            "PREORDER_THREADS": "1", "PREORDER_SAMPLING": []}


@pytest.fixture
def train(tmp_path, monkeypatch):
    """train(jobs, seeds): the members (SAVE, SEED) trained by the stub, PREORDER_JOBS=jobs."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "xlpe-preorder-train").write_text(TRAIN_STUB.format(python=sys.executable))
    (stubs / "xlpe-preorder-train").chmod(0o755)
    monkeypatch.setenv("PATH", f"{stubs}{os.pathsep}{os.environ['PATH']}")
    data = []
    for name in ("train.en", "train.btg.reorder", "valid.en", "valid.btg.reorder", "settings"):
        (tmp_path / name).write_text("x\n")
        data.append(str(tmp_path / name))

    def run(jobs, seeds):
        members = [(str(tmp_path / f"preorderer.seed{seed}.pt"), seed)
                   for seed in range(1, seeds + 1)]
        train_preorderers(Steps("xlpe-prepare"), settings(jobs), members, data[:4], data[4])
        return members
    return run


def member(seed):
    return f"train preorderer (seed {seed}, at most 1 epochs, 20s)"


def test_members_side_by_side_each_log_ends_with_its_wall_time(train, tmp_path, capfd):
    members = train(2, 3)
    shown = capfd.readouterr().err
    for save, seed in members:
        log = (tmp_path / f"preorderer.seed{seed}.log").read_text().splitlines()
        assert log[0] == f"== {member(seed)}" and "epoch 1: valid tau 0.5" in log, log
        assert re.fullmatch(rf"== {re.escape(member(seed))}: [0-9]+\.[0-9] s", log[-1]), (
            f"seed {seed}'s log does not end with its wall time as a step run alone does: {log}")
        assert "\n".join(log) in shown, "the member's log is shown when all have ended"
        assert os.path.exists(made_from_file(save)), f"seed {seed} was not recorded"


def test_members_one_at_a_time_say_the_same_line(train, capfd):
    """The line a member's log ends with is the one ``Steps.timed`` says after a step."""
    train(1, 2)
    shown = capfd.readouterr().err
    for seed in (1, 2):
        assert re.search(rf"^== {re.escape(member(seed))}: [0-9]+\.[0-9] s$", shown, re.M), shown
