"""The step runner (xlpe_fairseq/workflow/steps.py): a step is skipped exactly when its
outputs were made from the present content of its inputs and the same settings, by a record
an OUT prepared earlier still matches; a step that runs says its name and wall time, and a
failed one ends the run with its status; a killed run's temporary files go, a live one's
stay."""
import hashlib
import json
import os
import re
import subprocess
import sys

import pytest

from xlpe_fairseq.io import InputError
from xlpe_fairseq.workflow.steps import (
    StepFailed,
    Steps,
    made_from_file,
    remove_stale_temporaries_of,
    run_program,
)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def test_the_record_is_the_digest_of_the_inputs_content_and_settings(tmp_path):
    source, out = tmp_path / "train.en", tmp_path / "train.tok.en"
    source.write_text("a b\n")
    steps = Steps("xlpe-prepare")
    assert not steps.fresh([str(out)], [str(source)], ["max_len=175"]), "no output yet"
    out.write_text("a b\n")
    steps.made(str(out))
    # the record's form is that of the OUTs earlier versions prepared: a rerun must skip them
    content = sha256(b"a b\n")
    expected = sha256(f"{content} \nmax_len=175\n".encode())
    record = made_from_file(str(out))
    assert os.path.basename(record) == ".train.tok.en.made-from", record
    with open(record, encoding="utf-8") as stream:
        assert stream.read() == expected + "\n", "the record's form changed: earlier OUTs rerun"
    rerun = Steps("xlpe-prepare")
    os.utime(source, (1, 1))
    assert rerun.fresh([str(out)], [str(source)], ["max_len=175"]), \
        "a file's time changed, its content did not: the step must be skipped"
    assert not rerun.fresh([str(out)], [str(source)], ["max_len=250"]), "settings changed"
    assert not os.path.exists(record), "a stale record must go, so a failed rerun leaves none"


def test_a_step_says_its_name_and_wall_time_and_a_failure_ends_with_its_status(capfd):
    steps = Steps("xlpe-prepare")
    assert steps.timed("tokenize train.en", pow, 2, 3) == 8, "a step returns what it returns"
    said = capfd.readouterr().err.splitlines()
    assert said[0] == "== tokenize train.en", said
    assert re.fullmatch(r"== tokenize train\.en: [0-9]+\.[0-9] s", said[1]), said
    with pytest.raises(InputError, match="train.en line 3"):
        steps.timed("reorder train (dpe)", raise_input_error, "train.en line 3: bad")
    assert "== reorder train (dpe): " not in capfd.readouterr().err, \
        "a failed step has no wall time line"
    with pytest.raises(StepFailed) as failed:
        steps.timed("align", run_program, [sys.executable, "-c", "raise SystemExit(3)"])
    assert failed.value.code == 3, "the run must end with the failed program's status"
    assert "== align: " not in capfd.readouterr().err, "a failed step has no wall time line"


def raise_input_error(message):
    raise InputError(message)


def test_each_step_in_this_process_logs_its_usage_and_status(tmp_path):
    log = tmp_path / "stages.jsonl"
    steps = Steps("xlpe-prepare", str(log))
    steps.timed("learn BPE (5 joint merges)", bytearray, 50 * 2**20)
    steps.measured("record provenance", run_program, [sys.executable, "-c", "pass"])
    with pytest.raises(InputError):
        steps.timed("reorder train (dpe)", raise_input_error, "bad")
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(step["step"], step["status"]) for step in logged] == [
        ("learn BPE (5 joint merges)", 0), ("record provenance", 0),
        ("reorder train (dpe)", 1)], logged
    assert logged[0]["max_rss_mib"] >= 50, f"a step that held 50 MiB logged {logged[0]}"
    assert logged[1]["cpu_s"] > 0, f"a step's child's CPU time is the step's: {logged[1]}"


def test_temporaries_of_ended_processes_are_removed_those_of_running_ones_kept(tmp_path):
    ended = subprocess.Popen(["true"])
    ended.wait()
    (tmp_path / "bpe").mkdir()
    stale = tmp_path / "bpe" / f".train.en.{ended.pid}.tmp"
    live = tmp_path / "bpe" / f".train.en.{os.getpid()}.tmp"
    output = tmp_path / "bpe" / "train.en"
    for path in (stale, live, output):
        path.write_text("x\n")
    remove_stale_temporaries_of(str(tmp_path), ("", "bpe", "missing"))
    assert not stale.exists(), "a killed run's temporary file was left"
    assert live.exists(), "a running process's temporary file was removed"
    assert output.exists(), "an output was removed as a temporary file"
