"""fairseq's commands and the plugin's, run as ``python -m`` runs them (forked from the warm
server of ``warm_python``), with tiny models on the synthetic corpus: the pieces the end-to-end
tests build their corpora, trainings and decodings from."""
import os
from pathlib import Path

from synthetic_corpus import preprocess_corpus, write_corpus
from warm_python import run_module

USER_DIR = str(Path(__file__).resolve().parents[2] / "xlpe_fairseq")
TINY_MODEL = [
    "--encoder-embed-dim", "32", "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64",
    "--decoder-ffn-embed-dim", "64", "--encoder-layers", "1", "--decoder-layers", "1",
    "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
]
FAMILIES = {
    "dpe": ["--arch", "transformer_dpe"],
    "xlpe": ["--arch", "transformer_xlpe", "--xlpe-mode", "combination", "--xlpe-heads", "1"],
    "reorder-emb": ["--arch", "transformer_reorder_emb", "--reorder-emb", "both"],
}
# the position baselines: the same command lines, one short run each
POSITION_FAMILIES = {
    "relpe": ["--arch", "transformer_relpe", "--max-relative-positions", "4"],
    "rope": ["--arch", "transformer_rope"],
    "alibi": ["--arch", "transformer_alibi"],
    "t5-bias": ["--arch", "transformer_t5_bias"],
}


def run(module, *args, stdin=None, expect_failure=False):
    """``python -m module args`` (one OpenMP thread, warnings off); it must succeed, or with
    ``expect_failure`` fail."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    result = run_module(module, args, stdin=stdin, env=env)
    if expect_failure:
        assert result.returncode != 0, f"{module} should have failed:\n{result.stdout}"
    else:
        assert result.returncode == 0, f"{module} {' '.join(map(str, args))} failed:\n{result.stderr[-3000:]}"
    return result


def training_args(data_bin, family, save_dir, max_update=4, max_tokens=400):
    """fairseq-train arguments for a tiny model of ``family`` (a key of FAMILIES or
    POSITION_FAMILIES)."""
    return [data_bin, "--user-dir", USER_DIR, "--task", "translation_reorder",
            *{**FAMILIES, **POSITION_FAMILIES}[family],
            *TINY_MODEL, "--criterion", "label_smoothed_cross_entropy_with_order", "--optimizer",
            "adam", "--lr", "0.002", "--max-tokens", max_tokens, "--max-update", max_update,
            "--save-dir", save_dir, "--no-progress-bar", "--log-format", "simple",
            "--log-interval", "1", "--num-workers", "0", "--seed", "3"]


def generate(data_bin, path, *extra):
    return run("fairseq_cli.generate", data_bin, "--user-dir", USER_DIR, "--task",
               "translation_reorder", "--path", path, "--gen-subset", "test", "--batch-size", "7",
               "--required-batch-size-multiple", "1", "--num-workers", "0", *extra)


def binarize_positions(*jobs):
    """xlpe-binarize each (reorder, source, destdir, split) job."""
    for reorder, source, destdir, split in jobs:
        run("xlpe_fairseq.preprocessing.binarize", "--reorder", reorder, "--source", source,
            "--destdir", destdir, "--split", split, "--source-lang", "xx", "--target-lang", "yy")


def linked_data_bin(data_bin, destination, keep=lambda name: True):
    """A data-bin of symlinks to ``data_bin``'s files (those ``keep`` accepts), to which a test
    adds other positions without touching the shared one."""
    destination.mkdir()
    for f in data_bin.iterdir():
        if keep(f.name):
            (destination / f.name).symlink_to(f)
    return destination


def binarized_corpus(root, sizes):
    """The synthetic corpus under ``root/raw`` and its data-bin with training positions."""
    raw = write_corpus(root / "raw", sizes=sizes)
    data_bin = root / "data-bin"
    preprocess_corpus(raw, data_bin)
    binarize_positions((raw / "train.reorder", raw / "train.xx", data_bin, "train"))
    return raw, data_bin
