"""The shell entry points a user starts with: --help with the defaults, every option value
checked before any work (a usage error, exit 2, one line, nothing written), a short training
scaled to its budget, and evaluate.sh on a folder with fewer checkpoints than the schedule
averages or another model than the one trained there. No training runs: fairseq's commands
are stubs where a script would run them, and the checkpoints hold a training's settings and
no weights."""
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from support.workflow_stubs import fairseq_stub, prepared, stubs, trained_checkpoint

ROOT = Path(__file__).resolve().parents[2]
PREPARE = ROOT / "data_prep" / "prepare-corpus.sh"
TRAIN = ROOT / "examples" / "train.sh"
EVALUATE = ROOT / "examples" / "evaluate.sh"


def bash(script, *args, env=None, cwd=None):
    return subprocess.run(["bash", str(script), *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd)


@pytest.mark.parametrize("script, args, defaults", [
    (PREPARE, [], ["--merges N", "5000 under 20k", "175 under 1M", "PREORDER_EPOCHS=9", "50,000 training pairs",
                   "XLPE_TRAIN_POSITIONS=oracle", "all cores"]),
    (TRAIN, [], ["small (default)", "--max-update 15000", "--warmup 4000", "--lr 5e-4",
                 "--max-tokens 4096", "every 1000 updates", "--gpus 1"]),
    (TRAIN, ["transformer", "OUT/data-bin", "CKPT", "--max-update", "300"], ["warm-up 80"]),
    (EVALUATE, ["OUT", "CKPT"], ["the last 5 checkpoints averaged, beam 5", "--subset (default test)",
                                 "hypotheses-SUBSET.TGT"]),
])
def test_help_exits_0_with_the_defaults(script, args, defaults):
    for flag in ("--help", "-h"):
        result = bash(script, *args, flag)
        assert result.returncode == 0 and not result.stderr, result.stderr
        for default in defaults:
            assert default in result.stdout, (script.name, default)


def one_usage_error(result, script, message):
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"{script.name}: error: {message}\n", result.stderr


def raw_corpus(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    for lang in ("en", "de"):
        (raw / f"train.{lang}").write_text("a b\n" * 30)
    return raw


CORES = len(os.sched_getaffinity(0))


@pytest.mark.parametrize("option, value, message", [
    ("--max-len", "abc", "--max-len must be a whole number of at least 1, not 'abc'"),
    ("--max-len", "0", "--max-len must be a whole number of at least 1, not '0'"),
    ("--merges", "1e3", "--merges must be a whole number of at least 1, not '1e3'"),
    ("--merges", "0", "--merges must be a whole number of at least 1, not '0'"),
    ("--merges", "abc", "--merges must be a whole number of at least 1, not 'abc'"),
    ("--workers", "-1", f"--workers must be a whole number from 1 to {CORES}, not '-1'"),
    ("--workers", "0", f"--workers must be a whole number from 1 to {CORES}, not '0'"),
    ("--workers", str(CORES + 1),
     f"--workers must be a whole number from 1 to {CORES}, not '{CORES + 1}'"),
    ("--src", "../x", "--src must be a language code such as en or pt-BR, not '../x'"),
    ("--tgt", "d e", "--tgt must be a language code such as en or pt-BR, not 'd e'"),
    ("--tgt", "en", "--src and --tgt are both 'en'"),
    ("--bogus", None, "unknown option --bogus (--help lists them)"),
    # an empty value is no value: it fell back on the default
    ("--merges", "", "--merges must be a whole number of at least 1, not ''"),
    ("--src", "", "--src must be a language code such as en or pt-BR, not ''"),
])
def test_prepare_corpus_refuses_a_bad_value_before_any_work(tmp_path, option, value, message):
    raw = raw_corpus(tmp_path)
    given = [option] if value is None else [option, value]
    result = bash(PREPARE, "--src", "en", "--tgt", "de", *given, raw, tmp_path / "out")
    one_usage_error(result, PREPARE, message)
    assert not (tmp_path / "out").exists(), "nothing is written"


@pytest.mark.parametrize("setting, message", [
    ("PREORDER_LOSS=hinge", "PREORDER_LOSS must be one of: pairwise structured both, not 'hinge'"),
    (f"PREORDER_THREADS={CORES + 1}",
     f"PREORDER_THREADS must be a whole number from 1 to {CORES}, not '{CORES + 1}'"),
    ("PREORDER_DEVICE=nowhere", None),
])
def test_prepare_corpus_refuses_a_bad_setting_before_any_work(tmp_path, setting, message):
    name, value = setting.split("=")
    result = bash(PREPARE, "--src", "en", "--tgt", "de", raw_corpus(tmp_path), tmp_path / "out",
                  env={name: value})
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("prepare-corpus.sh: error: " + (
        message or f"{name}: --device {value}: not a torch device"))
    assert not (tmp_path / "out").exists(), "nothing is written"


def test_prepare_corpus_takes_operands_after_a_double_dash(tmp_path):
    result = bash(PREPARE, "--src", "en", "--tgt", "de", "--", "-raw", tmp_path / "out",
                  cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr == "prepare-corpus.sh: error: -raw: no such folder\n"
    assert not (tmp_path / "out").exists()


def dry_run_command(*args):
    result = bash(TRAIN, *args, "--dry-run")
    assert result.returncode == 0, result.stderr
    command = shlex.split(result.stdout)
    return {flag: command[i + 1] for i, flag in enumerate(command[:-1]) if flag.startswith("--")}, \
        result.stderr


def test_a_short_budget_scales_warmup_and_checkpoints_and_says_so(tmp_path):
    flags, printout = dry_run_command("transformer", prepared(tmp_path / "out") / "data-bin",
                                      tmp_path / "ck", "--max-update", "300")
    assert (flags["--warmup-updates"], flags["--save-interval-updates"],
            flags["--validate-interval-updates"]) == ("80", "20", "20")
    assert "--max-update 300 is below the schedule's 15000" in printout
    assert "a checkpoint every 20 updates; xlpe-evaluate: the last 5 checkpoints averaged" in printout
    # a warm-up given is kept; a budget too short for 5 checkpoints says what evaluate.sh does
    flags, printout = dry_run_command("transformer", tmp_path / "out" / "data-bin", tmp_path / "ck",
                                      "--max-update", "3", "--warmup", "2")
    assert flags["--warmup-updates"] == "2" and "shrunk" in printout
    assert "xlpe-evaluate: the 3 checkpoints saved averaged, not 5" in printout


def test_every_split_is_batched_whole_even_a_tiny_one(tmp_path):
    """fairseq drops a split's last batch unless its size is a multiple of
    --required-batch-size-multiple: all of a valid split under 8 sentences ("The dataset is
    empty")."""
    flags, _ = dry_run_command("dpe", prepared(tmp_path / "out") / "data-bin", tmp_path / "ck")
    assert flags["--required-batch-size-multiple"] == "1"


@pytest.mark.parametrize("option, value", [
    ("--max-update", "abc"), ("--lr", "0"), ("--warmup", "-5"), ("--max-tokens", "nan"),
    ("--max-update", ""), ("--lr", ""), ("--schedule", "")])
def test_train_refuses_a_bad_value(tmp_path, option, value):
    result = bash(TRAIN, "transformer", prepared(tmp_path / "out") / "data-bin", tmp_path / "ck", option,
                  value, "--dry-run")
    assert result.returncode == 2 and f"{option} must be" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and not result.stdout


def test_train_reads_the_values_as_decimal_numbers(tmp_path):
    """bash arithmetic reads 08 as a bad octal number"""
    flags, _ = dry_run_command("transformer", prepared(tmp_path / "out") / "data-bin", tmp_path / "ck",
                               "--max-update", "0300", "--warmup", "08", "--gpus", "01")
    assert (flags["--max-update"], flags["--warmup-updates"],
            flags["--distributed-world-size"]) == ("300", "8", "1")


def test_train_refuses_an_empty_save_dir(tmp_path):
    result = bash(TRAIN, "transformer", prepared(tmp_path / "out") / "data-bin", tmp_path / "ck",
                  "--save-dir", "", "--dry-run")
    one_usage_error(result, TRAIN, "--save-dir must name a folder, not ''")


def test_train_refuses_more_gpus_than_the_machine_has_before_any_work(tmp_path):
    import torch

    gpus = torch.cuda.device_count()
    result = bash(TRAIN, "transformer", prepared(tmp_path / "out") / "data-bin", tmp_path / "ck",
                  "--gpus", max(gpus, 1) + 1, env=stubs(tmp_path))
    one_usage_error(result, TRAIN, f"--gpus must be a whole number from 1 to {gpus}, not '{gpus + 1}'"
                    if gpus else "--gpus must be 1 on a machine without GPUs (training on the "
                    "CPU), not '2'")
    assert not (tmp_path / "ck").exists() and not (tmp_path / "calls").exists()


def test_train_given_one_variant_of_the_data_bin_names_the_folder_to_pass(tmp_path):
    data_bin = prepared(tmp_path / "out") / "data-bin"
    result = bash(TRAIN, "xlpe-inxl", data_bin / "text", tmp_path / "ck", "--dry-run")
    one_usage_error(result, TRAIN, f"{data_bin / 'text'} is one variant of the data-bin: pass "
                    f"{data_bin}, the folder above, from which xlpe-inxl reads xlpe")


def trained_folder(tmp_path, model, checkpoints):
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / "schedule.env").write_text(f"SCHEDULE=dpe-iwslt\nTRAINED_MODEL={model}\n")
    for name in [*checkpoints, "checkpoint_best.pt"]:
        trained_checkpoint(folder / name, model)
    return folder


@pytest.mark.parametrize("checkpoints, average, line", [
    (["checkpoint_3_40.pt", "checkpoint_2_20.pt"], "2",
     "holds 2 numbered checkpoints, not the 5 the schedule averages: averaging those 2"),
    ([], None, "holds 0 numbered checkpoints, not the 5 the schedule averages: "
     "checkpoint_best.pt instead"),
])
def test_evaluate_averages_the_checkpoints_a_short_training_saved(tmp_path, checkpoints, average,
                                                                   line):
    out, env = prepared(tmp_path / "out"), stubs(tmp_path)
    folder = trained_folder(tmp_path, "transformer", checkpoints)
    result = bash(EVALUATE, out, folder, "--cpu", env=env)
    assert result.returncode == 0, result.stderr
    assert line in result.stderr.splitlines()[0]
    calls = (tmp_path / "calls").read_text()
    averaged = f"xlpe-average-checkpoints: {folder}/checkpoint_avg{average}.pt = mean of "
    assert (averaged in result.stderr) == bool(average), result.stderr
    assert f"--path {folder}/checkpoint_{f'avg{average}' if average else 'best'}.pt" in calls
    assert (folder / "hypotheses-test.en").read_text() == "the\n"


def test_evaluate_with_an_average_too_large_names_the_ones_to_pass(tmp_path):
    folder = trained_folder(tmp_path, "transformer", ["checkpoint_1_10.pt"])
    result = bash(EVALUATE, prepared(tmp_path / "out"), folder, "--average", "5",
                  env=stubs(tmp_path))
    assert result.returncode == 1 and "--average 0" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("option, value, message", [
    ("--average", "-2", "--average must be a whole number of at least 0, not '-2'"),
    ("--average", "abc", "--average must be a whole number of at least 0, not 'abc'"),
    ("--beam", "0", "--beam must be a whole number of at least 1, not '0'"),
    ("--lenpen", "abc", "--lenpen must be a number, not 'abc'"),
    ("--lenpen", "inf", "--lenpen must be a number, not 'inf'"),
    ("--subset", "bogus", "--subset must be one of: test valid, not 'bogus'"),
    ("--schedule", "bogus", "--schedule must be one of: dpe-iwslt dpe re xlpe demo, not 'bogus'"),
    ("--beam", "", "--beam must be a whole number of at least 1, not ''"),
    ("--model", "", None),
    ("--tokenize", "bogus", "--tokenize must be one of: none zh 13a intl char ja-mecab ko-mecab "
     "spm flores101 flores200 spBLEU-1K, not 'bogus'"),
])
def test_evaluate_refuses_a_bad_value_in_one_line_before_any_work(tmp_path, option, value,
                                                                  message):
    folder = trained_folder(tmp_path, "dpe", ["checkpoint_1_10.pt", "checkpoint_2_20.pt"])
    before = sorted(os.listdir(folder))
    result = bash(EVALUATE, prepared(tmp_path / "out"), folder, option, value,
                  env=stubs(tmp_path))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("evaluate.sh: error: " + (
        message or f"{option} must be one of: ")), result.stderr
    assert not (tmp_path / "calls").exists() and sorted(os.listdir(folder)) == before


def test_evaluate_refuses_an_unknown_model_in_one_line(tmp_path):
    result = bash(EVALUATE, prepared(tmp_path / "out"), tmp_path / "ck", "--model", "bogus")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(
        "evaluate.sh: error: --model must be one of: transformer dpe xlpe ")


def test_evaluate_reads_the_values_as_decimal_numbers(tmp_path):
    """bash arithmetic reads 08 as a bad octal number."""
    folder = trained_folder(tmp_path, "dpe", ["checkpoint_1_10.pt", "checkpoint_2_20.pt"])
    result = bash(EVALUATE, prepared(tmp_path / "out"), folder, "--average", "02", "--beam",
                  "08", "--lenpen", "-0.5", env=stubs(tmp_path))
    assert result.returncode == 0, result.stderr
    calls = (tmp_path / "calls").read_text()
    assert f"--path {folder}/checkpoint_avg2.pt " in calls, "--average 2"
    assert "--beam 8 --lenpen -0.5 " in calls


@pytest.mark.parametrize("missing", ["data-bin/dpe/valid.fr-en.fr.idx", "reference/valid.en"])
def test_evaluate_without_the_split_says_so_before_averaging(tmp_path, missing):
    out = prepared(tmp_path / "out")
    (out / missing).unlink()
    folder = trained_folder(tmp_path, "dpe", ["checkpoint_1_10.pt", "checkpoint_2_20.pt"])
    result = bash(EVALUATE, out, folder, "--subset", "valid", env=stubs(tmp_path))
    assert result.returncode == 1 and result.stderr == (
        f"evaluate.sh: error: {out / missing}: no such file; has the data_prep recipe made the valid split of "
        f"{out}?\n"), result.stderr
    assert not (tmp_path / "calls").exists()


def test_evaluate_leaves_no_partial_output_when_decoding_fails(tmp_path):
    env = stubs(tmp_path)
    fairseq_stub(env, "generate", "print('S-0\\tle')\n"
                 "sys.exit('fairseq-generate: error: a one-line reason')\n")
    folder = trained_folder(tmp_path, "dpe", [])
    result = bash(EVALUATE, prepared(tmp_path / "out"), folder, env=env)
    assert result.returncode == 1, result.stderr
    # fairseq's last lines, then the command's own line naming the whole report
    assert "fairseq-generate: error: a one-line reason" in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"evaluate.sh: error: fairseq-generate failed; its whole report: "
        f"{folder / 'generate-test.log'}"), result.stderr
    assert sorted(os.listdir(folder)) == [".xlpe-lock", "checkpoint_best.pt", "generate-test.log",
                                          "schedule.env"], "no partial output"


def test_evaluate_with_another_model_than_trained_names_the_model_to_pass(tmp_path):
    folder = trained_folder(tmp_path, "xlpe-inxl", [])
    result = bash(EVALUATE, prepared(tmp_path / "out"), folder, "--model", "transformer",
                  env=stubs(tmp_path))
    one_usage_error(result, EVALUATE, f"{folder} holds a xlpe-inxl model (xlpe-train xlpe-inxl), "
                    "not transformer: pass --model xlpe-inxl")


def test_train_refuses_a_folder_of_another_model_without_relabeling_it(tmp_path):
    """A failed run changes no record: schedule.env still names the model its checkpoints
    hold, and fairseq-train is not started."""
    out, env = prepared(tmp_path / "out"), stubs(tmp_path)
    folder = trained_folder(tmp_path, "transformer", ["checkpoint_1_10.pt"])
    before = (folder / "schedule.env").read_text()
    result = bash(TRAIN, "dpe", out / "data-bin", folder, env=env)
    assert result.returncode == 1 and result.stderr.splitlines()[-1] == (
        f"train.sh: error: {folder} holds the checkpoints of transformer on the schedule dpe-iwslt "
        "(its schedule.env), not of dpe on dpe-iwslt: train into another folder, or pass "
        "--restart to start afresh (the old run is kept in a subfolder)"), result.stderr
    assert (folder / "schedule.env").read_text() == before
    assert not (tmp_path / "calls").exists(), "fairseq-train is not started"


def test_train_restart_keeps_the_earlier_run_in_a_subfolder(tmp_path):
    out, env = prepared(tmp_path / "out"), stubs(tmp_path)
    folder = trained_folder(tmp_path, "transformer", ["checkpoint_1_10.pt"])
    result = bash(TRAIN, "dpe", out / "data-bin", folder, "--restart", env=env)
    assert result.returncode == 0, result.stderr
    aside = [name for name in os.listdir(folder) if name.startswith("replaced-")]
    assert len(aside) == 1, os.listdir(folder)
    assert sorted(os.listdir(folder / aside[0])) == [
        "checkpoint_1_10.pt", "checkpoint_best.pt", "schedule.env"]
    assert (folder / "schedule.env").read_text() == "SCHEDULE=dpe-iwslt\nTRAINED_MODEL=dpe\n"
    assert '"kind": "training"' in (folder / "provenance.json").read_text()


def test_train_refuses_an_out_changed_since_its_preparation(tmp_path):
    out, env = prepared(tmp_path / "out"), stubs(tmp_path)
    (out / "data-bin" / "text" / "dict.fr.txt").write_text("la 1\n")
    result = bash(TRAIN, "transformer", out / "data-bin", tmp_path / "ck", env=env)
    assert result.returncode == 1 and result.stderr.splitlines()[-1].startswith(
        f"train.sh: error: {out / 'data-bin' / 'text' / 'dict.fr.txt'}: changed since {out} "
        "was prepared"), result.stderr
    assert not (tmp_path / "calls").exists() and not (tmp_path / "ck").exists()


def test_a_failed_evaluation_leaves_no_earlier_scores_and_outputs_are_readable(tmp_path):
    env = stubs(tmp_path)
    out = prepared(tmp_path / "out")
    folder = trained_folder(tmp_path, "dpe", [])
    result = bash(EVALUATE, out, folder, "--average", "0", env=env)
    assert result.returncode == 0, result.stderr
    assert (folder / "generate-test.out").stat().st_mode & 0o777 == 0o666 & ~current_umask()
    (folder / "bleu-test.json").write_text("{}")
    fairseq_stub(env, "generate", "sys.exit('fairseq-generate: error: a reason')\n")
    result = bash(EVALUATE, out, folder, "--average", "0", env=env)
    assert result.returncode == 1
    assert not (folder / "bleu-test.json").exists() and not (folder / "generate-test.out").exists()


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_raw_folder_named_like_an_option_and_a_failed_preparation_leave_no_record(tmp_path):
    """`-- -raw OUT`: the files of -raw are read (a `cd -raw` took it for an option and read
    /test.en); an empty test line is refused before OUT is made, so that no OUT, and no
    recipe.env or provenance.json naming it prepared, is left."""
    raw = tmp_path / "-raw"
    raw.mkdir()
    for lang, words in (("en", "a house"), ("de", "ein Haus")):
        (raw / f"train.{lang}").write_text("".join(f"{words} {i}\n" for i in range(40)))
        (raw / f"test.{lang}").write_text(f"{words}\n\n" if lang == "en" else f"{words}\nja\n")
    result = bash(PREPARE, "--src", "en", "--tgt", "de", "--", "-raw", "out", cwd=tmp_path)
    assert result.returncode == 1 and "-raw/test.en line 2: empty line" in result.stderr, \
        result.stderr
    assert not (tmp_path / "out").exists(), "a refused preparation leaves no OUT"
