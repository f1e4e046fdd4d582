"""A study on a SLURM cluster: each run a job submitted through ``submitit``, its state read
back when the command is called again.

A run's job trains it (resuming from ``checkpoint_last.pt``), then decodes and scores it, as a
local run does, and writes the same ``result.json``. The run folder keeps the job's id
(``slurm_job``) and submitit's files (``slurm/``: the sbatch script, logs, result). A job
requeued by SLURM (preemption, ``scontrol requeue``) or by submitit at its time limit (the
``--signal`` it asks for) starts the run again, and fairseq-train resumes from its last
checkpoint. Only ``squeue`` is asked about jobs: clusters without an accounting database
(``sacct``) are served too.
"""
import argparse
import getpass
import shlex
import shutil
import subprocess
import sys

import submitit

from ...io import InputError, ToolError
from .devices import visible_gpus
from .runs import finished, train_and_evaluate

JOB_FILE = "slurm_job"
QUEUED = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD",
          "RESIZING"}
RUNNING = {"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT"}


class StudyRun(submitit.helpers.Checkpointable):
    """One run as a job's callable: what ``xlpe-study`` does for it locally. At the time
    limit's signal submitit requeues the job with the same callable (``Checkpointable``)."""

    def __init__(self, study, model, seed, references):
        self.study, self.model, self.seed, self.references = study, model, seed, references

    def __call__(self):
        # the GPUs SLURM gave the job, for the run's command.txt
        gpus = visible_gpus() if self.study.gpus_per_run() else ()
        return train_and_evaluate(self.study, self.model, self.seed, self.references, gpus)


def sbatch_options(text):
    """argparse type of ``--sbatch-args``: its ``--name=value`` and ``--name`` words as
    submitit's additional parameters, ``{name: value or True}``."""
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{text!r}: {err}") from None
    options = {}
    for word in words:
        name, equals, value = word[2:].partition("=")
        if not word.startswith("--") or not name:
            raise argparse.ArgumentTypeError(f"{word!r}: expected sbatch's long options as "
                                             "--name=value or --name")
        options[name] = value if equals else True
    return options


def executor(study, run_dir, model, seed):
    """submitit's executor of one run's job, with the study's sbatch options."""
    args = study.args
    if not shutil.which("srun"):
        raise InputError("--launcher slurm: no srun on PATH; submit from a SLURM cluster's "
                         "login node")
    parameters = {"job_name": f"xlpe-{model}-seed{seed}", "time": args.time, "nodes": 1,
                  "ntasks_per_node": 1, "partition": args.partition,
                  "cpus_per_task": args.cpus_per_run,
                  "mem": args.mem_per_run and f"{args.mem_per_run}G",
                  "gpus_per_node": study.gpus_per_run() or None}
    # --sbatch-args has the last word, on these too
    extra = {"requeue": True, **args.sbatch_args}
    given = {name.replace("-", "_") for name in extra}
    parameters = {name: value for name, value in parameters.items()
                  if value is not None and name not in given}
    slurm = submitit.SlurmExecutor(folder=run_dir / "slurm")
    slurm.update_parameters(**parameters, additional_parameters=extra)
    return slurm


def queue_states():
    """``{job id: SLURM state}`` of this user's jobs that ``squeue`` still knows."""
    command = ["squeue", "--noheader", "--states=all", "--format=%i %T",
               f"--user={getpass.getuser()}"]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except FileNotFoundError:
        raise InputError("--launcher slurm: no squeue on PATH; run on a SLURM cluster's login "
                         "node") from None
    if result.returncode != 0:
        raise ToolError(f"{shlex.join(command)} failed: {result.stderr.strip()}")
    return dict(line.split() for line in result.stdout.splitlines() if line.strip())


def job_error(run_dir, job_id, state):
    """One line: why job ``job_id`` of a run ended without its result, and its log."""
    paths = submitit.core.utils.JobPaths(run_dir / "slurm", job_id=job_id, task_id=0)
    log = paths.stderr
    if paths.result_pickle.exists():
        outcome, value = submitit.core.utils.pickle_load(paths.result_pickle)
        if outcome == "error":
            # a traceback's last line is the error, or the last line of fairseq's log that a
            # training's error ends with
            lines = [line.strip() for line in str(value).splitlines() if line.strip()]
            return f"{lines[-1] if lines else 'error'}; log: {log}"
    ended = f"ended as {state}" if state else "ended"
    return (f"the job {ended} without a result (cancelled, out of memory or past its time "
            f"limit?); log: {log}")


def submit_study(study, runs, references):
    """Submit every run not finished, queued or running; print each run's state; True when
    every run is finished."""
    states = queue_states()
    counts = {"done": 0, "queued": 0, "running": 0, "failed": 0, "submitted": 0}
    for model, seed in runs:
        label = f"{model} seed {seed}"
        if finished(study, model, seed):
            counts["done"] += 1
            continue
        run_dir = study.run_dir(model, seed)
        job_file = run_dir / JOB_FILE
        job_id = job_file.read_text(encoding="utf-8").strip() if job_file.exists() else None
        state = states.get(job_id)
        if state in QUEUED or state in RUNNING:
            kind = "queued" if state in QUEUED else "running"
            counts[kind] += 1
            print(f"xlpe-study: {label}: {kind} (job {job_id})", file=sys.stderr)
            continue
        failure = ""
        if job_id:
            counts["failed"] += 1
            failure = f"failed (job {job_id}): {job_error(run_dir, job_id, state)}; "
        run_dir.mkdir(parents=True, exist_ok=True)
        job = executor(study, run_dir, model, seed).submit(StudyRun(study, model, seed,
                                                                     references))
        job_file.write_text(f"{job.job_id}\n", encoding="utf-8")
        counts["submitted"] += 1
        print(f"xlpe-study: {label}: {failure}submitted as job {job.job_id}", file=sys.stderr)
    print("xlpe-study: " + ", ".join(f"{count} {state}" for state, count in counts.items()),
          file=sys.stderr)
    return counts["done"] == len(runs)
