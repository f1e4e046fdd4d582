"""xlpe-study end to end on the tiny synthetic corpus (two models x two seeds, an interrupted
run resumed, SIGTERM, position sets, variants) and its command-line checks.

xlpe-study runs forked from a process that has imported torch and the libraries fairseq
imports (``warm_python``); the trainings and decodings it starts are real processes, as are
the studies stopped by SIGTERM."""
import ctypes
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import sacrebleu

from support.fairseq_commands import TINY_MODEL, binarize_positions, binarized_corpus, linked_data_bin
from support.interrupted_runs import assert_processes_end
from warm_python import real_processes, run_module
from xlpe_fairseq.evaluation.study.cli import build_parser
from xlpe_fairseq.evaluation.study.plan import Study
from xlpe_fairseq.evaluation.study.profiles import PROFILES
from xlpe_fairseq.io import InputError, child_processes


ABSOLUTE_PATH = re.compile(r"(^|[\s`'=])/\w", re.MULTILINE)


TINY = " ".join([*TINY_MODEL, "--max-tokens", "800"])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    raw, data_bin = binarized_corpus(root, {"train": 200, "valid": 16, "test": 16})
    return SimpleNamespace(root=root, raw=raw, data_bin=data_bin)


def study_args(corpus, work, *extra):
    return ["--data-bin", str(corpus.data_bin), "--source-lang", "xx", "--target-lang", "yy",
            "--reference", str(corpus.raw / "test.yy"), "--models", "transformer", "dpe",
            "--seeds", "1", "2", "--updates", "6", "--train-args", TINY, "--cpu",
            "--bootstrap-samples", "200", "--work", str(work), *extra]


def xlpe_study(*args):
    return run_module("xlpe_fairseq.evaluation.study", args)


def test_study_trains_every_run_resumes_an_interrupted_one_and_reports(corpus):
    work = corpus.root / "work"
    # an interrupted run: dpe seed 2 stopped at update 3 of 6
    interrupted = Study(build_parser().parse_args(study_args(corpus, work)))
    command = interrupted.train_command("dpe", 2, max_update=3)
    assert command[1:3] == ["-m", "fairseq_cli.train"], command
    assert run_module(command[2], command[3:]).returncode == 0

    first = xlpe_study(*study_args(corpus, work))
    assert first.returncode == 0, first.stderr[-3000:]
    assert "[4/4]" in first.stderr and "ETA" in first.stderr, "progress lines with an ETA expected"
    resumed_log = (work / "runs" / "dpe" / "seed2" / "train.log").read_text()
    assert "@ 3 updates" in resumed_log and "num_updates 6" in resumed_log, \
        "the interrupted run must resume from its checkpoint at update 3 and finish at 6"

    report_text = (work / "report.json").read_text()
    assert str(corpus.root) not in report_text, \
        "report.json must show paths relative to the work folder, as report.md does"
    report = json.loads(report_text)
    assert report["settings"]["data_bin"] == os.path.relpath(corpus.data_bin, work)
    assert [row["model"] for row in report["models"]] == ["transformer", "dpe"]
    for row in report["models"]:
        assert len(row["bleu"]["per_seed"]) == 2 and len(row["chrf"]["per_seed"]) == 2
    dpe = report["models"][1]
    assert set(dpe["bleu"]["vs_baseline"]) == {"delta", "low", "high", "p"}
    assert dpe["bleu"]["vs_baseline"]["low"] <= dpe["bleu"]["vs_baseline"]["high"]
    markdown = (work / "report.md").read_text()
    assert "| transformer (baseline) |" in markdown and "| dpe |" in markdown
    assert "fairseq_cli.train" in markdown, "the report lists every run's command"
    assert (work / "curves.png").stat().st_size > 0
    for model in ("transformer", "dpe"):
        for seed in (1, 2):
            result = json.loads((work / "runs" / model / f"seed{seed}" / "result.json").read_text())
            assert result["sentences"] == 16 and result["curve"], (model, seed)
            output = work / "hypotheses" / model / f"seed{seed}.txt"
            lines = output.read_text(encoding="utf-8").split("\n")[:-1]
            references = (corpus.raw / "test.yy").read_text(encoding="utf-8").splitlines()
            assert round(sacrebleu.corpus_bleu(lines, [references]).score, 2) == \
                result["bleu"], f"{output} must be the output its run's BLEU was scored on"

    logs = {path: path.stat().st_size for path in work.glob("runs/*/*/train.log")}
    again = xlpe_study(*study_args(corpus, work))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "4 already finished" in again.stderr
    assert {path: path.stat().st_size for path in logs} == logs, "finished runs were retrained"

    other = xlpe_study(*study_args(corpus, work)[:-2], "--updates", "8", "--work", str(work))
    assert other.returncode == 1 and "other settings" in other.stderr and "updates" in other.stderr

    # what the checkpoints were trained with, defaults included
    dpe_options = dpe["options"]
    assert dpe_options["model"]["name"] == "transformer_dpe"
    assert dpe_options["model"]["dpe_output"] == "residual", "the default, not on the command line"
    assert dpe_options["criterion"]["order_lambda"] == 0.5
    assert dpe_options["task"]["name"] == "translation_reorder"
    assert "seed" not in dpe_options["model"] and "data" not in dpe_options["task"], \
        "per-run options must not be part of a row's options"
    assert report["models"][0]["options"]["model"]["name"] == "transformer"
    # a seed trained after a code default changed
    result_json = work / "runs" / "dpe" / "seed2" / "result.json"
    result = json.loads(result_json.read_text())
    result["options"]["model"]["dpe_output"] = "layers"
    result_json.write_text(json.dumps(result))
    mixed = xlpe_study(*study_args(corpus, work))
    refusal = mixed.stderr.strip().splitlines()[-1]
    assert mixed.returncode == 1 and "Traceback" not in mixed.stderr, mixed.stderr[-3000:]
    assert "dpe: seeds 1 and 2" in refusal and "model.dpe_output" in refusal, refusal


