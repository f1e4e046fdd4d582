"""A study on a SLURM cluster: each run a job submitted through ``submitit``, its state read
back when the command is called again.

A run's job trains it (resuming from ``checkpoint_last.pt``), then decodes and scores it, as a
local run does, and writes the same ``result.json``. The run folder keeps the job's id
(``slurm_job``) and submitit's files (``slurm/``: the sbatch script, logs, result). A job
requeued by SLURM (preemption, ``scontrol requeue``) or by submitit at its time limit (the
``--signal`` it asks for) starts the run again, and fairseq-train resumes from its last
checkpoint. ``squeue`` tells a job's state; where it has forgotten an ended job, ``sacct`` does
if the cluster keeps accounts, else the job's log: clusters without an accounting database are
served too.
"""
import argparse
import getpass
import re
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
# the states of a job SLURM itself ended: the error its run then raised (a training killed)
# is a consequence, not the cause
ENDED_BY_SLURM = {"TIMEOUT": "past its time limit", "OUT_OF_MEMORY": "out of memory",
                  "NODE_FAIL": "its node failed", "BOOT_FAIL": "its node failed to boot",
                  "PREEMPTED": "preempted", "DEADLINE": "past its deadline"}
# what slurmstepd writes into the job's log when SLURM ends it, and the state it means
KILLED_LINE = (r"\*\*\* (?:JOB|STEP) {job}(?:\.\S+)? ON \S+ CANCELLED AT \S+"
               r"(?: DUE TO ([A-Z ]+?))? \*\*\*")
KILLED_BECAUSE = {None: "CANCELLED", "TIME LIMIT": "TIMEOUT", "PREEMPTION": "PREEMPTED",
                  "NODE FAILURE": "NODE_FAIL"}
# squeue's NAME column shows a job name's first 8 characters
NAME_COLUMN = 8


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


def row_codes(models, width):
    """``{row: code}``: a code of at most ``width`` letters and digits for each row, distinct
    within the study: the start of the row's name (without ``xlpe-``), numbered where rows
    start alike (``transformer``, ``transformer-deep``: ``tran1``, ``tran2``)."""
    starts = {model: (re.sub(r"[^A-Za-z0-9]", "", model.removeprefix("xlpe-")) or "row")[:width]
              for model in models}
    codes = {}
    for model in models:
        alike = [other for other in models if starts[other] == starts[model]]
        if len(alike) == 1:
            codes[model] = starts[model]
        else:
            number = str(alike.index(model) + 1)
            codes[model] = starts[model][:max(1, width - len(number))] + number
    if len(set(codes.values())) < len(codes):  # a numbered code met a row's own start
        codes = {model: f"r{k}" for k, model in enumerate(models, 1)}
    return codes


def job_names(models, seeds):
    """``{(row, seed): job name}``: the seed and the row's code first, so that squeue's NAME
    column, which shows 8 characters, tells the study's runs apart, then the row's name
    (``s1-inxlm.xlpe-inxl@monotone.xlpe-study``)."""
    width = max(2, NAME_COLUMN - len("s-") - max(len(str(seed)) for seed in seeds))
    codes = row_codes(models, width)
    return {(model, seed): f"s{seed}-{codes[model]}.{model}.xlpe-study"
            for model in models for seed in seeds}


def check_launcher():
    """InputError unless this machine can submit jobs and ask for their states (srun, sbatch
    and a working squeue): found before the work folder is written."""
    missing = [command for command in ("srun", "sbatch", "squeue") if not shutil.which(command)]
    if missing:
        raise InputError(f"--launcher slurm: no {' or '.join(missing)} on PATH; submit from a "
                         "SLURM cluster's login node")
    queue_states()


