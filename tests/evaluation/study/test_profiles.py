"""The study's profiles and model flags: the demo's settings, and command lines fairseq accepts."""
import subprocess
from pathlib import Path

import pytest

from xlpe_fairseq.evaluation.study.profiles import (
    MODEL_NAMES,
    PROFILES,
    model_flags,
    profile_settings,
)


REPO = Path(__file__).resolve().parents[3]


def setting(profile, option):
    settings = profile["settings"]
    return int(settings[settings.index(option) + 1])


def test_cpu_demo_profile_is_the_demo_settings():
    shell = subprocess.run(
        ["bash", "-c", 'source examples/demo_settings.sh; demo_settings 500; '
         'printf "%s\\n" "${DEMO_SETTINGS[@]}"'],
        cwd=REPO, capture_output=True, text=True, check=True).stdout.splitlines()
    # the study sets the budget and the seed per run
    for option in ("--max-update", "--seed"):
        k = shell.index(option)
        del shell[k:k + 2]
    assert PROFILES["cpu-demo"]["settings"] == shell, \
        "xlpe-study's cpu-demo profile drifted from examples/demo_settings.sh"


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
