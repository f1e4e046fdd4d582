"""The progress line xlpe-train shows at each of fairseq-train's log lines: the update reached,
the rate since the first line and about how long is left, in words."""
import pytest

from xlpe_fairseq.workflow import training_progress
from xlpe_fairseq.workflow.training_progress import Progress, duration


def test_each_new_update_is_one_line_with_the_rate_and_the_time_left(monkeypatch, capsys):
    clock = iter([100.0, 110.0, 130.0])
    monkeypatch.setattr(training_progress.time, "monotonic", lambda: next(clock))
    progress = Progress(1000, "train.sh")
    for line in ("epoch 001 | loss 9.1 | num_updates 100 | lr 1e-5",
                 "valid | loss 8.0 | num_updates 100",
                 "epoch 001:  200 / 900 loss=8.2, num_updates=200, ups=1.0",
                 "a line without an update",
                 "epoch 001 | num_updates 300"):
        progress.read(line)
    assert capsys.readouterr().err.splitlines() == [
        "train.sh: update 100/1000",
        "train.sh: update 200/1000, 10.00 updates/s, about 1 min left",
        "train.sh: update 300/1000, 6.67 updates/s, about 2 min left",
    ], "one line per update reached (the validation's repeat of an update is none)"


@pytest.mark.parametrize("seconds, words", [(40, "40 s"), (720, "12 min"), (11100, "3 h 05 min")])
def test_time_left_in_words(seconds, words):
    assert duration(seconds) == words
