"""Checkpoints read by one loader: a name that is no file is one line naming it; loading stays
weights-only, in the plugin's loader and in a user's own torch.load after the plugin's import."""
import argparse
import subprocess
import sys

import pytest
import torch

from xlpe_fairseq.io.checkpoints import read_checkpoint
from xlpe_fairseq.io.errors import InputError


def test_fairseq_s_own_loading_after_the_plugin_s_still_takes_fairseq_s_checkpoints(tmp_path):
    """fairseq-train's resume loads checkpoint_last.pt after the task has read it (its data's
    fingerprint): reading a checkpoint leaves fairseq's checkpoint class allowed."""
    path = tmp_path / "checkpoint_last.pt"
    torch.save({"model": {}, "args": argparse.Namespace(arch="transformer")}, path)
    read_checkpoint(str(path), "fairseq checkpoint")
    assert torch.load(path, map_location="cpu")["args"].arch == "transformer"


def test_an_empty_checkpoint_name_is_refused_as_such():
    with pytest.raises(InputError, match="^'': an empty name, expected a preorderer$"):
        read_checkpoint("", "preorderer")


# a checkpoint that runs a command when unpickled: what weights-only loading refuses
MALICIOUS = """
import os, pickle, sys, torch
class Payload:
    def __reduce__(self):
        return (os.system, ("touch " + sys.argv[2],))
torch.save({"model": {}, "args": Payload()}, sys.argv[1])
"""
LOAD_AFTER_THE_PLUGIN = """
import os, sys, torch
import xlpe_fairseq
assert "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" not in os.environ, "the plugin switched the check off"
try:
    torch.load(sys.argv[1])
except Exception as error:
    print(type(error).__name__)
"""


def test_after_the_plugin_is_imported_torch_load_still_refuses_a_pickle_that_runs_code(tmp_path):
    """The plugin allows fairseq's one checkpoint class (argparse.Namespace) by name; a user's
    own torch.load in the same process stays weights-only for everything else."""
    checkpoint, ran = tmp_path / "evil.pt", tmp_path / "ran"
    subprocess.run([sys.executable, "-c", MALICIOUS, checkpoint, ran], check=True)
    env = {"PATH": "/usr/bin:/bin", "PYTHONWARNINGS": "ignore"}
    result = subprocess.run([sys.executable, "-c", LOAD_AFTER_THE_PLUGIN, checkpoint, ran],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "UnpicklingError", result.stdout + result.stderr[-2000:]
    assert not ran.exists(), "loading the checkpoint ran its command"


def test_our_loader_names_a_pickle_that_runs_code_as_not_a_checkpoint(tmp_path):
    checkpoint, ran = tmp_path / "evil.pt", tmp_path / "ran"
    subprocess.run([sys.executable, "-c", MALICIOUS, checkpoint, ran], check=True)
    with pytest.raises(InputError, match=r"evil\.pt: not a fairseq checkpoint"):
        read_checkpoint(str(checkpoint), "fairseq checkpoint")
    assert not ran.exists(), "loading the checkpoint ran its command"
