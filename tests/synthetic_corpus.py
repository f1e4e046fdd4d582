"""A tiny parallel corpus with systematic, exactly known reordering.

Source words ``s0..s{V-1}`` translate one-to-one into ``t0..t{V-1}``; every word whose index is
a multiple of 4 is a "verb" and moves to the end of the target sentence (verb-final order, as
from English into German subordinate clauses). The word alignment and the reorder positions
are therefore known exactly, which lets tests check learning and decoding without an aligner.
"""
import random
from pathlib import Path

from warm_python import run_module

VOCAB_SIZE = 24


def is_verb(word_index):
    return word_index % 4 == 0


def make_pair(rng, min_len=2, max_len=8):
    """Return (source tokens, target tokens, alignment links, reorder positions)."""
    words = [rng.randrange(VOCAB_SIZE) for _ in range(rng.randint(min_len, max_len))]
    order = [i for i, w in enumerate(words) if not is_verb(w)] + [
        i for i, w in enumerate(words) if is_verb(w)
    ]
    positions = [0] * len(words)
    for target_index, source_index in enumerate(order):
        positions[source_index] = target_index
    source = [f"s{w}" for w in words]
    target = [f"t{words[i]}" for i in order]
    links = [(i, positions[i]) for i in range(len(words))]
    return source, target, links, positions


def write_corpus(directory, sizes=None, seed=0, src="xx", tgt="yy"):
    """Write ``{split}.{src}``, ``{split}.{tgt}``, ``{split}.align``, ``{split}.reorder``."""
    sizes = sizes or {"train": 400, "valid": 24, "test": 24}
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for split, count in sizes.items():
        pairs = [make_pair(rng) for _ in range(count)]
        (directory / f"{split}.{src}").write_text("".join(" ".join(p[0]) + "\n" for p in pairs))
        (directory / f"{split}.{tgt}").write_text("".join(" ".join(p[1]) + "\n" for p in pairs))
        (directory / f"{split}.align").write_text(
            "".join(" ".join(f"{i}-{j}" for i, j in p[2]) + "\n" for p in pairs)
        )
        (directory / f"{split}.reorder").write_text(
            "".join(" ".join(map(str, p[3])) + "\n" for p in pairs)
        )
    return directory


def preprocess_corpus(raw, destdir):
    """fairseq-preprocess the corpus under ``raw`` into ``destdir`` (joined dictionary)."""
    run_module("fairseq_cli.preprocess", [
        "--source-lang", "xx", "--target-lang", "yy", "--trainpref", raw / "train",
        "--validpref", raw / "valid", "--testpref", raw / "test", "--destdir", destdir,
        "--joined-dictionary", "--workers", "1"]).check_returncode()
    return destdir


def random_preorderer(raw, seed):
    """A small preorderer over the corpus's source words with random pair scores of both signs:
    it reorders many sentences, so paths that agree do not agree by keeping the source order."""
    import torch

    from xlpe_fairseq.preordering.corpus import read_tokens
    from xlpe_fairseq.preordering.preorderer import Preorderer
    from xlpe_fairseq.preordering.vocabulary import Vocabulary

    torch.manual_seed(seed)
    preorderer = Preorderer.create(Vocabulary.build(read_tokens(raw / "train.xx")), hidden_dim=8,
                                   embed_dim=8, pair_dim=8)
    torch.nn.init.normal_(preorderer.scorer.project.weight, std=3.0)
    torch.nn.init.zeros_(preorderer.scorer.distance.weight)
    return preorderer


def xlpe_task(data_bin, *options):
    """``(task, model, args)``: translation_reorder on ``data_bin`` with a tiny XL PE model, as
    fairseq-train's parser builds them from ``options``."""
    from fairseq import options as fairseq_options, tasks

    # registers the plugin for the parser, even where another test imported xlpe_fairseq first
    from xlpe_fairseq import criterions, models, tasks as plugin_tasks  # noqa: F401

    parser = fairseq_options.get_training_parser()
    args = fairseq_options.parse_args_and_arch(parser, [
        str(data_bin), "--user-dir", str(Path(__file__).resolve().parents[1] / "xlpe_fairseq"),
        "--task", "translation_reorder", "--arch", "transformer_xlpe",
        "--encoder-attention-heads", "2", "--xlpe-heads", "1", *options,
    ])
    task = tasks.setup_task(args)
    return task, task.build_model(args), args


def write_prepared_corpus(out, sizes=None, joined=True):
    """An OUT as xlpe-prepare leaves it, made from the synthetic corpus with its exact
    alignments and positions (every split's positions, the BTG oracle's and DPE's being the
    same here), without tokenization or BPE: the text is its own BPE; ``joined``: one
    dictionary for both sides. Returns OUT."""
    import os
    import shutil

    from xlpe_fairseq.io.provenance import record_corpus
    from xlpe_fairseq.preprocessing.binarize import binarize_reorder, dataset_prefix

    out = Path(out)
    raw = write_corpus(out / "raw", sizes=sizes or {"train": 100, "valid": 6, "test": 6})
    bpe, reference = out / "bpe", out / "reference"
    bpe.mkdir()
    reference.mkdir()
    for split in ("train", "valid", "test"):
        for name in ("xx", "yy", "align"):
            shutil.copy(raw / f"{split}.{name}", bpe / f"{split}.{name}")
        for kind in ("dpe", "btg", "pred"):
            shutil.copy(raw / f"{split}.reorder", bpe / f"{split}.{kind}.reorder")
    (bpe / "codes").write_text("s 1 100\n")
    for split in ("valid", "test"):
        shutil.copy(raw / f"{split}.yy", reference / f"{split}.yy")
    text = out / "data-bin" / "text"
    run_module("fairseq_cli.preprocess", [
        "--source-lang", "xx", "--target-lang", "yy", "--trainpref", bpe / "train",
        "--validpref", bpe / "valid", "--testpref", bpe / "test", "--destdir", text,
        "--workers", "1", *(["--joined-dictionary"] if joined else [])]).check_returncode()
    for variant, splits in (("dpe", ("train", "valid")), ("xlpe", ("train", "valid", "test"))):
        folder = out / "data-bin" / variant
        folder.mkdir()
        for name in os.listdir(text):
            os.symlink(os.path.join("..", "text", name), folder / name)
        for split in splits:
            binarize_reorder(str(bpe / f"{split}.dpe.reorder"), str(bpe / f"{split}.xx"),
                             dataset_prefix(str(folder), split, "xx", "yy"))
    (out / "recipe.env").write_text(f"SRC=xx\nTGT=yy\nLOWERCASE=0\nRAW={raw}\nTOKENIZATION=reversible\n")
    record_corpus(str(out), str(raw), "xx", "yy", {}, ["write_prepared_corpus"])
    return out
