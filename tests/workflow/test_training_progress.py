"""The progress lines xlpe-train shows from fairseq-train's report: when training begins, then at
each log line the update reached, the rate since training began and about how long is left, in
words; and, on a stop before the end, what was saved and the command that resumes."""
import pytest

from xlpe_fairseq.workflow import training_progress
from xlpe_fairseq.workflow.training_progress import Progress, duration, saved_checkpoint

BEGIN = "2026-12-07 18:04:11 | INFO | fairseq.trainer | begin training epoch 1"


def clocked(monkeypatch, *times):
    clock = iter(times)
    monkeypatch.setattr(training_progress.time, "monotonic", lambda: next(clock))


def test_the_rate_and_time_left_come_with_the_first_log_line(monkeypatch, capsys):
    """The rate runs from when training began, so the first log line already has it."""
    clocked(monkeypatch, 0.0, 35.0, 55.0, 65.0, 95.0)
    progress = Progress(1000, "train.sh")
    for line in (BEGIN, "epoch 001 | loss 9.1 | num_updates 100 | lr 1e-5",
                 "valid | loss 8.0 | num_updates 100",
                 "epoch 001:  200 / 900 loss=8.2, num_updates=200, ups=1.0",
                 "a line without an update", "begin training epoch 2",
                 "epoch 002 | num_updates 300"):
        progress.read(line)
    assert capsys.readouterr().err.splitlines() == [
        "train.sh: update 0/1000: training begins, after 35 s of start-up",
        "train.sh: update 100/1000, 5.00 updates/s, about 3 min left",
        "train.sh: update 200/1000, 6.67 updates/s, about 2 min left",
        "train.sh: update 300/1000, 5.00 updates/s, about 2 min left",
    ], "one line per update reached (the validation's repeat of an update is none)"


def test_a_resumed_training_counts_its_rate_from_the_update_it_resumed_at(monkeypatch, capsys):
    clocked(monkeypatch, 0.0, 10.0, 30.0)
    progress = Progress(600, "xlpe-train")
    for line in ("Loaded checkpoint ck/checkpoint_last.pt (epoch 3 @ 400 updates)", BEGIN,
                 "epoch 003 | num_updates 410"):
        progress.read(line)
    assert capsys.readouterr().err.splitlines() == [
        "xlpe-train: update 400/600: training resumes from ck/checkpoint_last.pt, after 10 s "
        "of start-up",
        "xlpe-train: update 410/600, 0.50 updates/s, about 6 min left"]


def test_a_report_without_the_begin_line_shows_the_rate_from_its_second_log_line(monkeypatch,
                                                                                 capsys):
    clocked(monkeypatch, 0.0, 10.0, 20.0)
    progress = Progress(100, "xlpe-train")
    for line in ("num_updates 10", "num_updates 20"):
        progress.read(line)
    assert capsys.readouterr().err.splitlines() == [
        "xlpe-train: update 10/100", "xlpe-train: update 20/100, 1.00 updates/s, about 1 min left"]


@pytest.mark.parametrize("status, why", [(143, "SIGTERM"), (130, "Ctrl-C"),
                                         (1, "fairseq-train's exit status 1")])
def test_a_stop_says_what_was_saved_and_the_command_that_resumes(monkeypatch, capsys, status,
                                                                 why):
    clocked(monkeypatch, 0.0, 1.0, 2.0)
    progress = Progress(600, "xlpe-train")
    for line in (BEGIN, "Saved checkpoint ck/checkpoint_1_40.pt (epoch 1 @ 40 updates, score "
                 "9.1) (writing took 0.2 seconds)", "epoch 001 | num_updates 50"):
        progress.read(line)
    capsys.readouterr()
    progress.stopped(status, "ck/checkpoint_last.pt", "xlpe-train transformer d ck")
    assert capsys.readouterr().err == (
        f"xlpe-train: stopped by {why} at update 50/600; saved: update 40 in "
        "ck/checkpoint_last.pt (the 10 updates since are lost); resume: xlpe-train transformer "
        "d ck\n")


def test_a_stop_before_the_first_checkpoint_says_nothing_was_saved(capsys):
    Progress(600, "xlpe-train").stopped(143, "ck/checkpoint_last.pt", "xlpe-train t d ck")
    err = capsys.readouterr().err
    assert "nothing saved" in err and err.rstrip().endswith("starts again: xlpe-train t d ck")


def test_the_saved_checkpoint_of_a_report_line():
    assert saved_checkpoint("2026 | INFO | fairseq.checkpoint_utils | Saved checkpoint "
                            "my ck/checkpoint_best.pt (epoch 2 @ 80 updates, score 7.5) "
                            "(writing took 0.1 seconds)") == ("my ck/checkpoint_best.pt", 80)
    assert saved_checkpoint("Preparing to save checkpoint for epoch 2 @ 80 updates") is None


@pytest.mark.parametrize("seconds, words", [(40, "40 s"), (720, "12 min"), (11100, "3 h 05 min")])
def test_time_left_in_words(seconds, words):
    assert duration(seconds) == words
