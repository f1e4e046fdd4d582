"""Two tiny checkpoints on a BPE version of the synthetic corpus, for the evaluation commands.

Words ``s10``..``s23`` / ``t10``..``t23`` are split into two BPE pieces (``s1@@ 0``), so
the model sees pieces while the gold alignment (exact, from ``synthetic_corpus``) is over
words: scoring must merge pieces back to words. Both models are fairseq's ``transformer`` under the
``translation_reorder`` task, one with shared embeddings (tied weights must count once in the
parameter count), one without. Two decoder layers, so the penultimate layer is not the last.

Built once per test session (``tiny_checkpoints`` caches on the session's directory) and
shared by the test modules that use it.
"""
import functools

from support.fairseq_commands import TINY_MODEL, USER_DIR, run
from synthetic_corpus import write_corpus

TWO_DECODER_LAYERS = [*TINY_MODEL, "--decoder-layers", "2"]


def split_word(word):
    return f"{word[:2]}@@ {word[2:]}" if len(word) > 2 else word


def to_bpe(line):
    return " ".join(split_word(word) for word in line.split())


def make_corpus(root):
    raw = write_corpus(root / "raw", sizes={"train": 200, "valid": 8, "test": 12})
    bpe = root / "bpe"
    bpe.mkdir()
    for path in raw.iterdir():
        if path.suffix in (".xx", ".yy"):
            lines = path.read_text().splitlines()
            (bpe / path.name).write_text("".join(to_bpe(line) + "\n" for line in lines))
    data_bin = root / "data-bin"
    run("fairseq_cli.preprocess", "--source-lang", "xx", "--target-lang", "yy",
        "--trainpref", bpe / "train", "--validpref", bpe / "valid", "--testpref", bpe / "test",
        "--destdir", data_bin, "--joined-dictionary", "--workers", "1")
    return {"root": root, "raw": raw, "bpe": bpe, "data_bin": data_bin}


def train(corpus, name, *model):
    """A 6-update checkpoint of the model that the options ``model`` make."""
    save_dir = corpus["root"] / name
    run("fairseq_cli.train", corpus["data_bin"], "--user-dir", USER_DIR, "--task",
        "translation_reorder", *model, "--criterion",
        "label_smoothed_cross_entropy", "--label-smoothing", "0.1", "--optimizer", "adam",
        "--lr", "0.003", "--max-tokens", "1000", "--max-update", "6", "--save-dir", save_dir,
        "--no-epoch-checkpoints", "--seed", "3", "--no-progress-bar", "--num-workers", "0")
    return save_dir / "checkpoint_last.pt"


def train_lstm(corpus):
    """fairseq's LSTM (XL PE Table 4's preset at a tiny size): one attention, after its last
    layer, and a source it right-pads."""
    sizes = [option for side in ("encoder", "decoder")
             for option in (f"--{side}-embed-dim", "16", f"--{side}-hidden-size", "16",
                            f"--{side}-layers", "2")]
    return train(corpus, "lstm", "--arch", "lstm_6l_wmt_en_de", *sizes,
                 "--decoder-out-embed-dim", "16")


@functools.cache
def lstm_checkpoint(root):
    """An LSTM checkpoint on the tiny corpus under ``root`` (built on first use)."""
    return train_lstm(tiny_checkpoints(root)[0])


def session_lstm_checkpoint(tmp_path_factory):
    return lstm_checkpoint(tmp_path_factory.getbasetemp() / "evaluation-tiny")


@functools.cache
def tiny_checkpoints(root):
    """``(corpus, checkpoints)`` built under ``root``: paths of the raw, BPE and binarized
    corpus, and the checkpoints ``tied`` and ``untied``."""
    corpus = make_corpus(root)
    return corpus, {
        "tied": train(corpus, "tied", "--arch", "transformer", "--share-all-embeddings",
                      *TWO_DECODER_LAYERS),
        "untied": train(corpus, "untied", "--arch", "transformer", *TWO_DECODER_LAYERS),
    }


def session_checkpoints(tmp_path_factory):
    """For a fixture: the tiny setup, built on first use in the test session."""
    return tiny_checkpoints(tmp_path_factory.getbasetemp() / "evaluation-tiny")