# tgkill's system call number: Python has no call that signals one thread of another process
TGKILL = {"x86_64": 234, "aarch64": 131}.get(platform.machine())


def signal_a_worker_thread(pid, signum):
    """Signal one of ``pid``'s threads other than its main one, as the kernel may deliver a
    signal sent to the process."""
    thread = next(int(t) for t in sorted(os.listdir(f"/proc/{pid}/task")) if int(t) != pid)
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.syscall(TGKILL, pid, thread, signum) == 0, os.strerror(ctypes.get_errno())


@pytest.mark.parametrize("receiver", ["process", "worker thread"])
def test_sigterm_stops_the_study_and_its_running_trainings(corpus, tmp_path, receiver):
    """A cluster's time limit sends SIGTERM: the study and the fairseq-train runs it started
    end at once (they resume from their checkpoints on the next call), instead of the study
    waiting for them to finish; also where the kernel hands the signal to a thread that waits
    for a training."""
    if receiver == "worker thread" and not (TGKILL and os.path.isdir("/proc")):
        pytest.skip("signals one thread through Linux's tgkill on x86-64 or aarch64")
    args = study_args(corpus, tmp_path / "work", "--jobs", "2")
    args[args.index("--updates") + 1] = "100000"
    study = subprocess.Popen([sys.executable, "-m", "xlpe_fairseq.evaluation.study", *args],
                             stderr=subprocess.PIPE, text=True, env=real_processes(os.environ))
    send = (study.send_signal if receiver == "process"
            else lambda signum: signal_a_worker_thread(study.pid, signum))
    try:
        stopped_by_sigterm(study, send)
    finally:
        if study.poll() is None:  # a check failed: leave no 100,000-update training behind
            for pid in child_processes(study.pid):
                os.kill(pid, signal.SIGKILL)
            study.kill()
            study.wait()


def stopped_by_sigterm(study, send):
    # a loaded machine (a CI runner, trainings beside the tests) takes its time to start them
    deadline = time.monotonic() + 300
    trainings = []
    while len(trainings) < 2 and time.monotonic() < deadline and study.poll() is None:
        time.sleep(0.2)
        trainings = child_processes(study.pid)
    assert len(trainings) == 2, f"expected two trainings (--jobs 2), found {trainings}"
    send(signal.SIGTERM)
    stderr = study.communicate(timeout=60)[1]
    assert study.returncode == 128 + signal.SIGTERM, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    assert stderr.strip().splitlines()[-1] == (
        "xlpe-study: stopped by SIGTERM after 0 of 4 runs; the same command resumes the others "
        "from their last checkpoints"), "a stopped study must say how to resume it: " + stderr[-500:]
    assert_processes_end(trainings, "trainings")


