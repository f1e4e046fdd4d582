"""A node's GPUs among a study's concurrent runs, on simulated device counts: distinct GPUs
for runs trained at once, groups for --gpus-per-run, the devices in each run's command."""
import contextlib
import sys
import threading
from types import SimpleNamespace

import pytest
import torch

from xlpe_fairseq.evaluation.study import runs
from xlpe_fairseq.evaluation.study.devices import GpuPlacement, visible_gpus
from xlpe_fairseq.io import InputError


def test_runs_at_once_get_distinct_gpus_then_share_them_evenly():
    placement = GpuPlacement([str(k) for k in range(8)], 1)
    with contextlib.ExitStack() as running:
        first = [running.enter_context(placement.place()) for _ in range(8)]
        assert sorted(first) == [(str(k),) for k in range(8)], \
            f"8 runs on 8 GPUs must each have their own: {first}"
        more = [running.enter_context(placement.place()) for _ in range(8)]
        assert sorted(more) == sorted(first), f"16 runs on 8 GPUs: two on each, got {more}"
    with placement.place() as again:
        assert again == ("0",), "a GPU freed by a finished run is given again"


@pytest.mark.parametrize("gpus, per_run, groups", [
    (8, 2, [("0", "1"), ("2", "3"), ("4", "5"), ("6", "7")]),
    (8, 3, [("0", "1", "2"), ("3", "4", "5")]),
    (2, 2, [("0", "1")]),
])
def test_gpus_per_run_makes_groups_of_distinct_gpus(gpus, per_run, groups):
    assert GpuPlacement([str(k) for k in range(gpus)], per_run).groups == groups


def test_more_gpus_per_run_than_the_node_shows_is_refused():
    with pytest.raises(InputError, match=r"--gpus-per-run 4: CUDA shows 2 GPUs"):
        GpuPlacement(["0", "1"], 4)


def test_visible_gpus_keep_the_schedulers_share(monkeypatch):
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,7")
    assert visible_gpus() == ["3", "7"], "a run must be given GPUs of the node's share"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    assert visible_gpus() == ["0", "1", "2", "3"]
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    assert visible_gpus() == []


def test_concurrent_runs_train_on_distinct_gpus(monkeypatch):
    placed, together = {}, threading.Barrier(4, timeout=30)

    def train_and_evaluate(study, model, seed, references, gpus):
        placed[model, seed] = gpus
        together.wait()  # all four hold their GPUs at once
        return {"bleu": 0.0, "chrf": 0.0}

    monkeypatch.setattr(runs, "train_and_evaluate", train_and_evaluate)
    pending = [(model, seed) for model in ("transformer", "dpe") for seed in (1, 2)]
    runs.run_pending(None, pending, [], 4, GpuPlacement(["0", "1", "2", "3", "4", "5"], 1))
    assert sorted(placed.values()) == [("0",), ("1",), ("2",), ("3",)], placed


def test_a_runs_command_records_its_gpus(tmp_path):
    command = [sys.executable, "-c", "import os; print(os.environ['CUDA_VISIBLE_DEVICES'])"]
    study = SimpleNamespace(run_dir=lambda model, seed: tmp_path / model / f"seed{seed}",
                            train_command=lambda model, seed: command)
    runs.train(study, "dpe", 1, ("2", "3"))
    run_dir = tmp_path / "dpe" / "seed1"
    assert (run_dir / "command.txt").read_text().startswith("CUDA_VISIBLE_DEVICES=2,3 "), \
        "the command must say which GPUs the run had"
    assert (run_dir / "train.log").read_text() == "2,3\n", "the training must see those GPUs"
