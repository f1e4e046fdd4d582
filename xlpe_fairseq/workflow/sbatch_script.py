"""``xlpe-train --sbatch [--nodes N]``: the sbatch script of one training over several
processes and nodes, started by srun and joined by fairseq's own SLURM initialization
(``--distributed-port``), with the records of a local run (docs/cluster.md)."""
import os
import shlex


def sbatch_script(run, nodes, tasks, cpu):
    """An sbatch script that runs the training's command as ``nodes`` x ``tasks`` processes of
    one training, with the records of a local run."""
    launch = ["srun", "--kill-on-bad-exit=1"]
    if cpu:
        # fairseq's SLURM path makes SLURM_LOCALID the CUDA device and sets it even with
        # --cpu, which fails on a CPU build: on the CPU every process is device 0
        launch += ["bash", "-c", 'SLURM_LOCALID=0 exec "$@"', "fairseq-train"]
    quote = shlex.quote
    lines = [
        "#!/bin/bash",
        f"# {run.name}: {run.model}, size {run.size}, schedule {run.schedule}, on {nodes} "
        f"node(s) x {tasks} process(es); submit with: sbatch [--partition P --time T ...] "
        "THIS_SCRIPT",
        f"#SBATCH --job-name=xlpe-{run.model}-{run.size}",
        f"#SBATCH --nodes={nodes}",
        f"#SBATCH --ntasks-per-node={tasks}",
        *([] if cpu else [f"#SBATCH --gpus-per-node={tasks}"]),
        # a preempted job starts again, and fairseq-train resumes from checkpoint_last.pt
        "#SBATCH --requeue",
        "#SBATCH --open-mode=append",
        "set -euo pipefail",
        f"cd {quote(os.getcwd())}",
        f"mkdir -p -- {quote(run.save_dir)}",
        f"printf 'SCHEDULE=%s\\nTRAINED_MODEL=%s\\n' {quote(run.schedule)} {quote(run.model)} "
        f">{quote(os.path.join(run.save_dir, 'schedule.env'))}",
        "# fairseq's SLURM initialization (--distributed-port): rank SLURM_PROCID, device",
        "# SLURM_LOCALID, rank 0's address the job's first node; a port of this job's",
        "port=$((20000 + SLURM_JOB_ID % 20000))",
        f"{shlex.join([*launch, *run.command])} --distributed-port \"$port\" 2>&1 | tee -a "
        f"{quote(os.path.join(run.save_dir, 'train.log'))}",
        shlex.join(["xlpe-provenance", "training", "--prog", run.name, run.save_dir,
                    "--data-bin", run.data_bin, "--model", run.model, "--size", run.size,
                    "--schedule", run.schedule, "--", *run.command]),
    ]
    return "\n".join(lines) + "\n"