def end_process_tree(process):
    """SIGTERM a study (it ends its trainings), SIGKILL what is left after a minute."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            for pid in child_processes(process.pid):
                os.kill(pid, signal.SIGKILL)
            process.kill()
            process.communicate()


def test_a_second_command_on_a_training_study_tells_the_progress_and_never_trains(corpus,
                                                                                    tmp_path):
    """The same command again while the study trains (as one does to see how far it is) must
    not train the same runs a second time into the same folders: it tells each run's
    progress and refuses in one line that names the running study."""
    work = tmp_path / "work"
    args = study_args(corpus, work)
    args[args.index("--updates") + 1] = "100000"
    command = [sys.executable, "-m", "xlpe_fairseq.evaluation.study", *args]
    env = real_processes(os.environ)  # its trainings are its children; the lock names its pid
    first = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    second = None
    try:
        deadline = time.monotonic() + 300
        log = work / "runs" / "transformer" / "seed1" / "train.log"
        while not (log.exists() and child_processes(first.pid)) and first.poll() is None:
            assert time.monotonic() < deadline, "the first study started no training in 300 s"
            time.sleep(0.2)
        trainings = child_processes(first.pid)
        assert len(trainings) == 1, f"one training expected (--jobs 1), found {trainings}"
        second = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
        try:
            stderr = second.communicate(timeout=120)[1]
        except subprocess.TimeoutExpired:
            pytest.fail("the second command did not end in 120 s: it trains the study's runs "
                        f"again (its processes: {child_processes(second.pid)})")
        assert second.returncode == 1, stderr[-3000:]
        lines = stderr.strip().splitlines()
        assert lines[-1].startswith(f"xlpe-study: error: {work} is in use by another run "
                                    f"(pid {first.pid}, xlpe-study write"), lines[-1]
        assert "xlpe-study: transformer seed 1: training, update " in stderr, stderr
        assert "xlpe-study: dpe seed 2: waiting" in stderr, stderr
        assert "xlpe-study: 0 done, 1 training, 0 evaluating, 3 waiting" in stderr, stderr
        assert child_processes(first.pid) == trainings and not \
            (work / "runs" / "transformer" / "seed2").exists(), "a second training was started"
    finally:
        for process in (second, first):
            if process:
                end_process_tree(process)


def test_xlpe_models_need_a_data_bin_with_positions(corpus, tmp_path):
    args = study_args(corpus, tmp_path / "work")
    args[args.index("dpe")] = "xlpe-inxl"
    result = xlpe_study(*args)
    assert result.returncode == 1 and "--xlpe-data-bin" in result.stderr
    assert not (tmp_path / "work" / "runs").exists(), "nothing may be trained before the check"


@pytest.fixture(scope="module")
def position_sets(corpus):
    """The corpus's positions in every split, and the same text with monotone positions."""
    xlpe = linked_data_bin(corpus.data_bin, corpus.root / "xlpe")
    monotone = linked_data_bin(corpus.data_bin, corpus.root / "monotone",
                               keep=lambda name: "reorder" not in name)
    jobs = [(corpus.raw / f"{split}.reorder", corpus.raw / f"{split}.xx", xlpe, split)
            for split in ("valid", "test")]
    for split in ("train", "valid", "test"):
        lines = (corpus.raw / f"{split}.xx").read_text().splitlines()
        flat = corpus.root / f"{split}.monotone.reorder"
        flat.write_text("".join(" ".join(map(str, range(len(line.split())))) + "\n"
                                for line in lines))
        jobs.append((flat, corpus.raw / f"{split}.xx", monotone, split))
    binarize_positions(*jobs)
    return xlpe, monotone