def executor(study, run_dir, model, seed):
    """submitit's executor of one run's job, with the study's sbatch options."""
    args = study.args
    name = job_names(args.models, args.seeds)[model, seed]
    parameters = {"job_name": name, "time": args.time, "nodes": 1,
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


def refuse_jobs_in_flight(study, runs):
    """InputError naming the runs whose SLURM job is queued or running, which a local launcher
    must not train too; nothing to refuse where there is no squeue to ask."""
    submitted = {run: study.run_dir(*run) / JOB_FILE for run in runs}
    submitted = {run: path.read_text(encoding="utf-8").strip()
                 for run, path in submitted.items() if path.exists()}
    if not submitted or not shutil.which("squeue"):
        return
    states = queue_states()
    in_flight = [f"{study.run_dir(*run)} (job {job_id}, {states[job_id]})"
                 for run, job_id in submitted.items() if states.get(job_id) in QUEUED | RUNNING]
    if in_flight:
        raise InputError(f"{', '.join(in_flight)}: SLURM jobs train these runs; watch them "
                         "with --launcher slurm, or scancel them first")


def accounted_state(job_id):
    """The state ``sacct`` keeps of a job squeue has forgotten; None without accounting."""
    if not shutil.which("sacct"):
        return None
    result = subprocess.run(["sacct", "--noheader", "--parsable2", "--allocations",
                             f"--jobs={job_id}", "--format=State"],
                            capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    # "CANCELLED by 1000": the state is the first word
    return lines[-1].split()[0] if result.returncode == 0 and lines else None


def logged_state(log, job_id):
    """The state slurmstepd's last line in the job's log tells, when SLURM ended the job
    (``*** JOB 12 ON node CANCELLED AT ... [DUE TO TIME LIMIT] ***``); None otherwise."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    ended = re.findall(KILLED_LINE.format(job=re.escape(job_id)), text)
    return KILLED_BECAUSE.get(ended[-1] or None) if ended else None


def job_end(run_dir, job_id, state):
    """``(kind, one line)`` of job ``job_id`` of a run that ended without its result: kind
    "cancelled" or "failed", the line says why and names its log. ``state`` is squeue's,
    None where squeue has forgotten the job (then sacct's, or what its log tells)."""
    paths = submitit.core.utils.JobPaths(run_dir / "slurm", job_id=job_id, task_id=0)
    log = paths.stderr
    state = state or accounted_state(job_id) or logged_state(log, job_id)
    if state == "CANCELLED":
        return "cancelled", f"cancelled (job {job_id})" + (f"; log: {log}" if log.exists() else "")
    if state in ENDED_BY_SLURM:
        return "failed", (f"failed (job {job_id}): SLURM ended it as {state} "
                          f"({ENDED_BY_SLURM[state]}); log: {log}")
    if paths.result_pickle.exists():
        outcome, value = submitit.core.utils.pickle_load(paths.result_pickle)
        if outcome == "error":
            # a traceback's last line is the error, or the last line of fairseq's log that a
            # training's error ends with
            lines = [line.strip() for line in str(value).splitlines() if line.strip()]
            return "failed", f"failed (job {job_id}): {lines[-1] if lines else 'error'}; log: {log}"
    ended = f"ended as {state}" if state else "ended"
    return "failed", (f"failed (job {job_id}): the job {ended} without a result (cancelled, out "
                      f"of memory or past its time limit?); log: {log}")


def submit_study(study, runs, references):
    """Submit every run not finished, queued or running; print each run's state; True when
    every run is finished. A cancelled run is told as such and submitted again, as a failed
    one is."""
    states = queue_states()
    counts = {"done": 0, "queued": 0, "running": 0, "failed": 0, "cancelled": 0,
              "submitted": 0}
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
        ended = ""
        if job_id:
            kind, line = job_end(run_dir, job_id, state)
            counts[kind] += 1
            ended = f"{line}; "
        run_dir.mkdir(parents=True, exist_ok=True)
        job = executor(study, run_dir, model, seed).submit(StudyRun(study, model, seed,
                                                                     references))
        job_file.write_text(f"{job.job_id}\n", encoding="utf-8")
        counts["submitted"] += 1
        print(f"xlpe-study: {label}: {ended}submitted as job {job.job_id}", file=sys.stderr)
    print("xlpe-study: " + ", ".join(f"{count} {state}" for state, count in counts.items()),
          file=sys.stderr)
    return counts["done"] == len(runs)
