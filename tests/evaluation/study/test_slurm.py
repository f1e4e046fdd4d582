"""xlpe-study's runs as jobs of a real single-node SLURM (``slurm_cluster``): the same BLEU as
the local launcher, each run's state on a rerun, a failed job's error in one line, a cancelled
job told as cancelled, and a requeued job resuming from its checkpoint; and the SLURM options'
checks, the job names, and the launcher's commands checked before the work folder is written."""
import argparse
import json
import os
import pickle
import re
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import slurm_cluster
from slurm_cluster import slurm  # noqa: F401  (the fixture)
from support.fairseq_commands import TINY_MODEL, binarized_corpus
from warm_python import run_module
from xlpe_fairseq.evaluation.study.cli import build_parser, main
from xlpe_fairseq.evaluation.study.profiles import MODEL_NAMES
from xlpe_fairseq.evaluation.study.slurm import NAME_COLUMN, job_end, job_names, sbatch_options

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


REQUIRED = ["--data-bin", "D", "--source-lang", "xx", "--target-lang", "yy", "--reference", "R",
            "--work", "W"]


@pytest.mark.parametrize("value, expected", [
    ("--comment=x", {"comment": "x"}),
    ("--exclusive", {"exclusive": True}),
    ("--account=nmt --qos=normal", {"account": "nmt", "qos": "normal"}),
])
def test_sbatch_args_take_one_option_as_their_value(value, expected):
    """argparse takes a lone "--comment=x" for an option of its own: the documented form
    --sbatch-args "--comment=x" must pass it to sbatch, as --sbatch-args=--comment=x does."""
    for words in (["--sbatch-args", value], [f"--sbatch-args={value}"]):
        args = build_parser().parse_args([*REQUIRED, "--launcher", "slurm", "--time", "5",
                                          *words])
        assert args.sbatch_args == expected, words
    args = build_parser().parse_args([*REQUIRED, "--train-args", "--fp16",
                                      "--generate-args", "--beam=2"])
    assert (args.train_args, args.generate_args) == ("--fp16", "--beam=2")


def test_a_forgotten_value_is_not_taken_from_the_next_option(capsys):
    with pytest.raises(SystemExit) as stop:
        main([*REQUIRED, "--launcher", "slurm", "--sbatch-args", "--time", "5"])
    assert stop.value.code == 2 and "--sbatch-args: expected one argument" in \
        capsys.readouterr().err


@pytest.mark.parametrize("seeds", [[1, 2, 3], [7, 42, 123]])
def test_job_names_tell_the_runs_apart_in_squeues_name_column(seeds):
    """squeue shows a job name's first 8 characters: there each run of a study must differ
    from the others (seeds of one model, models that start alike), and the whole name still
    says which study row and seed it is."""
    rows = [*MODEL_NAMES, "xlpe-inxl@monotone", "xlpe-inxl-paper", "dpe-lambda0"]
    names = job_names(rows, seeds)
    shown = {}
    for run, name in names.items():
        shown.setdefault(name[:NAME_COLUMN], []).append(run)
    assert all(len(runs) == 1 for runs in shown.values()), \
        {column: runs for column, runs in shown.items() if len(runs) > 1}
    for (model, seed), name in names.items():
        assert name.startswith(f"s{seed}-") and f".{model}.xlpe-study" in name, name
    assert job_names(["transformer", "dpe"], [1])["transformer", 1] == \
        "s1-trans.transformer.xlpe-study"


@pytest.mark.parametrize("line, kind, told", [
    ("*** JOB 12 ON n1 CANCELLED AT 2026-12-07T18:08:00 ***", "cancelled", "cancelled (job 12)"),
    ("*** STEP 12.0 ON n1 CANCELLED AT 2026-12-07T18:08:00 ***", "cancelled",
     "cancelled (job 12)"),
    ("*** JOB 12 ON n1 CANCELLED AT 2026-12-07T18:08:00 DUE TO TIME LIMIT ***", "failed",
     "failed (job 12): SLURM ended it as TIMEOUT (past its time limit)"),
    ("*** JOB 7 ON n1 CANCELLED AT 2026-12-07T18:08:00 ***", "failed",
     "failed (job 12): ToolError: killed training"),
])
def test_a_job_squeue_has_forgotten_is_told_by_its_log(tmp_path, monkeypatch, line, kind, told):
    """Without squeue's state (MinJobAge past) and without accounting (no sacct), slurmstepd's
    line in the job's log tells a cancelled job (the batch's or the step's line) from one killed
    at its time limit; another job's line tells nothing, and the run's own error stands."""
    monkeypatch.setenv("PATH", str(tmp_path))
    slurm_folder = tmp_path / "run" / "slurm"
    slurm_folder.mkdir(parents=True)
    (slurm_folder / "12_0_log.err").write_text(f"training\nslurmstepd-n1: error: {line}\n")
    with open(slurm_folder / "12_0_result.pkl", "wb") as result:
        pickle.dump(("error", "Traceback ...\nToolError: killed training"), result)
    found, text = job_end(tmp_path / "run", "12", None)
    assert (found, text.partition("; log: ")[0]) == (kind, told), text
    assert text.endswith(f"; log: {slurm_folder / '12_0_log.err'}"), text


@pytest.mark.parametrize("squeue", [None, "echo 'slurm_load_jobs error: Unable to contact "
                                          "slurm controller' >&2; exit 1"])
