"""xlpe-train's printout says its batch in words: tokens per update, how they are made up (on
the CPU, per GPU, batches accumulated), the paper's batch and the --update-freq matching it."""
import pytest

from xlpe_fairseq.workflow import training_printout
from xlpe_fairseq.workflow.training_printout import batch_line, log_interval


@pytest.fixture
def cpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")


@pytest.mark.parametrize("tokens, world, update_freq, paper_gpus, line", [
    (4096, 1, 1, 1, "batch: up to 4096 tokens per update on the CPU, as the paper's (4096 on 1 "
     "GPU)"),
    (4096, 1, 1, 8, "batch: up to 4096 tokens per update on the CPU; the paper's: 4096 x 8 GPUs "
     "= 32768, which --update-freq 8 matches"),
    (4096, 1, 8, 8, "batch: up to 32768 tokens per update: 8 batches of up to 4096 accumulated "
     "(--update-freq 8) on the CPU, as the paper's (4096 x 8 GPUs = 32768)"),
    (3000, 1, 1, 4, "batch: up to 3000 tokens per update on the CPU; the paper's: 4096 x 4 GPUs "
     "= 16384"),
])
def test_the_batch_in_words_on_the_cpu(cpu, tokens, world, update_freq, paper_gpus, line):
    assert batch_line(tokens, world, update_freq, 4096, paper_gpus) == line


def test_the_batch_in_words_on_gpus(monkeypatch):
    monkeypatch.setattr(training_printout, "on_cpu", lambda world, cpu=False: False)
    assert batch_line(2000, 2, 2, 4096, 4) == (
        "batch: up to 8000 tokens per update: 2 batches of up to 2000 accumulated "
        "(--update-freq 2) on each of 2 GPUs; the paper's: 4096 x 4 GPUs = 16384")
    assert batch_line(4096, 4, 1, 4096, 4) == (
        "batch: up to 16384 tokens per update: up to 4096 on each of 4 GPUs, as the paper's "
        "(4096 x 4 GPUs = 16384)")


def test_the_log_interval_gives_a_rate_soon_on_the_cpu(cpu, monkeypatch):
    assert log_interval(1, 1000) == 10 and log_interval(1, 4) == 4
    monkeypatch.setattr(training_printout, "on_cpu", lambda world, cpu=False: False)
    assert log_interval(1, 1000) == 100 and log_interval(2, 20) == 20
