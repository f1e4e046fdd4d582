"""examples/train-*.sh: the fairseq-train command each model, size and GPU count gets
(``--dry-run``), parsed with fairseq's own parser so that a typo in a flag fails here."""
import json
import shlex
import subprocess
from pathlib import Path

import pytest
import torch
from fairseq import options

from support.workflow_stubs import stubbed_fairseq
# registers the plugin for the parser, even where another test imported xlpe_fairseq first
from xlpe_fairseq import criterions, models, tasks  # noqa: F401
from xlpe_fairseq.io.provenance import record_corpus

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def dry_run(script, *args, schedule_printout=False):
    result = subprocess.run(["bash", str(EXAMPLES / script), *args, "--dry-run"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    command = shlex.split(result.stdout)
    return (command, result.stderr) if schedule_printout else command


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
    ("encoder-free-nopos", "big", "transformer_relpe_wmt_en_de_big", 0, "text"),
    ("encoder-free-relpe", "big", "transformer_relpe_wmt_en_de_big", 0, "text"),
    ("relpe", "base", "transformer_relpe_wmt_en_de", 6, "text"),
    ("rope", "big", "transformer_rope_wmt_en_de_big", 6, "text"),
    ("alibi", "base", "transformer_alibi_wmt_en_de", 6, "text"),
    ("t5-bias", "base", "transformer_t5_bias_wmt_en_de", 6, "text"),
    ("lstm", "big", "lstm_6l_wmt_en_de", 6, "text"),
])
def test_wmt14_models(model, size, arch, encoder_layers, data):
    command = dry_run("train-wmt14-en-de.sh", "/data/wmt14", "--model", model, "--size", size)
    assert command[1] == f"/data/wmt14/data-bin/{data}", f"{model} reads the wrong data-bin"
    args = parsed(command)
    assert (args.arch, args.encoder_layers) == (arch, encoder_layers)
    assert args.share_all_embeddings
    if model == "encoder-free-inxl":
        assert args.xlpe_mode == "inxl"
    if model.startswith("encoder-free-") and model != "encoder-free-inxl":
        relative = "decoder" if model == "encoder-free-relpe" else "none"
        assert (args.relative_positions_in, args.absolute_positions) == (relative, "decoder"), (
            "XL PE Table 4: no source positions; the decoder keeps its absolute PE")


def test_small_baselines_keep_their_own_depth():
    command = dry_run("train-iwslt14.sh", "de-en", "/data/iwslt", "--model", "transformer-8e")
    args = parsed(command)
    assert (args.encoder_layers, args.decoder_layers, args.encoder_embed_dim) == (4, 2, 256), (
        "8E at the small size is the 2-layer encoder plus DPE's 2 layers")


def test_small_lstm_is_the_small_transformers_width_and_depth():
    args = parsed(dry_run("train-iwslt14.sh", "de-en", "/data/iwslt", "--model", "lstm"))
    assert args.arch == "lstm_6l_wmt_en_de"
    assert (args.encoder_layers, args.decoder_layers, args.encoder_hidden_size,
            args.decoder_hidden_size, args.decoder_out_embed_dim) == (2, 2, 256, 256, 256), (
        "at the small size XL PE Table 4's LSTM takes the small models' 256 units and 2 layers")


def test_gpus_precision_and_update_freq():
    args = parsed(dry_run("train-wmt14-en-de.sh", "/data/wmt14", "--model", "dpe", "--gpus",
                          "4", "--fp16"))
    assert (args.distributed_world_size, args.update_freq, args.fp16) == (4, [2], True), (
        "4 GPUs accumulate 2 batches each to make DPE's 8-GPU batch")


