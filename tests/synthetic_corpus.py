"""A tiny parallel corpus with systematic, exactly known reordering.

Source words ``s0..s{V-1}`` translate one-to-one into ``t0..t{V-1}``; every word whose index is
a multiple of 4 is a "verb" and moves to the end of the target sentence (verb-final order, as
from English into German subordinate clauses). The word alignment and the reorder positions
are therefore known exactly, which lets tests check learning and decoding without an aligner.
"""
import random
import subprocess
import sys
from pathlib import Path

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
    subprocess.run(
        [sys.executable, "-m", "fairseq_cli.preprocess", "--source-lang", "xx", "--target-lang",
         "yy", "--trainpref", raw / "train", "--validpref", raw / "valid", "--testpref",
         raw / "test", "--destdir", destdir, "--joined-dictionary", "--workers", "1"],
        check=True, capture_output=True,
    )
    return destdir