def test_the_launcher_is_checked_before_the_work_folder_is_written(corpus, tmp_path, squeue):
    """Without squeue, or with one that fails, nothing is written: not settings.json, nor the
    work folder itself."""
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    commands = {"srun": "exit 0", "sbatch": "exit 0", "squeue": squeue}
    for name, body in commands.items():
        if body:
            (bin_folder / name).write_text(f"#!/bin/sh\n{body}\n")
            (bin_folder / name).chmod(0o755)
    work = tmp_path / "work"
    result = run_module("xlpe_fairseq.evaluation.study", [*study_args(corpus, work), *SLURM],
                        env={**os.environ, "PATH": f"{bin_folder}:{os.path.dirname(sys.executable)}"})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stderr.startswith("xlpe-study: error: ") and "squeue" in result.stderr, \
        result.stderr
    assert ("no squeue on PATH" if squeue is None else "Unable to contact") in result.stderr
    assert not work.exists(), f"{work} was written: {sorted(os.listdir(work))}"


def settings_of(text, node):
    """``{key: value}`` of slurm.conf's lines; the node's line, which starts with ``node``
    (``slurmd -C``'s line), under "node"; the partition's without its name."""
    settings = {}
    for line in filter(None, (line.strip() for line in text.splitlines())):
        if line.startswith(node):
            settings["node"] = line[len(node):].strip()
            continue
        key, _, value = line.partition("=")
        settings[key] = value.partition(" ")[2] if key == "PartitionName" else value
    return settings


def test_the_docs_start_the_slurm_the_tests_start(monkeypatch):
    """docs/cluster.md's single-node SLURM is tests/slurm_cluster.py's: the same settings, but
    the cluster's name and the folders, which the docs leave to the user."""
    cluster = Path(__file__).resolve().parents[3] / "docs" / "cluster.md"
    section = cluster.read_text().split("## A single-node SLURM")[1].split("\n## ")[0]
    conf = re.search(r"<<EOF\n(.*?)\n    EOF", section, re.DOTALL)
    assert conf, "docs/cluster.md: no slurm.conf written with a here-document"
    documented = settings_of(conf.group(1), "$(slurmd -C | head -1)")
    node = "NodeName=n CPUs=2 RealMemory=2000"
    monkeypatch.setattr(slurm_cluster.subprocess, "run",
                        lambda *args, **kwargs: SimpleNamespace(stdout=node + "\n"))
    tested = settings_of(slurm_cluster.slurm_conf(Path("STATE")), node)
    assert documented.keys() == tested.keys(), documented.keys() ^ tested.keys()
    differ = {key: (documented[key], tested[key]) for key in documented
              if documented[key] != tested[key] and "$" not in documented[key]
              and key != "ClusterName"}
    assert differ == {}, f"docs/cluster.md and tests/slurm_cluster.py differ: {differ}"


@pytest.mark.parametrize("options, message", [
    (["--launcher", "slurm"], "--launcher slurm needs --time"),
    (["--partition", "gpu", "--time", "60"], "--partition --time: only with --launcher slurm"),
    (["--launcher", "slurm", "--time", "60", "--sbatch-args=-A nmt"], "expected sbatch's long"),
])
def test_slurm_options_are_checked_before_anything_runs(options, message, capsys):
    with pytest.raises(SystemExit) as stop:
        main([*REQUIRED, *options])
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


def wait_for(ready, what, seconds=300):
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, f"{what} not in {seconds} s"
        time.sleep(0.5)


def test_a_cancelled_job_is_told_as_cancelled(corpus, slurm):  # noqa: F811
    """scancel ends a training: the rerun says "cancelled", not a failure with the last line
    of the killed training's log; squeue's default listing tells the job by its name; and a
    local launcher refuses to train a run that a SLURM job trains."""
    work = corpus.root / "cancelled"
    args = study_args(corpus, work, models=["transformer"], seeds=["1"], updates="100000")
    # one option as the value of --sbatch-args, no --job-name: the study's own name
    launcher = [*SLURM[:-2], "--sbatch-args", "--comment=cancelled"]
    run = work / "runs" / "transformer" / "seed1"
    submitted = xlpe_study(*args, *launcher)
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    jobs = [job_ids(work)[run]]
    try:
        script = (run / "slurm" / f"{jobs[0]}_submission.sh").read_text()
        assert "--comment=cancelled" in script, script
        listing = subprocess.run(["squeue", f"--jobs={jobs[0]}"], capture_output=True,
                                 text=True, check=True).stdout
        assert " s1-trans " in listing, f"squeue's NAME column must tell the run:\n{listing}"

        log = run / "train.log"
        wait_for(lambda: log.exists() and "Start iterating over samples" in log.read_text(),
                 "the training")
        local = xlpe_study(*args)
        assert local.returncode == 1, local.stderr[-3000:]
        assert f"(job {jobs[0]}, RUNNING): SLURM jobs train these runs" in local.stderr, \
            local.stderr[-3000:]

        subprocess.run(["scancel", jobs[0]], check=True)
        wait_for_jobs(work)
        told = xlpe_study(*args, *launcher)
        assert told.returncode == 0, told.stderr[-3000:]
        jobs.append(job_ids(work)[run])
        line = next((line for line in told.stderr.splitlines() if f"job {jobs[0]}" in line), "")
        assert line.startswith(f"xlpe-study: transformer seed 1: cancelled (job {jobs[0]}); "
                               "log: "), told.stderr
        assert line.endswith(f"; submitted as job {jobs[1]}"), line
        assert "1 cancelled" in told.stderr and "0 failed" in told.stderr, told.stderr
        # once squeue has forgotten the job (MinJobAge), and without accounting: its log tells
        assert job_end(run, jobs[0], None)[0] == "cancelled", job_end(run, jobs[0], None)
    finally:
        subprocess.run(["scancel", *jobs])