# Each paper's schedule: (warmup, updates, GPUs x 4096 tokens, lr, dropout, validation and
# checkpoint interval, checkpoints kept, best checkpoint chosen by dev BLEU).
SCHEDULES = {
    # DPE §4.2 (IWSLT'14): 15k updates, validated every 1000
    "dpe-iwslt": (4000, 15000, 1, 5e-4, 0.3, 1000, 5, False),
    # DPE §4.2 (WMT'14): 8 V100, 300k updates, every 2k; warmup and lr of the authors' command
    "dpe": (8000, 300000, 8, 7e-4, 0.1, 2000, 5, False),
    # Reordering Embeddings §6.3: 4096 x 4 tokens, warmup 8000, 200k, every 1000, best dev BLEU
    "re": (8000, 200000, 4, 7e-4, 0.1, 1000, 5, True),
    # XL PE §4: Transformer big on 4 V100; the rest Vaswani et al.'s big: 20 checkpoints kept
    "xlpe": (4000, 300000, 4, 5e-4, 0.3, 1000, 20, False),
}


@pytest.mark.parametrize("script, args, schedule", [
    ("train-iwslt14.sh", ["de-en", "/data/iwslt"], "dpe-iwslt"),
    ("train-iwslt14.sh", ["de-en", "/data/iwslt", "--model", "re-both"], "dpe-iwslt"),
    ("train-libreoffice-en-de.sh", ["/data/lo", "--model", "xlpe"], "dpe-iwslt"),
    ("train-wmt14-en-de.sh", ["/data/wmt14", "--size", "base"], "dpe"),
    ("train-wmt14-en-de.sh", ["/data/wmt14", "--model", "transformer-10e"], "dpe"),
    ("train-wmt14-en-de.sh", ["/data/wmt14", "--model", "re-encoder"], "re"),
    ("train-wmt14-en-de.sh", ["/data/wmt14", "--model", "transformer", "--schedule", "re"], "re"),
    ("train-aspec-ja-en.sh", ["/data/aspec", "--model", "re-both", "--size", "base"], "re"),
    ("train-wmt14-en-de.sh", ["/data/wmt14", "--model", "xlpe", "--size", "big"], "xlpe"),
    ("train-wmt14-en-de.sh", ["/data/wmt14", "--model", "transformer", "--size", "big"], "xlpe"),
    ("train-wmt17-zh-en.sh", ["zh-en", "/data/wmt17", "--model", "encoder-free"], "xlpe"),
])
def test_each_paper_schedule(script, args, schedule):
    if "--model" not in args:
        args = [*args, "--model", "dpe"]
    command, printout = dry_run(script, *args, schedule_printout=True)
    a = parsed(command)
    warmup, updates, gpus, lr, dropout, interval, keep, best_bleu = SCHEDULES[schedule]
    got = (a.warmup_updates, a.max_update, a.update_freq, a.lr, a.dropout,
           a.save_interval_updates, a.validate_interval_updates, a.keep_interval_updates,
           a.max_tokens, a.best_checkpoint_metric == "bleu")
    assert got == (warmup, updates, [gpus], [lr], dropout, interval, interval, keep, 4096,
                   best_bleu), f"{script} {args} must train with the {schedule} schedule"
    model = args[args.index("--model") + 1]
    assert printout.startswith(f"training {model}, size "), "the model trained comes first"
    assert f" on the schedule {schedule} (from " in printout.splitlines()[0], (
        "the schedule is printed at start")
    assert f"{updates} updates, warmup {warmup}" in printout


def test_reordering_embeddings_select_by_dev_bleu_with_beam_4():
    a = parsed(dry_run("train-wmt14-en-de.sh", "/data/wmt14", "--model", "re-both"))
    assert (a.eval_bleu, a.maximize_best_checkpoint_metric, a.attention_dropout) == (
        True, True, 0.1), "RE §6.3 keeps the model with the highest dev BLEU"
    assert json.loads(a.eval_bleu_args) == {"beam": 4}
    assert json.loads(a.eval_bleu_detok_args) == {"target_lang": "de"}
    assert a.eval_bleu_remove_bpe == "@@ "


def test_flags_override_the_schedule_and_the_printout_says_so():
    command, printout = dry_run(
        "train-wmt14-en-de.sh", "/data/wmt14", "--model", "re-both", "--warmup", "100",
        "--max-update", "50", "--lr", "1e-3", "--max-tokens", "2000", "--gpus", "2",
        schedule_printout=True)
    a = parsed(command)
    assert (a.warmup_updates, a.max_update, a.lr, a.max_tokens, a.update_freq) == (
        100, 50, [1e-3], 2000, [2])
    assert "50 updates, warmup 100, lr 1e-3" in printout
    assert ("batch: up to 8000 tokens per update: 2 batches of up to 2000 accumulated "
            "(--update-freq 2) on each of 2 GPUs; the paper's: 4096 x 4 GPUs = 16384") in printout


