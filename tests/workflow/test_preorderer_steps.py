"""The preorderer's steps (xlpe_fairseq/workflow/preorderer_steps.py): members trained side
by side, each in a process of its own, keep a log that reads as a step run alone does, its
wall time last; one at a time, they train in this process."""
import os
import re

import pytest

from workflow.preorderer_stub import failing_stub, train_stub
from xlpe_fairseq.workflow.preorderer_steps import train_preorderers
from xlpe_fairseq.workflow.steps import StepFailed, Steps, made_from_file


def settings(jobs):
    return {"PREORDER_JOBS": str(jobs), "PREORDER_EPOCHS": "1", "PREORDER_SECONDS": "20",
            "PREORDER_LOSS": "structured", "PREORDER_DEVICE": "cpu",
            "PREORDER_BATCH_TOKENS": "2000", "PREORDER_MAX_LENGTH": "150",
            "PREORDER_THREADS": "1", "PREORDER_SAMPLING": []}


@pytest.fixture
def train(tmp_path):
    """train(jobs, seeds[, stub]): the members (SAVE, SEED) trained by the stub,
    PREORDER_JOBS=jobs."""
    data = []
    for name in ("train.en", "train.btg.reorder", "valid.en", "valid.btg.reorder", "settings"):
        (tmp_path / name).write_text("x\n")
        data.append(str(tmp_path / name))

    def run(jobs, seeds, stub=train_stub):
        members = [(str(tmp_path / f"preorderer.seed{seed}.pt"), seed)
                   for seed in range(1, seeds + 1)]
        train_preorderers(Steps("xlpe-prepare"), settings(jobs), members, data[:4], data[4],
                          train=stub)
        return members
    return run


def member(seed):
    return f"train preorderer (seed {seed}, at most 1 epochs, 20s)"


def test_members_side_by_side_each_log_ends_with_its_wall_time(train, tmp_path, capfd):
    members = train(2, 3)
    shown = capfd.readouterr().err
    for save, seed in members:
        log = (tmp_path / f"preorderer.seed{seed}.log").read_text().splitlines()
        assert log[0] == f"== {member(seed)}" and f"epoch 1: valid tau 0.5 (seed {seed})" in log, \
            log
        assert re.fullmatch(rf"== {re.escape(member(seed))}: [0-9]+\.[0-9] s", log[-1]), (
            f"seed {seed}'s log does not end with its wall time as a step run alone does: {log}")
        assert "\n".join(log) in shown, "the member's log is shown when all have ended"
        assert os.path.exists(made_from_file(save)), f"seed {seed} was not recorded"
    processes = {int(open(save).read()) for save, _ in members}
    assert len(processes) == 3 and os.getpid() not in processes, \
        "members side by side train in processes of their own"


def test_members_one_at_a_time_say_the_same_line(train, capfd):
    """The line a member's log ends with is the one ``Steps.timed`` says after a step."""
    train(1, 2)
    shown = capfd.readouterr().err
    for seed in (1, 2):
        assert re.search(rf"^== {re.escape(member(seed))}: [0-9]+\.[0-9] s$", shown, re.M), shown


def test_members_one_at_a_time_train_in_this_process(train):
    assert all(int(open(save).read()) == os.getpid() for save, _ in train(1, 2))


def test_a_member_that_fails_fails_the_step_once_the_others_have_ended(train, tmp_path,
                                                                       capfd):
    with pytest.raises(StepFailed) as failed:
        train(2, 2, failing_stub)
    assert failed.value.code == 1
    last = capfd.readouterr().err.strip().splitlines()[-1]
    assert re.fullmatch(r"xlpe-prepare: error: preorderer training failed: seed 2 \(status 1, "
                        r"\S+preorderer\.seed2\.log\)", last), last
    log = (tmp_path / "preorderer.seed2.log").read_text()
    assert log.splitlines()[-1].startswith("xlpe-preorder-train: error: "), log
    assert os.path.exists(made_from_file(str(tmp_path / "preorderer.seed1.pt"))), \
        "the member that ended well is recorded"
