"""xlpe-average-checkpoints: the newest N numbered checkpoints, parameters averaged, an update
that ended an epoch (for which fairseq writes no update checkpoint) included from the file
that holds it, or named when none does."""
import os
import subprocess
import sys

import pytest
import torch

from synthetic_corpus import write_corpus

from xlpe_fairseq.evaluation.average_checkpoints import average, last_checkpoints, main
from xlpe_fairseq.io import InputError


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


def fairseq(module, *args, cwd):
    result = subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=cwd,
                            capture_output=True, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, f"{module} failed:\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    """A binarized synthetic corpus of 200 training pairs."""
    root = tmp_path_factory.mktemp("average")
    write_corpus(root / "raw", sizes={"train": 200, "valid": 8, "test": 8})
    fairseq("fairseq_cli.preprocess", "--source-lang", "xx", "--target-lang", "yy",
            "--trainpref", "raw/train", "--validpref", "raw/valid", "--destdir", "data-bin",
            "--joined-dictionary", "--workers", "1", cwd=root)
    return root


def train_tiny(root, save_dir, max_tokens):
    """fairseq-train as examples/train.sh saves: a checkpoint every 2 updates, the last 5
    kept, no epoch checkpoints; 24 updates."""
    tiny = [f"--{side}-{option}" if option.startswith(("embed", "ffn", "layers", "attention"))
            else option for side in ("encoder", "decoder") for option in (
                "embed-dim", "16", "ffn-embed-dim", "32", "layers", "1", "attention-heads", "2")]
    fairseq("fairseq_cli.train", "data-bin", "--arch", "transformer", *tiny, "--optimizer",
            "adam", "--lr", "0.003", "--max-tokens", max_tokens, "--max-update", "24",
            "--save-interval-updates", "2", "--keep-interval-updates", "5",
            "--no-epoch-checkpoints", "--seed", "3", "--no-progress-bar", "--num-workers", "0",
            "--save-dir", save_dir, "--cpu", cwd=root)
    return root / save_dir


def test_a_real_training_whose_saves_fall_on_epoch_ends(tiny_corpus):
    """fairseq itself, 3 batches an epoch: updates 6, 12, 18 and 24 end an epoch and get no
    update checkpoint; 24, the last, is in checkpoint_last.pt."""
    ckpt = train_tiny(tiny_corpus, "ckpt3", 600)
    saved = sorted(name for name in os.listdir(ckpt) if name.count("_") == 2)
    assert saved == ["checkpoint_4_10.pt", "checkpoint_5_14.pt", "checkpoint_6_16.pt",
                     "checkpoint_7_20.pt", "checkpoint_8_22.pt"], (
        "fairseq's epochs changed length; the test needs saves on epoch ends")
    paths, notes = last_checkpoints(ckpt, 5)
    assert names(paths) == ["checkpoint_last.pt", "checkpoint_8_22.pt", "checkpoint_7_20.pt",
                            "checkpoint_6_16.pt", "checkpoint_5_14.pt"]
    assert notes[0].startswith("checkpoint_last.pt stands for update 24"), notes
    assert notes[1].startswith("no checkpoint holds update 18 "), notes


def test_a_training_whose_every_save_ended_an_epoch_says_so(tiny_corpus, capsys):
    """2 batches an epoch, a checkpoint every 2 updates: fairseq writes no update checkpoint."""
    ckpt = train_tiny(tiny_corpus, "ckpt2", 1000)
    assert sorted(os.listdir(ckpt)) == ["checkpoint_best.pt", "checkpoint_last.pt"]
    with pytest.raises(SystemExit):
        main(["--checkpoint-dir", str(ckpt), "--num", "5", "--output", str(ckpt / "a.pt")])
    assert (f"{ckpt}: 0 numbered checkpoints, 5 wanted (every save, one each 2 updates, ended "
            "an epoch") in capsys.readouterr().err


def test_too_few_checkpoints_is_an_error_naming_the_folder(tmp_path, capsys):
    save(tmp_path / "checkpoint1.pt", 1.0, 1)
    with pytest.raises(SystemExit):
        main(["--checkpoint-dir", str(tmp_path), "--num", "2", "--output", str(tmp_path / "a.pt")])
    assert f"{tmp_path}: 1 numbered checkpoints, 2 wanted" in capsys.readouterr().err


def test_the_checkpoints_of_two_runs_on_other_data_are_not_averaged(tmp_path):
    """A folder whose older checkpoints came from a run on a corpus prepared anew since."""
    for step, train in ((1000, "a" * 64), (2000, "b" * 64)):
        torch.save({"model": {"w": torch.ones(2)}, "cfg": {}, "task_state": {
            "xlpe_data_fingerprint": {"data_bin": "/out/data-bin/text", "train": train,
                                      "dictionaries": {"dict.en.txt": "c" * 64}}}},
                   tmp_path / f"checkpoint_1_{step}.pt")
    with pytest.raises(InputError, match="checkpoint_1_1000.pt: trained on another training "
                       "split than .*checkpoint_1_2000.pt: the checkpoints of two runs"):
        average(last_checkpoints(tmp_path, 2)[0])
