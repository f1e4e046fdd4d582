"""The study's profiles and model flags: the demo's size and schedule, and command lines fairseq
accepts."""
import pytest

from xlpe_fairseq.evaluation.study.profiles import (
    MODEL_NAMES,
    PROFILES,
    model_flags,
    profile_settings,
)
from xlpe_fairseq.model_registry import DEMO_DIMS
from xlpe_fairseq.workflow.schedules import schedule


def setting(profile, option):
    settings = profile["settings"]
    return int(settings[settings.index(option) + 1])


def test_cpu_demo_profile_is_the_demo_size_and_schedule():
    """The cpu-demo profile trains as the demo did before it trained through xlpe-train: the
    demo size's dimensions, the demo schedule's learning rate, warm-up, dropout, batch and
    budget (its settings stay as studies recorded them; xlpe-train adds --warmup-init-lr and
    --required-batch-size-multiple 1 of its own)."""
    profile = PROFILES["cpu-demo"]
    settings = profile["settings"]
    assert settings[:len(DEMO_DIMS)] == list(DEMO_DIMS), "the demo size's dimensions"
    values = schedule("demo", "demo", "en")
    for option, value in (("--lr", values.lr), ("--warmup-updates", str(values.warmup)),
                          ("--dropout", values.dropout),
                          ("--max-tokens", str(values.max_tokens))):
        assert settings[settings.index(option) + 1] == value, option
    assert profile["updates"] == values.max_update


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_every_model_name_is_a_command_line_fairseq_accepts(model):
    """A typo in a model's flags fails here, not after the first runs of a study."""
    from fairseq import options

    from xlpe_fairseq import criterions, models, tasks  # noqa: F401  (registers the plugin)

    profile = PROFILES["cpu-demo"]
    flags, _ = model_flags(model, profile)
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, ["data-bin", "--task", "translation_reorder",
                                                *profile_settings(model, profile), *flags])
    assert args.arch == flags[flags.index("--arch") + 1]
    assert args.encoder_embed_dim == setting(profile, "--encoder-embed-dim"), \
        "every model has the profile's width"


def test_lstm_takes_the_profiles_width_and_depth_not_the_papers():
    """The LSTM row is XL PE Table 4's LSTM at the study's size, not 6 layers of 1024."""
    from fairseq import options

    from xlpe_fairseq import models  # noqa: F401  (registers lstm_6l_wmt_en_de)

    for profile in PROFILES.values():
        settings = profile_settings("lstm", profile)
        assert not set(settings) & {"--encoder-ffn-embed-dim", "--decoder-attention-heads"}
        args = options.parse_args_and_arch(
            options.get_training_parser(),
            ["data-bin", *settings, *model_flags("lstm", profile)[0]])
        width, layers = (setting(profile, name) for name in ("--encoder-embed-dim",
                                                             "--encoder-layers"))
        assert (args.encoder_hidden_size, args.decoder_hidden_size,
                args.decoder_out_embed_dim) == (width, width, width), profile
        assert (args.encoder_layers, args.decoder_layers) == (layers, layers), profile
