"""Warnings a user cannot act on (hydra's deprecations as fairseq calls it, fairseq's CPU data
loader and autocast calls, fairseq's tensorboardX hint) stay out of what the xlpe-* commands
show, and the plugin's import silences nothing in a user's own process."""
import os
import subprocess
import sys
from pathlib import Path

from synthetic_corpus import preprocess_corpus, write_corpus
from warm_python import real_processes

USER_DIR = str(Path(__file__).resolve().parents[1] / "xlpe_fairseq")


def run_python(*args, cwd=None):
    # warnings shown as a user's shell shows them: no PYTHONWARNINGS from the test environment,
    # printed by a real process as it starts
    env = {k: v for k, v in real_processes(os.environ).items() if k != "PYTHONWARNINGS"}
    env["OMP_NUM_THREADS"] = "1"
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd)


def test_fairseq_commands_do_not_ask_for_tensorboardx():
    # what fairseq's own commands do before --user-dir loads the plugin: log at INFO, then
    # import fairseq's tasks (the installed tensorboardX answers the text-to-speech task's hint)
    result = run_python("-c", "import logging; logging.basicConfig(level=logging.INFO); "
                        "import fairseq.tasks")
    assert result.returncode == 0, result.stderr
    assert "tensorboardX" not in result.stdout + result.stderr, result.stdout + result.stderr


def test_fairseq_train_as_xlpe_train_runs_it_prints_no_warnings_and_logs_as_fairseq(tmp_path):
    raw = write_corpus(tmp_path / "raw", sizes={"train": 40, "valid": 8, "test": 8})
    data_bin = preprocess_corpus(raw, tmp_path / "data-bin")
    result = run_python(
        "-m", "xlpe_fairseq_cli.fairseq", "fairseq-train", data_bin, "--user-dir", USER_DIR,
        "--task", "translation_reorder", "--arch", "transformer", "--encoder-layers", "1",
        "--decoder-layers", "1", "--encoder-embed-dim", "16", "--decoder-embed-dim", "16",
        "--encoder-ffn-embed-dim", "16", "--decoder-ffn-embed-dim", "16",
        "--encoder-attention-heads", "1", "--decoder-attention-heads", "1",
        "--criterion", "label_smoothed_cross_entropy_with_order", "--optimizer", "adam",
        "--lr", "1e-3", "--max-tokens", "200", "--max-update", "2", "--no-save",
        "--num-workers", "0", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    warnings = [line for line in result.stderr.splitlines() if "Warning" in line]
    assert not warnings, "fairseq-train printed warnings:\n" + result.stderr[-3000:]
    # fairseq-train's own logging: its log lines on stdout, as its console script has them
    assert "| INFO | fairseq_cli.train | done training" in result.stdout, result.stdout[-2000:]


def test_importing_the_plugin_leaves_the_warning_filters_as_they_were():
    result = run_python("-c", "import warnings, fairseq; before = list(warnings.filters); "
                        "import xlpe_fairseq; print(warnings.filters == before)")
    assert result.returncode == 0 and result.stdout.strip() == "True", result.stderr[-2000:]
