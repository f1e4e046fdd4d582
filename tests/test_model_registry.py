"""The model registry gives every command the flags it gave each model before the registry
(tests/model_flags_before_registry.json, captured from the code of xlpe-train, xlpe-study and
examples/demo.sh then), and names the models a checkpoint was saved as."""
import contextlib
import io
import json
import shlex
from pathlib import Path

import pytest

from xlpe_fairseq import model_registry
from xlpe_fairseq.model_registry import (
    ALIASES,
    DEMO_DIMS,
    MODELS,
    STUDY_MODELS,
    TRAIN_MODELS,
    TRAIN_SIZES,
    checkpoint_settings,
    default_schedule,
    flags,
    models_saved_as,
    variant,
)
from xlpe_fairseq.user_dir import PLUGIN_DIR
from xlpe_fairseq.workflow import train
from xlpe_fairseq.workflow.schedules import SCHEDULES

BEFORE = json.loads((Path(__file__).parent / "model_flags_before_registry.json").read_text())
PAPER_SIZES = ("small", "base", "big")


def test_xlpe_train_knows_the_models_it_knew_and_transformer_deep():
    assert [name for name in TRAIN_MODELS if name != "transformer-deep"] == \
        list(BEFORE["xlpe-train"]), "xlpe-train's models, in the order its usage lists them"
    assert set(STUDY_MODELS) <= set(TRAIN_MODELS), "every study model trains with xlpe-train"
    assert list(STUDY_MODELS) == list(BEFORE["xlpe-study"]["cpu-demo"])
    assert set(ALIASES.values()) <= set(STUDY_MODELS)


@pytest.mark.parametrize("model", list(BEFORE["xlpe-train"]))
def test_xlpe_train_flags_schedule_and_data_bin_are_as_before(model):
    before = BEFORE["xlpe-train"][model]
    for size in PAPER_SIZES:
        assert flags(model, size) == before["flags"][size], f"{model} at {size}"
        assert default_schedule(model, size) == before["default_schedule"][size], \
            f"{model}'s schedule at {size}"
    assert variant(model) == before["variant"]
    assert checkpoint_settings(model) == before["checkpoint_settings"], \
        "what xlpe-evaluate holds a checkpoint of the model to"


def dry_run(tmp_path, *argv):
    """xlpe-train's --dry-run command, run in this process, with the data and plugin folders
    as the fixture names them."""
    text = tmp_path / "corpus" / "data-bin" / "text"
    if not text.is_dir():
        text.mkdir(parents=True)
        for name, content in (("train.de-en.de.idx", ""), ("dict.de.txt", "a 1\n"),
                              ("dict.en.txt", "b 1\n")):
            (text / name).write_text(content)
    data = text.parent
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        train.main([argv[0], str(data), "CKPT", *argv[1:], "--dry-run"])
    return (stdout.getvalue().strip().replace(PLUGIN_DIR, "PLUGIN")
            .replace(str(data.resolve()), "DATA"))


@pytest.mark.parametrize("model", list(BEFORE["xlpe-train"]))
def test_xlpe_train_commands_are_as_before_at_every_size_and_schedule(model, tmp_path):
    before = BEFORE["xlpe-train"][model]
    for size in PAPER_SIZES:
        for schedule in (None, *[name for name in SCHEDULES if name != "demo"]):
            chosen = ["--schedule", schedule] if schedule else []
            template = BEFORE["xlpe-train --dry-run"][
                f"{size} {schedule or before['default_schedule'][size]}"]
            expected = []
            for word in template:
                expected += (before["flags"][size] if word == "{MODEL_FLAGS}"
                             else [word.replace("{VARIANT}", before["variant"])])
            assert without_log_interval(shlex.split(dry_run(tmp_path, model, "--size", size,
                                                            *chosen))) == \
                without_log_interval(expected), f"xlpe-train {model} --size {size} {' '.join(chosen)}"


def without_log_interval(command):
    """A command without the value of --log-interval, which changed after the registry came
    (every 10 updates on the CPU, where it was 100: the progress within the first minute)."""
    at = command.index("--log-interval")
    return command[:at + 1] + command[at + 2:]


