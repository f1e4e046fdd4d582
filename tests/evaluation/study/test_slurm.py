"""xlpe-study's runs as jobs of a real single-node SLURM (``slurm_cluster``): the same BLEU as
the local launcher, each run's state on a rerun, a failed job's error in one line, and a
requeued job resuming from its checkpoint; and the SLURM options' checks."""
import argparse
import json
import re
import subprocess
import time
from types import SimpleNamespace

import pytest

from slurm_cluster import slurm  # noqa: F401  (the fixture)
from support.fairseq_commands import TINY_MODEL, binarized_corpus
from warm_python import run_module
from xlpe_fairseq.evaluation.study.cli import main
from xlpe_fairseq.evaluation.study.slurm import sbatch_options

TINY = " ".join([*TINY_MODEL, "--max-tokens", "800"])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("slurm-study")
    raw, data_bin = binarized_corpus(root, {"train": 200, "valid": 16, "test": 16})
    return SimpleNamespace(root=root, raw=raw, data_bin=data_bin)


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    # the same arithmetic in a job and in a local run: one OpenMP thread in both
    monkeypatch.setenv("OMP_NUM_THREADS", "1")


def xlpe_study(*args):
    return run_module("xlpe_fairseq.evaluation.study", args)


def study_args(corpus, work, models=("transformer", "dpe"), seeds=("1", "2"), updates="6",
               train_args=TINY):
    return ["--data-bin", str(corpus.data_bin), "--source-lang", "xx", "--target-lang", "yy",
            "--reference", str(corpus.raw / "test.yy"), "--models", *models, "--seeds", *seeds,
            "--updates", updates, "--train-args", train_args, "--cpu",
            "--bootstrap-samples", "200", "--work", str(work)]


SLURM = ["--launcher", "slurm", "--time", "10", "--cpus-per-run", "1", "--mem-per-run", "2",
         "--sbatch-args", "--job-name=xlpe-test --comment=tests"]


def test_sbatch_args_are_long_options_with_or_without_a_value():
    assert sbatch_options("--account=nmt --exclusive --constraint='a100|h100'") == \
        {"account": "nmt", "exclusive": True, "constraint": "a100|h100"}
    for wrong in ("-A nmt", "--account nmt", "--"):
        with pytest.raises(argparse.ArgumentTypeError, match="expected sbatch's long options"):
            sbatch_options(wrong)


@pytest.mark.parametrize("options, message", [
    (["--launcher", "slurm"], "--launcher slurm needs --time"),
    (["--partition", "gpu", "--time", "60"], "--partition --time: only with --launcher slurm"),
    (["--launcher", "slurm", "--time", "60", "--sbatch-args=-A nmt"], "expected sbatch's long"),
])
def test_slurm_options_are_checked_before_anything_runs(options, message, capsys):
    required = ["--data-bin", "D", "--source-lang", "xx", "--target-lang", "yy", "--reference",
                "R", "--work", "W"]
    with pytest.raises(SystemExit) as stop:
        main([*required, *options])
    assert stop.value.code == 2 and message in capsys.readouterr().err


def job_ids(work):
    return {path.parent: path.read_text().strip() for path in work.glob("runs/*/*/slurm_job")}


def queue(jobs):
    out = subprocess.run(["squeue", "--noheader", "--states=all", "--format=%i %T"],
                         capture_output=True, text=True, check=True).stdout
    states = dict(line.split() for line in out.splitlines())
    return {job: states.get(job) for job in jobs}