def test_position_sets_train_a_control_and_decode_with_other_test_positions(corpus, position_sets):
    work = corpus.root / "positions-work"
    xlpe, monotone = position_sets
    args = study_args(corpus, work, "--xlpe-data-bin", str(xlpe), "--positions",
                      f"monotone={monotone}", "--test-positions", "monotone", "--jobs", "2")
    k = args.index("--models")
    args[k + 1:k + 3] = ["transformer", "xlpe-inxl", "xlpe-inxl@monotone"]
    seeds = args.index("--seeds")
    args[seeds + 1:seeds + 3] = ["1"]  # one seed: the first test covers several
    result = xlpe_study(*args)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "[3/3]" in result.stderr, "3 runs (3 models x 1 seed) expected in the progress"

    report = json.loads((work / "report.json").read_text())
    assert [row["model"] for row in report["models"]] == [
        "transformer", "xlpe-inxl", "xlpe-inxl [test: monotone]", "xlpe-inxl@monotone"], \
        "one row per model, plus the oracle-trained XL PE decoded with monotone test positions"
    assert report["settings"]["positions"] == {"monotone": os.path.relpath(monotone, work)}
    control = (work / "runs" / "xlpe-inxl@monotone" / "seed1" / "command.txt").read_text()
    assert str(monotone) in control, "the control must train on the monotone set"
    run = work / "runs" / "xlpe-inxl" / "seed1"
    assert (run / "generate.out").read_text() != (run / "generate.test-monotone.out").read_text(), \
        "decoding with monotone test positions must change XL PE's scores"
    markdown = (work / "report.md").read_text()
    assert "| xlpe-inxl [test: monotone] |" in markdown and "`MODEL@SET`" in markdown
    assert markdown.startswith("# Study: 4 rows (3 models) × 1 seed\n"), markdown.splitlines()[0]
    assert str(corpus.root) not in markdown and not ABSOLUTE_PATH.search(markdown), \
        "the report must hold no absolute paths: " + markdown
    assert "--user-dir $(xlpe-user-dir)" in markdown and "data `../data-bin`" in markdown, markdown
    outputs = sorted(path.relative_to(work / "hypotheses").as_posix()
                     for path in (work / "hypotheses").glob("*/*.txt"))
    assert outputs == ["transformer/seed1.txt", "xlpe-inxl/seed1.test-monotone.txt",
                       "xlpe-inxl/seed1.txt", "xlpe-inxl@monotone/seed1.txt"], \
        "the report keeps one test output per row and seed"

    again = xlpe_study(*args)
    assert again.returncode == 0 and "3 already finished" in again.stderr, again.stderr[-3000:]

    grown = xlpe_study(*args, "--positions", f"oracle={xlpe}")
    assert grown.returncode == 0 and "3 already finished" in grown.stderr, \
        "a new position set must join the study without retraining its finished runs: " \
        + grown.stderr[-3000:]
    settings = json.loads((work / "settings.json").read_text())
    assert settings["positions"] == {"monotone": str(monotone.resolve()),
                                     "oracle": str(xlpe.resolve())}
    moved = [f"monotone={xlpe}" if arg == f"monotone={monotone}" else arg for arg in args]
    refused = xlpe_study(*moved)
    assert refused.returncode == 1 and "positions monotone" in refused.stderr, \
        "a set's data-bin may not change under its name: " + refused.stderr[-3000:]

    tested = xlpe_study(*args, "--positions", f"oracle={xlpe}", "--test-positions", "monotone",
                        "oracle")
    assert tested.returncode == 0, tested.stderr[-3000:]
    shares = json.loads((work / "report.json").read_text())["oracle_gain_shares"]
    assert list(shares) == ["xlpe-inxl"], \
        "the XL PE row decoded with oracle and monotone test positions gets its share: " \
        + str(shares)
    assert "## How much of the oracle's gain" in (work / "report.md").read_text()

    preorderer = corpus.root / "preorderer.pt"
    run_module("xlpe_fairseq.preordering.train", [
        "--source", corpus.raw / "train.xx", "--reorder", corpus.raw / "train.reorder", "--save",
        preorderer, "--embed-dim", "16", "--hidden-dim", "16", "--epochs", "1"]
    ).check_returncode()
    trained = (run / "train.log").read_text()
    nbest = xlpe_study(*args, "--positions", f"oracle={xlpe}", "--test-positions", "monotone",
                       "oracle", "--preorderer", str(preorderer), "--preorderer-nbest", "2")
    assert nbest.returncode == 0 and "2 already finished" in nbest.stderr, \
        "the k-best row decodes the XL PE run again, nothing else: " + nbest.stderr[-3000:]
    assert (run / "train.log").read_text() == trained, "the XL PE run was trained again"
    rows = [row["model"] for row in json.loads((work / "report.json").read_text())["models"]]
    assert "xlpe-inxl [test: preorderer-2best]" in rows, rows
    assert "xlpe-inxl@monotone [test: preorderer-2best]" not in rows, \
        "a control trained on a position set is decoded with that set only"
    assert (run / "generate.test-preorderer-2best.out").exists(), sorted(os.listdir(run))