@pytest.mark.parametrize("profile", list(BEFORE["xlpe-study"]))
def test_xlpe_study_flags_are_as_before(profile):
    from xlpe_fairseq.evaluation.study.profiles import PROFILES, model_flags, profile_settings

    for model, before in BEFORE["xlpe-study"][profile].items():
        assert list(model_flags(model, PROFILES[profile])) == \
            [before["flags"], before["reads_positions"]], f"{model} in the {profile} profile"
    assert profile_settings("lstm", PROFILES[profile]) == \
        BEFORE["xlpe-study profile_settings lstm"][profile]


@pytest.mark.parametrize("model", list(BEFORE["examples/demo.sh"]))
def test_the_demo_size_gives_each_model_the_demos_flags(model):
    """The demo trains through xlpe-train at the demo size: each model its flags of before,
    after the demo's dims; the LSTM its width and depth, which the demo gave it among its
    settings before."""
    before = BEFORE["examples/demo.sh"][model]
    if model == "lstm":
        assert flags(model, "demo") == [
            "--arch", "lstm_6l_wmt_en_de", "--encoder-embed-dim", "128",
            "--encoder-hidden-size", "128", "--encoder-layers", "2", "--decoder-embed-dim",
            "128", "--decoder-hidden-size", "128", "--decoder-layers", "2",
            "--decoder-out-embed-dim", "128"]
        return
    assert flags(model, "demo") == [*DEMO_DIMS, *before]
    assert default_schedule(model, "demo") == "demo"


@pytest.mark.parametrize("size", TRAIN_SIZES)
def test_every_model_at_every_size_is_a_command_line_fairseq_accepts(size):
    from fairseq import options

    from xlpe_fairseq import criterions, models, tasks  # noqa: F401  (registers the plugin)

    for model in TRAIN_MODELS:
        words = flags(model, size)
        args = options.parse_args_and_arch(options.get_training_parser(), [
            "data-bin", "--task", "translation_reorder", "--criterion",
            "label_smoothed_cross_entropy_with_order", *words])
        assert args.arch == words[words.index("--arch") + 1], f"{model} at {size}"
        if size in ("small", "demo"):
            width = 256 if size == "small" else 128
            assert args.encoder_embed_dim == width, f"{model} at {size}: the size's width"


def test_transformer_deep_has_two_encoder_layers_more_than_the_size():
    from fairseq import options

    from xlpe_fairseq import models  # noqa: F401

    for size, layers in (("small", 4), ("base", 8), ("big", 8), ("demo", 4)):
        args = options.parse_args_and_arch(options.get_training_parser(), [
            "data-bin", "--task", "translation", *flags("transformer-deep", size)])
        assert args.encoder_layers == layers, size
    assert checkpoint_settings("transformer-deep") == checkpoint_settings("transformer")


def test_unknown_models_and_sizes_a_model_lacks_give_no_flags():
    assert flags("no-such-model", "small") is None
    assert flags("transformer-8e", "cpu-demo") is None, "not a study model"
    assert variant("no-such-model") == "text"
    assert checkpoint_settings("no-such-model") == {}


@pytest.mark.parametrize("stored, saved_as", [
    ({"arch": "transformer_dpe_wmt_en_de"}, ["dpe"]),
    ({"arch": "transformer_xlpe", "xlpe_mode": "inxl", "encoder_layers": 2}, ["xlpe-inxl"]),
    ({"arch": "transformer_xlpe", "xlpe_mode": "inxl", "encoder_layers": 0},
     ["encoder-free-inxl"]),
    ({"arch": "transformer_xlpe", "xlpe_mode": "combination"}, ["xlpe-combination"]),
    ({"arch": "transformer", "encoder_layers": 0}, ["encoder-free"]),
    ({"arch": "transformer", "encoder_layers": 6},
     ["transformer", "transformer-8e", "transformer-10e", "transformer-deep"]),
    ({"arch": "transformer_reorder_emb", "reorder_emb": "decoder"}, ["re-decoder"]),
    ({"arch": "bart_base"}, []),
])
def test_a_checkpoint_is_named_by_the_models_it_was_saved_as(stored, saved_as):
    assert models_saved_as(stored.get) == saved_as


def test_every_model_is_described_in_one_line():
    for model in MODELS.values():
        assert model.description and "\n" not in model.description, model.name
    assert model_registry.MODELS["xlpe"].alias_of == "xlpe-combination"


def test_xlpe_trains_help_names_every_model_and_size():
    text = train.help_parser("xlpe-train", None).format_help()
    missing = [name for name in (*TRAIN_MODELS, *TRAIN_SIZES) if name not in text]
    assert not missing, f"xlpe-train --help does not name {missing}"