def wait_for_jobs(work, seconds=300):
    """Wait until no job of the study is queued or running; their last SLURM states."""
    deadline = time.monotonic() + seconds
    while True:
        states = queue(job_ids(work).values())
        if not {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING"} & set(states.values()):
            return states
        assert time.monotonic() < deadline, f"jobs still queued or running: {states}"
        time.sleep(1)


def test_a_study_through_slurm_gives_the_local_studys_bleu(corpus, slurm):  # noqa: F811
    work = corpus.root / "slurm"
    submitted = xlpe_study(*study_args(corpus, work), *SLURM)
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    assert "4 submitted" in submitted.stderr, submitted.stderr
    assert not (work / "report.md").exists(), "no report before the runs are done"
    jobs = job_ids(work)
    assert len(set(jobs.values())) == 4, jobs
    script = (work / "runs" / "dpe" / "seed2" / "slurm" /
              f"{jobs[work / 'runs' / 'dpe' / 'seed2']}_submission.sh").read_text()
    for option in ("--time=10", "--cpus-per-task=1", "--mem=2G", "--requeue",
                   "--job-name=xlpe-test", "--comment=tests", "--signal=USR2@"):
        assert option in script, f"{option} expected in the sbatch script:\n{script}"

    again = xlpe_study(*study_args(corpus, work), *SLURM)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "0 submitted" in again.stderr and "0 failed" in again.stderr, \
        f"a rerun must not submit runs again that are queued, running or done:\n{again.stderr}"
    assert job_ids(work) == jobs

    states = wait_for_jobs(work)
    assert set(states.values()) <= {"COMPLETED", None}, states
    collected = xlpe_study(*study_args(corpus, work), *SLURM)
    assert collected.returncode == 0, collected.stderr[-3000:]
    assert "4 done" in collected.stderr and "| dpe |" in collected.stdout, collected.stderr
    report = json.loads((work / "report.json").read_text())

    local = corpus.root / "local"
    trained = xlpe_study(*study_args(corpus, local), "--jobs", "2")
    assert trained.returncode == 0, trained.stderr[-3000:]
    expected = json.loads((local / "report.json").read_text())
    assert [row["bleu"]["per_seed"] for row in report["models"]] == \
        [row["bleu"]["per_seed"] for row in expected["models"]], \
        "SLURM jobs must give each run the BLEU the local launcher gives it"


def test_a_failed_job_is_told_in_one_line_with_its_log(corpus, slurm):  # noqa: F811
    work = corpus.root / "failing"
    args = study_args(corpus, work, models=["transformer"], seeds=["1"],
                      train_args=TINY + " --no-such-option")
    assert xlpe_study(*args, *SLURM).returncode == 0
    first = job_ids(work)[work / "runs" / "transformer" / "seed1"]
    wait_for_jobs(work)
    told = xlpe_study(*args, *SLURM)
    assert told.returncode == 0, told.stderr[-3000:]
    line = next((line for line in told.stderr.splitlines() if "failed (job" in line), "")
    second = job_ids(work)[work / "runs" / "transformer" / "seed1"]
    subprocess.run(["scancel", second], check=True)
    assert f"transformer seed 1: failed (job {first}): " in line, told.stderr
    assert "unrecognized arguments: --no-such-option" in line, line
    log = re.search(r"log: (\S+);", line)
    assert log and "--no-such-option" in open(log.group(1)).read(), line
    assert f"submitted as job {second}" in line and second != first, line


def test_a_requeued_job_resumes_from_its_last_checkpoint(corpus, slurm):  # noqa: F811
    work = corpus.root / "requeued"
    args = study_args(corpus, work, models=["transformer"], seeds=["1"], updates="100",
                      train_args=TINY + " --save-interval-updates 10")
    assert xlpe_study(*args, *SLURM).returncode == 0
    run = work / "runs" / "transformer" / "seed1"
    job = job_ids(work)[run]
    deadline = time.monotonic() + 120
    while not (run / "checkpoints" / "checkpoint_last.pt").exists():
        assert time.monotonic() < deadline, "no checkpoint in 120 s"
        time.sleep(0.2)
    # as a preemption does: SLURM stops the job and queues it again under its id
    subprocess.run(["scontrol", "requeue", job], check=True)
    # SLURM holds a requeued batch job for two minutes once it has stopped: release it then
    deadline = time.monotonic() + 60
    while subprocess.run(["squeue", "--noheader", f"--jobs={job}", "--format=%T %r"],
                         capture_output=True, text=True).stdout.split() != ["PENDING", "BeginTime"]:
        assert time.monotonic() < deadline, "the requeued job was not held for its begin time"
        time.sleep(0.2)
    subprocess.run(["scontrol", "update", f"jobid={job}", "StartTime=now"], check=True)
    wait_for_jobs(work)
    collected = xlpe_study(*args, *SLURM)
    assert collected.returncode == 0, collected.stderr[-3000:]
    assert "1 done" in collected.stderr and job_ids(work)[run] == job, collected.stderr
    log = (run / "train.log").read_text()
    resumed = re.findall(r"Loaded checkpoint \S+ \(epoch \d+ @ (\d+) updates\)", log)
    assert resumed and 0 < int(resumed[-1]) < 100, \
        f"the requeued job must resume from a checkpoint of the first attempt:\n{log[-3000:]}"
    assert "num_updates 100" in log, log[-3000:]