def test_position_set_mistakes_are_refused_before_training(corpus, position_sets, tmp_path):
    monotone = position_sets[1]
    unnamed = xlpe_study(*study_args(corpus, tmp_path / "a", "--test-positions", "oracle"))
    assert unnamed.returncode == 2 and "not named by --positions" in unnamed.stderr
    args = study_args(corpus, tmp_path / "b", "--positions", f"monotone={monotone}")
    args[args.index("dpe")] = "transformer@monotone"
    plain = xlpe_study(*args)
    assert plain.returncode == 1 and "reads no reorder positions" in plain.stderr, plain.stderr
    assert not (tmp_path / "b" / "runs").exists(), "nothing may be trained before the check"


def test_updates_0_is_a_usage_error_before_any_work(corpus, tmp_path):
    """it started a training that failed, and the work folder then refused other settings"""
    args = study_args(corpus, tmp_path / "work")
    args[args.index("--updates") + 1] = "0"
    result = xlpe_study(*args)
    assert result.returncode == 2 and "argument --updates: expected a whole number from 1" in \
        result.stderr.splitlines()[-1], result.stderr
    assert not (tmp_path / "work").exists()


def test_a_reference_of_another_length_than_the_split_is_refused_before_training(corpus,
                                                                                tmp_path):
    """found after the training, and blamed on generate.out"""
    reference = tmp_path / "test.yy"
    reference.write_text("".join((corpus.raw / "test.yy").read_text().splitlines(True)[:-1]))
    args = study_args(corpus, tmp_path / "work")
    args[args.index("--reference") + 1] = str(reference)
    result = xlpe_study(*args)
    assert result.returncode == 1 and result.stderr == (
        f"xlpe-study: error: {reference}: 15 lines, but the test split of {corpus.data_bin} "
        "has 16 sentences: give the reference of that split\n"), result.stderr
    other = xlpe_study(*study_args(corpus, tmp_path / "work", "--gen-subset", "bogus"))
    assert other.returncode == 1 and other.stderr == (
        f"xlpe-study: error: {corpus.data_bin}: no bogus split (bogus.xx-yy.xx.idx); "
        "--gen-subset names the split to decode\n"), other.stderr
    assert not (tmp_path / "work").exists()


def test_train_args_validation_interval_replaces_the_profiles(corpus, tmp_path):
    """One interval per command: the profile's unless --train-args names its own."""
    def intervals(train_args):
        args = build_parser().parse_args(study_args(corpus, tmp_path / "work"))
        args.train_args = train_args
        command = Study(args).train_command("transformer", 1)
        return [command[k + 1] if option == "--validate-interval-updates" else option
                for k, option in enumerate(command)
                if option.split("=")[0] == "--validate-interval-updates"]

    assert intervals("") == [str(PROFILES["cpu-demo"]["validate_every"])]
    assert intervals("--validate-interval-updates 7 --dropout 0.1") == ["7"], \
        "the study's command must carry only the interval --train-args asked for"
    assert intervals("--validate-interval-updates=7") == ["--validate-interval-updates=7"], \
        "an interval written as --option=value replaces the profile's too"


def test_variants_are_rows_of_one_model_with_their_own_options(corpus, position_sets, tmp_path):
    """Two rows of DPE in one report: as is, and with λ = 0 on a position set whose valid split
    has order targets; each DPE row shows whether its network learned the order."""
    work = tmp_path / "work"
    full = position_sets[0]
    variant = "dpe-lambda0=dpe@full --order-lambda 0"
    args = study_args(corpus, work, "--positions", f"full={full}", "--variant", variant,
                      "--models", "dpe", "dpe-lambda0", "--seeds", "1")
    result = xlpe_study(*args)
    assert result.returncode == 0, result.stderr[-3000:]

    report = json.loads((work / "report.json").read_text())
    assert [row["model"] for row in report["models"]] == ["dpe", "dpe-lambda0"]
    command = (work / "runs" / "dpe-lambda0" / "seed1" / "command.txt").read_text().split()
    lambdas = [command[k + 1] for k, option in enumerate(command) if option == "--order-lambda"]
    assert lambdas[-1] == "0", f"the variant's option must come last and win: {lambdas}"
    assert command[command.index("fairseq_cli.train") + 1] == str(full), \
        "dpe@SET trains on the set's data-bin"
    diagnostics = report["order_diagnostics"]
    assert set(diagnostics["dpe"]) == {"train"}, "the plain data-bin has no valid order targets"
    assert set(diagnostics["dpe-lambda0"]) == {"train", "valid"}
    for split in diagnostics["dpe-lambda0"].values():
        assert 0 <= split["order_nearest_target"] + split["order_nearest_own"] <= 1, split
        assert split["order_nearest_target"] <= split["order_nearer_target"] <= 1, (
            f"a token nearest its target of all positions is nearer it than its own: {split}")
    markdown = (work / "report.md").read_text()
    assert f"`dpe-lambda0` = `{variant.split('=', 1)[1]}`" in markdown, \
        "the report must say what a variant row is"
    assert "| dpe-lambda0 | valid |" in markdown and "| dpe | train |" in markdown

    changed = xlpe_study(*[a if a != variant else "dpe-lambda0=dpe@full --order-lambda 0.1"
                           for a in args])
    assert changed.returncode == 1 and "variants dpe-lambda0" in changed.stderr, changed.stderr


