"""The sbatch script of ``xlpe-train --sbatch``: SLURM's resources for nodes x processes, a
CPU training's processes all on device 0, and folder names that stay one word in bash (the
script as it runs under SLURM: tests/recipes/test_multi_node_training.py)."""
import shlex
import subprocess
from types import SimpleNamespace

from xlpe_fairseq.workflow.sbatch_script import sbatch_script


def training(save_dir="ck"):
    return SimpleNamespace(name="train.sh", model="dpe", size="small", schedule="dpe-iwslt",
                           save_dir=save_dir, data_bin="out/data-bin/dpe",
                           command=["fairseq-train", "out/data-bin/dpe", "--cpu"])


def test_on_the_cpu_no_gpu_is_asked_for_and_every_process_is_device_0():
    script = sbatch_script(training(), 2, 3, cpu=True)
    assert "#SBATCH --nodes=2" in script.splitlines()
    assert "#SBATCH --ntasks-per-node=3" in script.splitlines()
    assert "--gpus-per-node" not in script, script
    srun = next(line for line in script.splitlines() if line.startswith("srun "))
    assert shlex.split(srun)[2:6] == ["bash", "-c", 'SLURM_LOCALID=0 exec "$@"',
                                      "fairseq-train"], \
        "fairseq's SLURM path makes SLURM_LOCALID the CUDA device, which a CPU build lacks"


def test_on_gpus_each_process_has_a_gpu():
    script = sbatch_script(training(), 1, 4, cpu=False)
    assert "#SBATCH --gpus-per-node=4" in script.splitlines()
    assert "SLURM_LOCALID=0" not in script


def test_a_folder_named_with_shell_characters_is_one_word(tmp_path):
    save_dir = str(tmp_path / "c k'$(touch PWNED)")
    script = sbatch_script(training(save_dir), 1, 1, cpu=True)
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0, script
    mkdir = next(line for line in script.splitlines() if line.startswith("mkdir "))
    assert shlex.split(mkdir) == ["mkdir", "-p", "--", save_dir]
    assert shlex.split(script.splitlines()[-1])[4] == save_dir, "xlpe-provenance's SAVE_DIR"
