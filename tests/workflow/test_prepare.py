"""xlpe-prepare (data_prep/prepare-corpus.sh's preparation in Python): what the shell version
could not promise. The preorderer is trained only for a model that reads it (--models), and
the run says what it costs and how to skip it; an OUT without it refuses XL PE in one line.
Folder names reach no shell; a line break in one is refused before any work; a read-only raw
folder is only read; Ctrl-C ends the step running and leaves no temporary file, and one a
killed run left is removed by the next."""
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from support.interrupted_runs import SLEEPING_STUB, alive, default_sigint, temporaries
from support.parallel_text import RECIPE_ENV, write_raw
from warm_python import real_processes
from xlpe_fairseq.data.positions_note import NO_PREORDERER, positions_note
from xlpe_fairseq.workflow import evaluate

HOSTILE = "o'u]t $x/sp ace/$(touch PWNED)"


def prepare_command(*args):
    return [sys.executable, "-m", "xlpe_fairseq.workflow.prepare", "--src", "en", "--tgt", "de",
            *map(str, args)]


# xlpe-prepare with every program it starts listed in CHILDREN (the audit event of
# subprocess.Popen, raised in this process and in any it forks)
WATCHED = """
import json, os, sys
def hook(event, args):
    if event == "subprocess.Popen":
        with open(os.environ["CHILDREN"], "a") as listed:
            listed.write(json.dumps([str(word) for word in args[1]]) + "\\n")
sys.addaudithook(hook)
from xlpe_fairseq.workflow.prepare import main
sys.exit(main(sys.argv[1:]))
"""


def environment(path_first=None):
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    if path_first:
        path = f"{path_first}{os.pathsep}{path}"
    return {**os.environ, **RECIPE_ENV, "PATH": path}


def prepare(*args, cwd=None):
    return subprocess.run(prepare_command(*args), capture_output=True, text=True,
                          env=environment(), cwd=cwd)


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """One complete run (one preorderer, one epoch) from a read-only raw folder without valid
    and test, into an OUT named with quotes, brackets, $ and a command substitution, which
    holds a temporary file of a killed run."""
    root = tmp_path_factory.mktemp("hostile")
    raw = write_raw(root / "raw", "en", "de")
    for split in ("valid", "test"):
        for lang in ("en", "de"):
            (raw / f"{split}.{lang}").unlink()
    raw.chmod(0o555)
    out = root / HOSTILE
    (out / "bpe").mkdir(parents=True)
    stale = out / "bpe" / ".train.en.999999999.abcdef"
    stale.write_text("left by a killed run\n")
    result = subprocess.run(
        [sys.executable, "-c", WATCHED, "--src", "en", "--tgt", "de", str(raw), str(out)],
        capture_output=True, text=True, cwd=root,
        env={**environment(), "CHILDREN": str(root / "children.jsonl"),
             "XLPE_STAGE_LOG": str(root / "stages.jsonl")})
    raw.chmod(0o755)
    return root, raw, out, stale, result


def test_a_hostile_out_name_is_written_and_runs_nothing(hostile_run):
    root, _, out, _, result = hostile_run
    assert result.returncode == 0, result.stderr[-3000:]
    assert not list(root.rglob("PWNED")), "a folder name was run as a command"
    for variant, splits in (("dpe", ("train", "valid")), ("xlpe", ("train", "valid", "test"))):
        for split in splits:
            assert (out / "data-bin" / variant / f"{split}.reorder.en-de.idx").exists(), \
                (variant, split)
    assert (out / "provenance.json").exists() and (out / "recipe.env").exists()
    assert result.stderr.splitlines()[-1].startswith("advice: train "), result.stderr[-500:]


def test_a_read_only_raw_folder_is_only_read(hostile_run):
    _, raw, out, _, result = hostile_run
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(p.name for p in raw.iterdir()) == ["train.de", "train.en"]
    assert (out / "raw" / "valid.en").exists(), "valid is held out into OUT/raw"


def test_the_preorderer_step_says_its_cost_and_how_to_skip_it(hostile_run):
    result = hostile_run[4]
    said = [line for line in result.stderr.splitlines() if "expected to take" in line]
    assert len(said) == 1, result.stderr[-3000:]
    assert "minutes" in said[0] and "--models" in said[0], said[0]


def test_no_temporary_file_is_left_and_a_stale_one_is_removed(hostile_run):
    out, stale = hostile_run[2], hostile_run[3]
    assert not stale.exists(), "a temporary file of a killed run was left"
    assert not temporaries(out), temporaries(out)


def test_every_step_runs_in_the_command_s_process_but_the_external_programs(hostile_run):
    """No xlpe-* command, no ``python -m xlpe_fairseq...``: the aligner (eflomal) and
    fairseq-preprocess are the only programs started; the provenance record is written by a
    function call."""
    root, _, out, _, result = hostile_run
    assert result.returncode == 0, result.stderr[-3000:]
    children = [json.loads(line) for line in (root / "children.jsonl").read_text().splitlines()]
    programs = []
    for command in children:
        words = [os.path.basename(word) for word in command]
        if "eflomal-align" in words:
            programs.append("eflomal-align")
        elif words[1:4] == ["-m", "xlpe_fairseq_cli.fairseq", "fairseq-preprocess"]:
            programs.append("fairseq-preprocess")
        else:
            programs.append(command)
    assert programs == ["eflomal-align", "fairseq-preprocess"], children
    assert (out / "provenance.json").exists()


