"""examples/train-*.sh: the fairseq-train command each model, size and GPU count gets
(``--dry-run``), parsed with fairseq's own parser so that a typo in a flag fails here."""
import shlex
import subprocess
from pathlib import Path

import pytest
from fairseq import options

# registers the plugin for the parser, even where another test imported xlpe_fairseq first
from xlpe_fairseq import criterions, models, tasks  # noqa: F401

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def dry_run(script, *args):
    result = subprocess.run(["bash", str(EXAMPLES / script), *args, "--dry-run"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return shlex.split(result.stdout)


def parsed(command):
    """fairseq-train's arguments for a printed command, architecture defaults applied."""
    assert command[0] == "fairseq-train"
    parser = options.get_training_parser()
    return options.parse_args_and_arch(parser, command[1:])


@pytest.mark.parametrize("model, size, arch, encoder_layers, data", [
    ("transformer", "base", "transformer_wmt_en_de", 6, "text"),
    ("dpe", "base", "transformer_dpe_wmt_en_de", 6, "dpe"),
    ("xlpe", "big", "transformer_xlpe_wmt_en_de_big", 6, "xlpe"),
    ("re-both", "big", "transformer_reorder_emb_wmt_en_de_big", 6, "text"),
    ("transformer-8e", "base", "transformer_8e_wmt_en_de", 8, "text"),
    ("transformer-10e", "big", "transformer_wmt_en_de_big", 10, "text"),
    ("encoder-free", "big", "transformer_wmt_en_de_big", 0, "text"),
    ("encoder-free-inxl", "big", "transformer_xlpe_wmt_en_de_big", 0, "xlpe"),
])
def test_wmt14_models(model, size, arch, encoder_layers, data):
    command = dry_run("train-wmt14-en-de.sh", "/data/wmt14", "--model", model, "--size", size)
    assert command[1] == f"/data/wmt14/data-bin/{data}", f"{model} reads the wrong data-bin"
    args = parsed(command)
    assert (args.arch, args.encoder_layers) == (arch, encoder_layers)
    assert args.share_all_embeddings and args.update_freq == [8], (
        "one GPU accumulates the paper's 8-GPU batch")
    if model == "encoder-free-inxl":
        assert args.xlpe_mode == "inxl"


def test_small_baselines_keep_their_own_depth():
    command = dry_run("train-iwslt14.sh", "de-en", "/data/iwslt", "--model", "transformer-8e")
    args = parsed(command)
    assert (args.encoder_layers, args.decoder_layers, args.encoder_embed_dim) == (4, 2, 256), (
        "8E at the small size is the 2-layer encoder plus DPE's 2 layers")


def test_gpus_precision_and_update_freq():
    args = parsed(dry_run("train-wmt14-en-de.sh", "/data/wmt14", "--model", "dpe", "--gpus",
                          "4", "--fp16"))
    assert (args.distributed_world_size, args.update_freq, args.fp16) == (4, [2], True)


def test_unknown_model_lists_the_known_ones():
    result = subprocess.run(["bash", str(EXAMPLES / "train-wmt14-en-de.sh"), "/data/wmt14",
                             "--model", "bogus", "--dry-run"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "unknown model 'bogus'" in result.stderr and "encoder-free-inxl" in result.stderr
