"""The tables of xlpe_fairseq/workflow/schedules.py against what xlpe-train gives fairseq-train:
a model's architecture and options, a schedule's distinguishing options and decoding, as the
train-*.sh scripts' --dry-run prints them at every size."""
import shlex
import subprocess
from pathlib import Path

import pytest

from xlpe_fairseq.model_registry import TRAIN_MODELS as MODELS
from xlpe_fairseq.workflow.schedules import (
    DECODING,
    SCHEDULE_SETTINGS,
    SCHEDULES,
    trained_settings,
)

ROOT = Path(__file__).resolve().parents[2]
SIZES = {"small": ("train-iwslt14.sh", ["en-de", "/data/iwslt"]),
         "base": ("train-wmt14-en-de.sh", ["/data/wmt14", "--size", "base"]),
         "big": ("train-wmt14-en-de.sh", ["/data/wmt14", "--size", "big"])}


def dry_run(size, model, *options):
    script, operands = SIZES[size]
    result = subprocess.run(["bash", str(ROOT / "examples" / script), *operands, "--model", model,
                             *options,
                             "--dry-run"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return shlex.split(result.stdout), result.stderr


def flag_value(command, name, default=None):
    flag = "--" + name.replace("_", "-")
    given = [command[i + 1] for i, word in enumerate(command[:-1]) if word == flag]
    return given[-1] if given else default


def test_every_model_is_known_in_the_order_of_the_usage():
    assert MODELS == (
        "transformer", "dpe", "xlpe", "xlpe-combination", "xlpe-inxl", "xlpe-headxl",
        "re-encoder", "re-decoder", "re-both", "transformer-8e", "transformer-10e",
        "transformer-deep", "encoder-free", "encoder-free-inxl", "encoder-free-nopos", "encoder-free-relpe", "lstm",
        "relpe", "rope", "alibi", "t5-bias"), "the models train.sh --help and its errors list"


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("model", MODELS)
def test_a_models_settings_are_those_train_sh_gives_it(model, size):
    command, _ = dry_run(size, model, "--schedule", "dpe")
    for name, accepted in trained_settings(model, "dpe").items():
        given = flag_value(command, name)
        # an option train.sh leaves to the architecture's default is not compared
        if given is not None:
            assert given in accepted, f"{model} at {size}: {name} {given}, expected {accepted}"
    assert flag_value(command, "arch") in trained_settings(model, "dpe")["arch"]


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_a_schedules_settings_and_decoding_are_those_train_sh_gives_it(schedule):
    command, printout = dry_run("base", "transformer", "--schedule", schedule)
    expected = trained_settings("transformer", schedule)
    defaults = {"best_checkpoint_metric": "loss", "weight_decay": "0.0"}
    for name in ("keep_interval_updates", "best_checkpoint_metric", "weight_decay"):
        assert flag_value(command, name, defaults.get(name)) in expected[name], (schedule, name)
    average, beam, lenpen = DECODING[schedule]
    assert f"beam {beam}, lenpen {lenpen}" in printout, printout
    metric = SCHEDULE_SETTINGS[schedule]["best_checkpoint_metric"][0].replace("bleu", "BLEU")
    assert (f"the last {average} checkpoints averaged" if average
            else f"the checkpoint with the best dev {metric}") in printout, printout


def test_the_recorded_command_wins_over_the_tables():
    command = ["fairseq-train", "--arch", "transformer_wmt_en_de", "--keep-interval-updates",
               "5", "--keep-interval-updates", "7"]
    expected = trained_settings("transformer", "dpe", command)
    assert expected["arch"] == ["transformer_wmt_en_de"]
    assert expected["keep_interval_updates"] == ["7"], "the last value given, as fairseq reads it"
    assert expected["weight_decay"] == ["0.0"], "not given: the schedule's"
