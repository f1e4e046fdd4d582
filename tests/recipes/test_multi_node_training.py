"""examples/train.sh --sbatch: one model over several nodes through SLURM, joined by fairseq's
own SLURM initialization; the script it prints, and the script run under a real SLURM
(``slurm_cluster``) as two processes of one DDP training over gloo on the CPU."""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import torch

from slurm_cluster import slurm  # noqa: F401  (the fixture)
from support.fairseq_commands import TINY_MODEL, binarized_corpus
from xlpe_fairseq.io.provenance import record_corpus

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "examples" / "train.sh"


def prepared_corpus(root, data_bin=None):
    """OUT of data_prep/prepare-corpus.sh with its record: ``data_bin`` as OUT/data-bin/text
    (an empty one of the pair fr-en where None)."""
    text = root / "data-bin" / "text"
    if data_bin:
        shutil.copytree(data_bin, text)
        src, tgt = "xx", "yy"
    else:
        text.mkdir(parents=True)
        src, tgt = "fr", "en"
        (text / "train.fr-en.fr.idx").write_text("")
        (text / "dict.fr.txt").write_text("le 1\n")
        (text / "dict.en.txt").write_text("the 1\n")
    (root / "bpe").mkdir()
    (root / "bpe" / "codes").write_text("")
    (root / "reference").mkdir()
    for split in ("valid", "test"):
        (root / "reference" / f"{split}.{tgt}").write_text("")
    (root / "recipe.env").write_text(f"SRC={src}\nTGT={tgt}\nLOWERCASE=0\nRAW=/raw\n"
                                     "TOKENIZATION=reversible\n")
    record_corpus(str(root), str(root / "no-raw"), src, tgt, {}, ["prepare-corpus.sh"])
    return root


def train_sh(*args, env=None):
    result = subprocess.run(["bash", str(TRAIN), *args], capture_output=True, text=True,
                            env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def srun_command(script):
    """The fairseq-train words of the script's srun line (on GPUs)."""
    line = next(line for line in script.splitlines() if line.startswith("srun "))
    words = shlex.split(line.partition(" 2>&1 |")[0])
    return words[words.index("fairseq-train"):]


def test_the_script_trains_the_local_command_over_nodes_times_gpus(tmp_path):
    out = prepared_corpus(tmp_path / "out")
    local = shlex.split(train_sh("transformer", str(out), str(tmp_path / "ck"), "--size", "base",
                                 "--gpus", "8", "--dry-run"))
    script = train_sh("transformer", str(out), str(tmp_path / "ck"), "--size", "base",
                      "--gpus", "4", "--nodes", "2", "--sbatch")
    for line in ("#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=4",
                 "#SBATCH --gpus-per-node=4", "#SBATCH --requeue"):
        assert line in script.splitlines(), f"{line} expected in:\n{script}"
    command = srun_command(script)
    assert command[-2:] == ["--distributed-port", "$port"], command[-4:]
    assert command[:-2] == local, \
        "2 nodes x 4 GPUs must train with the command of 8 GPUs on one node (schedule, " \
        "--update-freq, --distributed-world-size 8)"
    assert f"tee -a {tmp_path / 'ck' / 'train.log'}" in script
    assert "xlpe-provenance training" in script and "schedule.env" in script


def test_the_summary_of_a_cpu_script_counts_cpu_processes(tmp_path):
    """The schedule's summary says what trains: CPU processes on the CPU, not GPUs."""
    out = prepared_corpus(tmp_path / "out")
    printed = subprocess.run(["bash", str(TRAIN), "transformer", str(out), str(tmp_path / "ck"),
                              "--sbatch", "--nodes", "2", "--gpus", "3", "--cpu"],
                             capture_output=True, text=True)
    assert printed.returncode == 0, printed.stderr
    assert "tokens per update: up to 4096 on each of 6 CPU processes" in printed.stderr, (
        printed.stderr)
    assert "on each of 6 GPUs" not in printed.stderr, printed.stderr
    gpus = subprocess.run(["bash", str(TRAIN), "transformer", str(out), str(tmp_path / "ck"),
                           "--sbatch", "--nodes", "2", "--gpus", "3"], capture_output=True,
                          text=True)
    assert "tokens per update: up to 4096 on each of 6 GPUs" in gpus.stderr, gpus.stderr


def test_two_slurm_tasks_train_one_model_with_ddp_over_gloo(slurm, tmp_path):  # noqa: F811
    """Not two silent copies: both ranks join one process group and end with the same
    parameters (a test helper in place of fairseq-train writes each rank's)."""
    _, data_bin = binarized_corpus(tmp_path / "corpus", {"train": 200, "valid": 16, "test": 16})
    out = prepared_corpus(tmp_path / "out", data_bin)
    save_dir, parameters, shim = tmp_path / "ckpt", tmp_path / "parameters", tmp_path / "bin"
    parameters.mkdir()
    shim.mkdir()
    (shim / "fairseq-train").write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} "
        f"{shlex.quote(str(ROOT / 'tests' / 'cpu_data_parallel_train.py'))} \"$@\"\n")
    (shim / "fairseq-train").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
           "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore",
           "XLPE_TEST_PARAMETERS": str(parameters)}
    script = tmp_path / "train.sbatch"
    script.write_text(train_sh("transformer", str(out), str(save_dir), "--sbatch", "--gpus", "2",
                               "--max-update", "4", "--cpu", *TINY_MODEL, "--max-tokens", "800",
                               "--num-workers", "0", env=env))
    job = subprocess.run(["sbatch", "--wait", f"--output={tmp_path / 'job.out'}", str(script)],
                         capture_output=True, text=True, env=env, timeout=300)
    log = (save_dir / "train.log").read_text() if (save_dir / "train.log").exists() else ""
    assert job.returncode == 0, f"{job.stderr}\n{log[-3000:]}"
    for rank in (0, 1):
        assert f"distributed init (rank {rank})" in log, f"rank {rank} did not join:\n{log[-3000:]}"
    assert "training on 2 devices" in log and "num_updates 4" in log, log[-3000:]
    ranks = [torch.load(parameters / f"rank{rank}.pt") for rank in (0, 1)]
    assert ranks[0].keys() == ranks[1].keys()
    assert all(torch.equal(ranks[0][name], ranks[1][name]) for name in ranks[0]), \
        "the ranks ended with different parameters: they did not train one model"
    assert (save_dir / "checkpoint_last.pt").exists() and (save_dir / "provenance.json").exists()
    assert (save_dir / "schedule.env").read_text() == \
        "SCHEDULE=dpe-iwslt\nTRAINED_MODEL=transformer\n", "evaluate.sh reads the schedule there"