def test_the_stage_log_has_a_line_for_every_step_that_ran(hostile_run):
    root, _, _, _, result = hostile_run
    ran = re.findall(r"^== (.*): [0-9.]+ s$", result.stderr, re.M)
    logged = [json.loads(line) for line in (root / "stages.jsonl").read_text().splitlines()]
    assert [step["step"] for step in logged] == [*ran, "record provenance"], logged
    assert all(step["status"] == 0 and step["cpu_s"] is not None and step["max_rss_mib"] > 0
               for step in logged), logged
    align = next(step for step in logged if step["step"].startswith("align"))
    assert align["tree_peak_mib"] > 0 and align["cpu_s"] > 0, align


def test_a_line_break_in_out_is_refused_before_any_work(tmp_path):
    raw = write_raw(tmp_path / "raw", "en", "de")
    result = prepare(raw, tmp_path / "out\nx")
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "line break" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw"], "nothing is written"


@pytest.fixture(scope="module")
def without_xl_pe(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    raw = write_raw(root / "raw", "en", "de")
    out = root / "out"
    return out, prepare("--models", "transformer,dpe,re-both", raw, out)


def test_models_without_xl_pe_train_no_preorderer(without_xl_pe):
    out, result = without_xl_pe
    assert result.returncode == 0, result.stderr[-3000:]
    assert "train preorderer" not in result.stderr and not (out / "preorderer.pt").exists()
    xlpe = out / "data-bin" / "xlpe"
    assert sorted(p.name for p in xlpe.glob("[!.]*.reorder.*")) == [
        "train.reorder.en-de.bin", "train.reorder.en-de.idx"], "train positions only"
    assert (out / "data-bin" / "dpe" / "valid.reorder.en-de.idx").exists()
    advice = result.stderr.splitlines()[-1]
    assert advice.startswith("advice: cannot judge XL PE without the preorderer"), advice


def test_xl_pe_from_an_out_without_preorderer_is_refused_in_one_line(without_xl_pe, tmp_path,
                                                                     capsys):
    out = without_xl_pe[0]
    checkpoints = tmp_path / "ckpt"
    checkpoints.mkdir()
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main([str(out), str(checkpoints), "--model", "xlpe-inxl", "--schedule", "xlpe"])
    stderr = capsys.readouterr().err
    assert exit_info.value.code == 1 and stderr.count("\n") == 1, stderr
    assert "without the preorderer" in stderr and "rerun" in stderr, stderr
    # the training's validation split: the task refuses it with the same sentence
    assert "without the preorderer" in positions_note(str(out / "data-bin" / "xlpe"), "valid")
    assert positions_note(str(out / "data-bin" / "xlpe"), "train") is None


def test_a_rerun_with_every_model_trains_the_preorderer_and_drops_the_note(without_xl_pe):
    out, _ = without_xl_pe
    result = prepare(out.parent / "raw", out)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "== tokenize train.en: up to date, skipped" in result.stderr, \
        "the steps before the preorderer are skipped"
    assert (out / "data-bin" / "xlpe" / "test.reorder.en-de.idx").exists()
    assert not (out / "data-bin" / "xlpe" / NO_PREORDERER).exists()
    assert result.stderr.splitlines()[-1].startswith("advice: train ")


def test_a_bad_models_value_is_a_usage_error(tmp_path):
    raw = write_raw(tmp_path / "raw", "en", "de")
    result = prepare("--models", "transformer,bogus", raw, tmp_path / "out")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("xlpe-prepare: error: --models must be all or models of "
                                    "xlpe-train")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["de,fr", "", "en,,de", "EN"])
def test_a_bad_tokenized_value_is_a_usage_error(tmp_path, value):
    raw = write_raw(tmp_path / "raw", "en", "de")
    result = prepare("--tokenized", value, raw, tmp_path / "out")
    assert result.returncode == 2 and result.stderr == (
        f"xlpe-prepare: error: --tokenized must be languages of the corpus (en de) separated by commas, not "
        f"'{value}'\n"), result.stderr
    assert not (tmp_path / "out").exists()


def test_ctrl_c_ends_the_running_step_and_leaves_no_temporary_file(tmp_path):
    """The aligner is the step's program; the step itself (its chunks, its joined text) is
    this command's."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "eflomal-align").write_text(SLEEPING_STUB.format(python=sys.executable))
    (stubs / "eflomal-align").chmod(0o755)
    raw = write_raw(tmp_path / "raw", "en", "de")
    mark, out = tmp_path / "aligning", tmp_path / "out"
    run = subprocess.Popen(prepare_command(raw, out), stderr=subprocess.PIPE, text=True,
                           env=real_processes({**environment(stubs), "STUB_MARK": str(mark)}),
                           preexec_fn=default_sigint)
    # the steps before the aligner run first, in this command's process
    deadline = time.monotonic() + 300
    while not (mark.exists() and mark.read_text()) and run.poll() is None:
        assert time.monotonic() < deadline, "the aligner stub never started"
        time.sleep(0.1)
    assert run.poll() is None, run.stderr.read()
    step = int(mark.read_text())
    run.send_signal(signal.SIGINT)
    stderr = run.communicate(timeout=60)[1]
    assert run.returncode == 128 + signal.SIGINT, stderr
    assert not alive(step), "the step outlived the command"
    assert not temporaries(out), temporaries(out)