@pytest.mark.parametrize("variant,message", [
    ("transformer=dpe --order-lambda 0", "the name of a model"),
    ("a=dpe", None),
])
def test_variant_names_are_checked_on_the_command_line(corpus, tmp_path, variant, message):
    args = study_args(corpus, tmp_path / "work", "--variant", variant, "--variant",
                      "b=a --dropout 0")
    result = xlpe_study(*args)
    assert result.returncode == 2, result.stderr
    assert (message or "build a variant on a model, not a variant") in result.stderr


def test_the_gpu_lease_of_the_inxl_study_runs_on_the_cpu(corpus, position_sets):
    """docs/results/inxl-at-scale/lease.sh, the command a lent GPU runs, at a tiny budget on
    the CPU: its variant of the previous init, oracle test positions and best checkpoints (two
    of its four rows, to keep the test short)."""
    xlpe, _ = position_sets
    recipe_out = corpus.root / "lease-corpus"
    (recipe_out / "data-bin").mkdir(parents=True)
    (recipe_out / "sets").mkdir()
    (recipe_out / "raw").mkdir()
    (recipe_out / "data-bin" / "dpe").symlink_to(corpus.data_bin)
    (recipe_out / "data-bin" / "xlpe").symlink_to(xlpe)
    (recipe_out / "sets" / "oracle").symlink_to(xlpe)
    (recipe_out / "raw" / "test.yy").symlink_to(corpus.raw / "test.yy")
    work = corpus.root / "lease-work"
    lease = Path(__file__).resolve().parents[3] / "docs" / "results" / "inxl-at-scale" / "lease.sh"
    result = subprocess.run(
        ["bash", str(lease), "1", str(recipe_out), str(work), "--cpu", "--updates", "2",
         "--train-args", TINY, "--bootstrap-samples", "50",
         "--generate-args", "--beam 1 --batch-size 16", "--models", "transformer",
         "xlpe-inxl-paper"],
        capture_output=True, text=True, env={**os.environ, "SRC": "xx", "TGT": "yy", "JOBS": "1",
                                             "PATH": f"{Path(sys.executable).parent}:"
                                                     f"{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((work / "report.json").read_text())
    assert [row["model"] for row in report["models"]] == [
        "transformer", "xlpe-inxl-paper", "xlpe-inxl-paper [test: oracle]"]
    assert report["settings"]["checkpoint"] == "best"
    command = (work / "runs" / "xlpe-inxl-paper" / "seed1" / "command.txt").read_text()
    assert "--xlpe-init xavier --xlpe-uv-lr-scale 1" in command, \
        "the paper's row must train random U and V at the full learning rate"
    assert set(report["input_diagnostics"]) == {"xlpe-inxl-paper"}, report["input_diagnostics"]


def test_the_gpu_lease_that_screens_a_low_resource_profile_runs_on_the_cpu(corpus):
    """docs/results/low-resource-profile/lease.sh at a tiny budget on the CPU (its last row
    alone, to keep the test short): the row's options reach fairseq over the profile's
    (smoothing 0.2, attention and activation dropout, 5+5 layers of 2 heads) and the report
    says where its validation bottomed out."""
    recipe_out = corpus.root / "profile-lease-corpus"
    (recipe_out / "data-bin").mkdir(parents=True)
    (recipe_out / "raw").mkdir()
    (recipe_out / "data-bin" / "dpe").symlink_to(corpus.data_bin)
    (recipe_out / "raw" / "test.yy").symlink_to(corpus.raw / "test.yy")
    work = corpus.root / "profile-lease-work"
    lease = (Path(__file__).resolve().parents[3] / "docs" / "results" / "low-resource-profile"
             / "lease.sh")
    narrow = ("--encoder-embed-dim 32 --decoder-embed-dim 32 --encoder-ffn-embed-dim 64 "
              "--decoder-ffn-embed-dim 64 --max-tokens 800")
    result = subprocess.run(
        ["bash", str(lease), "1", str(recipe_out), str(work), "--cpu", "--updates", "2",
         "--train-args", narrow, "--bootstrap-samples", "50",
         "--generate-args", "--beam 1 --batch-size 16", "--models", "regularised-4k-5l2h",
         "--baseline", "regularised-4k-5l2h"],
        capture_output=True, text=True, env={**os.environ, "SRC": "xx", "TGT": "yy", "JOBS": "1",
                                             "PATH": f"{Path(sys.executable).parent}:"
                                                     f"{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((work / "report.json").read_text())
    options = {row["model"]: row["options"] for row in report["models"]}
    trained = {name: (o["criterion"]["label_smoothing"], o["model"]["attention_dropout"],
                      o["model"]["activation_dropout"], o["model"]["encoder_layers"],
                      o["model"]["decoder_layers"], o["model"]["encoder_attention_heads"],
                      o["model"]["decoder_attention_heads"]) for name, o in options.items()}
    assert trained == {"regularised-4k-5l2h": (0.2, 0.1, 0.1, 5, 5, 2, 2)}, trained
    assert report["settings"]["checkpoint"] == "best"
    assert set(report["validation"]) == {"regularised-4k-5l2h"}, report["validation"]
    assert "## Where does validation bottom out?" in (work / "report.md").read_text()


def test_best_checkpoint_is_saved_at_every_validation(corpus, tmp_path):
    """fairseq updates checkpoint_best.pt only when it saves; with --checkpoint best the study
    saves at every validation, or "best" would be whatever was saved last."""
    def command(*extra, train_args=TINY):
        args = build_parser().parse_args(study_args(corpus, tmp_path / "work", *extra))
        args.train_args = train_args
        return Study(args).train_command("transformer", 1)

    interval = str(PROFILES["cpu-demo"]["validate_every"])
    best = command("--checkpoint", "best")
    assert best[best.index("--save-interval-updates") + 1] == interval, best
    assert best[best.index("--keep-interval-updates") + 1] == "1", best
    asked = command("--checkpoint", "best",
                    train_args="--validate-interval-updates=3 --keep-interval-updates 2")
    assert asked[asked.index("--save-interval-updates") + 1] == "3", \
        "the save interval must follow the validation interval --train-args asked for"
    assert asked.count("--keep-interval-updates") == 1, asked
    assert "--save-interval-updates" not in command(), "--checkpoint last needs no extra saves"


def test_best_checkpoint_holds_the_lowest_validation_of_the_run(corpus, tmp_path):
    """End to end, with epoch-end saves off as lease.sh has them: the run's checkpoint_best.pt
    is the one with the lowest validation loss of its log, and every validation was saved."""
    work = tmp_path / "work"
    args = study_args(corpus, work, "--checkpoint", "best")
    args[args.index("--models") + 1:args.index("--seeds")] = ["transformer"]
    args[args.index("--seeds") + 1:args.index("--updates")] = ["1"]
    args[args.index("--train-args") + 1] = (TINY + " --validate-interval-updates 2"
                                               " --save-interval 1000 --validate-interval 1000")
    result = xlpe_study(*args)
    assert result.returncode == 0, result.stderr[-3000:]
    run = work / "runs" / "transformer" / "seed1"
    log = (run / "train.log").read_text()
    losses = [float(loss) for loss in re.findall(r"valid on 'valid' subset \| loss ([\d.]+)", log)]
    assert len(losses) >= 3, log[-2000:]
    assert log.count("Saved checkpoint") >= len(losses), "every validation must be saved"
    import torch
    best = torch.load(run / "checkpoints" / "checkpoint_best.pt", map_location="cpu",
                      weights_only=False)
    assert abs(best["extra_state"]["val_loss"] - min(losses)) < 1e-3, (best["extra_state"],
                                                                       losses)


def test_averaging_saves_and_keeps_the_validations_it_averages(corpus, tmp_path):
    """--checkpoint average saves a checkpoint at every validation and keeps as many as it
    averages; --train-args that keep fewer are refused before anything trains."""
    def command(*extra, train_args=TINY):
        args = build_parser().parse_args(study_args(corpus, tmp_path / "work", *extra))
        args.train_args = train_args
        return Study(args).train_command("transformer", 1)

    interval = str(PROFILES["cpu-demo"]["validate_every"])
    averaged = command("--checkpoint", "average", "--average-last", "3")
    assert averaged[averaged.index("--save-interval-updates") + 1] == interval, averaged
    assert averaged[averaged.index("--keep-interval-updates") + 1] == "3", \
        "the study must keep the checkpoints of as many validations as it averages"
    kept_all = command("--checkpoint", "average", train_args="--keep-interval-updates -1")
    assert kept_all.count("--keep-interval-updates") == 1, kept_all
    with pytest.raises(InputError, match="keeps 2 interval checkpoints.*fewer than the 3"):
        command("--checkpoint", "average", "--average-last", "3",
                train_args="--keep-interval-updates 2")
    refused = xlpe_study(*study_args(corpus, tmp_path / "refused", "--checkpoint", "average",
                                     "--train-args", TINY + " --keep-interval-updates 1"))
    assert refused.returncode == 1 and "fewer than the 5" in refused.stderr, refused.stderr
    assert not (tmp_path / "refused").exists(), "nothing may train or be written when refused"


def test_a_work_folder_from_before_averaging_keeps_its_settings(corpus, tmp_path):
    """Folders made before --checkpoint average existed have no average_last in their
    settings.json; they must resume, not be refused as made with other settings."""
    args = build_parser().parse_args(study_args(corpus, tmp_path / "work"))
    study = Study(args)
    study.check_settings()
    path = tmp_path / "work" / "settings.json"
    settings = json.loads(path.read_text())
    del settings["average_last"]
    path.write_text(json.dumps(settings))
    Study(args).check_settings()
    averaged = build_parser().parse_args(study_args(corpus, tmp_path / "work",
                                                    "--checkpoint", "average"))
    with pytest.raises(InputError, match="average_last, checkpoint differ"):
        Study(averaged).check_settings()


def test_the_average_checkpoint_is_the_mean_of_the_last_validations(corpus, tmp_path):
    """End to end: the run is decoded with checkpoint_average.pt, whose weights are the mean of
    the checkpoints its last two validations saved, and the report says so."""
    import torch
    work = tmp_path / "work"
    args = study_args(corpus, work, "--checkpoint", "average", "--average-last", "2")
    args[args.index("--models") + 1:args.index("--seeds")] = ["transformer"]
    args[args.index("--seeds") + 1:args.index("--updates")] = ["1"]
    # small batches: an epoch of more than 6 updates, as fairseq saves no update checkpoint
    # at a validation that ends an epoch
    args[args.index("--train-args") + 1] = TINY + " --max-tokens 200 --validate-interval-updates 2"
    result = xlpe_study(*args)
    assert result.returncode == 0, result.stderr[-3000:]
    checkpoints = work / "runs" / "transformer" / "seed1" / "checkpoints"
    kept = sorted(checkpoints.glob("checkpoint_*_*.pt"))
    assert [int(path.stem.rsplit("_", 1)[1]) for path in kept] == [4, 6], \
        f"the last two validations' checkpoints (updates 4 and 6) expected, found {kept}"
    states = [torch.load(path, map_location="cpu", weights_only=False)["model"]
              for path in kept]
    averaged = torch.load(checkpoints / "checkpoint_average.pt", map_location="cpu",
                          weights_only=False)["model"]
    for name, value in averaged.items():
        assert torch.allclose(value, (states[0][name] + states[1][name]) / 2, atol=1e-6), \
            f"{name} is not the mean of the two checkpoints"
    embedding = "encoder.embed_tokens.weight"
    assert not torch.equal(states[0][embedding], states[1][embedding]), \
        "the two checkpoints must differ, or the mean proves nothing"
    assert "the mean of the checkpoints of the last 2 validations" in \
        (work / "report.md").read_text()


def test_xlpe_rows_decode_the_best_reordering_and_the_k_best_only_when_asked():
    """The k best took 2.7 times the decoding time for no gain held out pairs kept: a study
    decodes them only with --preorderer-nbest N, in a row named by N."""
    args = ["--data-bin", "d", "--xlpe-data-bin", "dx", "--source-lang", "xx", "--target-lang",
            "yy", "--reference", "r", "--models", "xlpe-inxl", "--preorderer", "p.pt",
            "--work", "w"]
    assert Study(build_parser().parse_args(args)).evaluations("xlpe-inxl") == [
        ("xlpe-inxl", None)]
    assert Study(build_parser().parse_args([*args, "--preorderer-nbest", "4"])).evaluations(
        "xlpe-inxl") == [("xlpe-inxl", None),
                         ("xlpe-inxl [test: preorderer-4best]", "preorderer-4best")]