@pytest.mark.skipif(torch.cuda.is_available(), reason="the printout of a machine without a GPU")
def test_a_training_without_a_gpu_says_it_trains_on_the_cpu():
    _, printout = dry_run("train-wmt14-en-de.sh", "/data/wmt14", "--model", "re-both",
                          "--max-tokens", "2000", schedule_printout=True)
    assert "per update: 4 batches of up to 2000 accumulated (--update-freq 4) on the CPU" in (
        printout) and "on each of" not in printout, printout


def test_unknown_schedule_lists_the_known_ones():
    result = subprocess.run(["bash", str(EXAMPLES / "train-wmt14-en-de.sh"), "/data/wmt14",
                             "--model", "dpe", "--schedule", "bogus", "--dry-run"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr == ("train-wmt14-en-de.sh: error: --schedule must be one of: "
                             "dpe-iwslt dpe re xlpe demo, not 'bogus'\n")


@pytest.mark.parametrize("size, order_lambda", [("small", 0.3), ("base", 0.5), ("big", 0.5)])
def test_dpe_order_lambda_is_the_papers_value_for_the_data_size(size, order_lambda):
    script, data = (("train-iwslt14.sh", ["en-de", "/data/iwslt"]) if size == "small"
                    else ("train-wmt14-en-de.sh", ["/data/wmt14", "--size", size]))
    a = parsed(dry_run(script, *data, "--model", "dpe"))
    assert a.order_lambda == order_lambda, (
        "DPE §4.4/§4.5: the order loss weighs 0.5 on WMT'14 and 0.3 on IWSLT'14")


def test_unknown_model_lists_the_known_ones():
    result = subprocess.run(["bash", str(EXAMPLES / "train-wmt14-en-de.sh"), "/data/wmt14",
                             "--model", "bogus", "--dry-run"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "unknown model 'bogus'" in result.stderr and "encoder-free-inxl" in result.stderr


@pytest.mark.parametrize("script, pair", [("train-libreoffice-en-de.sh", ()),
                                          ("train-libreoffice.sh", ("en-tr",))])
def test_libreoffice_pairs(script, pair):
    command = dry_run(script, *pair, "/data/lo", "--model", "xlpe")
    args = parsed(command)
    target = pair[0].split("-")[1] if pair else "de"
    assert (args.source_lang, args.target_lang) == ("en", target)
    assert args.save_dir == f"checkpoints/libreoffice-en-{target}/xlpe-small"
    assert args.share_all_embeddings, "the recipe builds one joined dictionary"


@pytest.mark.parametrize("model, size, checkpoint, beam, lenpen", [
    ("dpe", "base", "checkpoint_avg5.pt", 5, 0.6),
    ("re-both", "base", "checkpoint_best.pt", 4, 1.0),
    ("xlpe", "big", "checkpoint_avg20.pt", 4, 0.6),
])
def test_evaluate_decodes_as_the_training_schedule_says(tmp_path, model, size, checkpoint,
                                                        beam, lenpen):
    data, save_dir, stubs = tmp_path / "data", tmp_path / "ckpt", tmp_path / "stubs"
    for variant in ("text", "dpe", "xlpe"):
        (data / "data-bin" / variant).mkdir(parents=True)
        (data / "data-bin" / variant / "dict.en.txt").write_text("")
    (data / "recipe.env").write_text("SRC=en\nTGT=de\nLOWERCASE=0\nRAW=/raw\n"
                                     "TOKENIZATION=reversible\n")
    (data / "bpe").mkdir()
    (data / "bpe" / "codes").write_text("")
    (data / "reference").mkdir()
    for split in ("valid", "test"):
        (data / "reference" / f"{split}.de").write_text("")
    record_corpus(str(data), str(tmp_path / "no-raw"), "en", "de", {}, ["prepare-corpus.sh"])
    # fairseq-train itself is not what this test is about
    stubs.mkdir()
    env = stubbed_fairseq(stubs, {"fairseq-train": "#!/bin/sh\nexit 0\n"})
    train = subprocess.run(["bash", str(EXAMPLES / "train-wmt14-en-de.sh"), str(data),
                            "--model", model, "--size", size, "--save-dir", str(save_dir)],
                           capture_output=True, text=True, env=env)
    assert train.returncode == 0, train.stderr

    evaluate = subprocess.run(["bash", str(EXAMPLES / "evaluate.sh"), str(data), str(save_dir),
                               "--model", model, "--dry-run"], capture_output=True, text=True)
    assert evaluate.returncode == 0, evaluate.stderr
    generate = shlex.split(evaluate.stdout.splitlines()[-1])
    assert generate[0] == "fairseq-generate"
    def option(name):
        return generate[generate.index(name) + 1]
    assert (Path(option("--path")).name, int(option("--beam")), float(option("--lenpen"))) == (
        checkpoint, beam, lenpen), f"{model} must be decoded as its paper did"
    averaged = checkpoint != "checkpoint_best.pt"
    assert evaluate.stdout.startswith("xlpe-average-checkpoints") == averaged


@pytest.mark.parametrize("model, options, expected", [
    ("xlpe-inxl", [], []),
    ("xlpe-inxl", ["--preorderer-nbest", "4"],
     ["--preorderer", "DATA/preorderer.pt", "--preorderer-nbest", "4"]),
    ("xlpe-inxl", ["--preorderer-nbest", "1"], []),
    ("transformer", [], []),
])
def test_evaluate_decodes_xl_pe_with_the_preorderers_best_unless_told(tmp_path, model, options,
                                                                       expected):
    """XL PE models decode the data-bin's test positions, the preorderer's best reordering,
    unless --preorderer-nbest N asks to choose among its N best."""
    out = tmp_path / "out"  # OUT, beside the checkpoint folder
    out.mkdir()
    (out / "recipe.env").write_text("SRC=en\nTGT=de\nLOWERCASE=0\nRAW=/raw\n"
                                    "TOKENIZATION=reversible\n")
    result = subprocess.run(["bash", str(EXAMPLES / "evaluate.sh"), str(out),
                             str(tmp_path / "ckpt"), "--model", model, "--schedule", "xlpe",
                             "--dry-run", *options], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    generate = shlex.split(result.stdout.splitlines()[-1])
    found = [word.replace(str(out), "DATA")
             for word in generate[generate.index("--remove-bpe") + 1:]]
    assert found == expected, f"{model} {options}: {generate}"


@pytest.mark.parametrize("model, value, status, message", [
    ("transformer", "4", 2, "--preorderer-nbest is for XL PE models"),
    ("xlpe-inxl", "0", 2, "--preorderer-nbest must be a whole number from 1 to 999, not '0'"),
    ("xlpe-inxl", "4", 1, "preorderer.pt: no such file; --preorderer-nbest 4 chooses"),
])
def test_evaluate_refuses_a_preorderer_choice_it_cannot_make(tmp_path, model, value, status,
                                                             message):
    out = tmp_path / "out"  # OUT, beside the checkpoint folder
    out.mkdir()
    (out / "recipe.env").write_text("SRC=en\nTGT=de\nLOWERCASE=0\nRAW=/raw\n"
                                    "TOKENIZATION=reversible\n")
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "checkpoint_best.pt").write_bytes(b"")
    result = subprocess.run(["bash", str(EXAMPLES / "evaluate.sh"), str(out),
                             str(tmp_path / "ckpt"), "--model", model, "--schedule", "re",
                             "--preorderer-nbest", value], capture_output=True, text=True)
    assert result.returncode == status and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2, result.stderr


def test_evaluate_refuses_a_corpus_tokenized_before_tokens_recorded_spacing(tmp_path):
    """An OUT prepared before has no TOKENIZATION line: its tokens cannot give the text back,
    so it is refused in one line that says to prepare it again, before any work."""
    out = tmp_path / "out"  # OUT, beside the checkpoint folder
    out.mkdir()
    (out / "recipe.env").write_text("SRC=en\nTGT=de\nLOWERCASE=0\nRAW=/raw\n")
    result = subprocess.run(["bash", str(EXAMPLES / "evaluate.sh"), str(out),
                             str(tmp_path / "ckpt"), "--model", "transformer", "--schedule",
                             "re", "--dry-run"], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert "recipe.env" in result.stderr and "rerun xlpe-prepare" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_evaluate_without_a_schedule_asks_for_one(tmp_path):
    out = tmp_path / "out"  # OUT, beside the checkpoint folder
    out.mkdir()
    (out / "recipe.env").write_text("SRC=en\nTGT=de\nLOWERCASE=0\nRAW=/raw\n"
                                    "TOKENIZATION=reversible\n")
    result = subprocess.run(["bash", str(EXAMPLES / "evaluate.sh"), str(out),
                             str(tmp_path / "ckpt"), "--model", "dpe", "--dry-run"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "schedule.env: no such file" in result.stderr and "--schedule" in result.stderr


def prepared_data_bin(root, joined=False):
    """The data-bin layout of data_prep/prepare-corpus.sh, without the data."""
    text = root / "data-bin" / "text"
    text.mkdir(parents=True)
    (text / "train.fr-en.fr.idx").write_text("")
    (text / "dict.fr.txt").write_text("le 1\n")
    (text / "dict.en.txt").write_text("le 1\n" if joined else "the 1\n")
    return root / "data-bin"


@pytest.mark.parametrize("model, arch, mode, data", [
    ("transformer", "transformer", None, "text"),
    ("xlpe-inxl", "transformer_xlpe", "inxl", "xlpe"),
    ("xlpe-headxl", "transformer_xlpe", "headxl", "xlpe"),
    ("xlpe-combination", "transformer_xlpe", "combination", "xlpe"),
    ("dpe", "transformer_dpe", None, "dpe"),
    ("re-encoder", "transformer_reorder_emb", None, "text"),
    ("re-decoder", "transformer_reorder_emb", None, "text"),
    ("re-both", "transformer_reorder_emb", None, "text"),
])
def test_train_sh_every_model_family_on_a_prepared_corpus(tmp_path, model, arch, mode, data):
    data_bin = prepared_data_bin(tmp_path / "out")
    args = parsed(dry_run("train.sh", model, str(data_bin), str(tmp_path / "ck")))
    assert args.arch == arch and getattr(args, "xlpe_mode", None) == mode
    assert args.data == str(data_bin / data)
    assert (args.source_lang, args.target_lang) == ("fr", "en")
    assert args.save_dir == str(tmp_path / "ck")
    assert (args.encoder_embed_dim, args.encoder_layers) == (256, 2), "small by default"
    assert args.share_decoder_input_output_embed and not args.share_all_embeddings


def test_train_sh_sizes_joined_dictionary_and_fairseq_options(tmp_path):
    # OUT instead of OUT/data-bin, options of both scripts and of fairseq-train mixed
    data_bin = prepared_data_bin(tmp_path / "out", joined=True)
    command = dry_run("train.sh", "transformer", str(data_bin.parent), str(tmp_path / "ck"),
                      "--patience", "3", "--size", "base", "--max-update", "100", "--seed", "7")
    args = parsed(command)
    assert args.arch == "transformer_wmt_en_de" and args.encoder_embed_dim == 512
    assert args.share_all_embeddings, "one dictionary for both sides"
    assert (args.patience, args.seed, args.max_update) == (3, 7, 100)


def test_train_sh_refuses_what_is_not_a_prepared_corpus(tmp_path):
    usage = subprocess.run(["bash", str(EXAMPLES / "train.sh"), "transformer"],
                           capture_output=True, text=True)
    assert usage.returncode == 2 and "MODEL DATA_DIR CHECKPOINT_DIR" in usage.stderr
    missing = subprocess.run(["bash", str(EXAMPLES / "train.sh"), "transformer", str(tmp_path),
                              str(tmp_path / "ck")], capture_output=True, text=True)
    assert missing.returncode == 1 and "xlpe-prepare" in missing.stderr
