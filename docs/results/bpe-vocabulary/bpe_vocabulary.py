"""Learning BPE merges on a WMT-sized vocabulary: time and peak memory of ``xlpe-bpe``'s learner
against the number of word types.

    pip install wordfreq        # its frequency lists; not a dependency of the project
    python docs/results/bpe-vocabulary/bpe_vocabulary.py RESULTS.jsonl \
        [--langs de en] [--tokens 130000000] [--types 100000 300000 0] [--merges 32000]

The scale measurement (``scripts/prep_scale.py``) repeats a real corpus, so its vocabulary is
the same at every size and cannot show how learning merges grows with the word types, which is
what grows in a WMT corpus. Learning depends only on the word counts (``xlpe-bpe learn``
counts words in chunks on all cores, linear in the text, then learns on the counts), so this
gives the learner real counts of a WMT-sized vocabulary: wordfreq's "large" lists (every word of
frequency 1e-8 or more in its sources: web text, Wikipedia, subtitles, news; lowercased), each
language's frequencies times ``--tokens`` (WMT'14 En-De has about 130M tokens a side), the
languages' counts added as in joint merges. ``--types`` keeps that many of the most frequent
types (0: all). Each size is learned in a process of its own, measured by
``xlpe_fairseq.io.stage_usage`` (a line of RESULTS each, with its types and tokens), reading
the counts included.
"""
import argparse
import collections
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def word_counts(frequencies, tokens):
    """Joint counts of the languages' ``{word: frequency}`` dicts, each scaled to ``tokens``
    tokens; a word that rounds to no occurrence is left out."""
    counts = collections.Counter()
    for language in frequencies:
        for word, frequency in language.items():
            count = round(frequency * tokens)
            if count and not any(c.isspace() for c in word):
                counts[word] += count
    return counts


def learn(counts_path, merges):
    """The child: read ``word count`` lines and learn merges as ``xlpe-bpe learn`` does."""
    from xlpe_fairseq.preprocessing.bpe import learn_bpe
    counts = collections.Counter()
    with open(counts_path, encoding="utf-8") as lines:
        for line in lines:
            word, count = line.split(" ")
            counts[word] = int(count)
    learned = learn_bpe(counts, merges)
    print(len(learned))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--langs", nargs="+", default=["de", "en"])
    parser.add_argument("--tokens", type=int, default=130_000_000, help="tokens a side")
    parser.add_argument("--types", type=int, nargs="+", default=[100_000, 300_000, 0])
    parser.add_argument("--merges", type=int, default=32000)
    parser.add_argument("--learn", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.learn:
        return learn(args.learn, args.merges)
    import wordfreq
    counts = word_counts([wordfreq.get_frequency_dict(language, wordlist="large")
                          for language in args.langs], args.tokens)
    ranked = counts.most_common()
    with tempfile.TemporaryDirectory() as folder:
        for size in args.types:
            kept = ranked[:size] if size else ranked
            path = Path(folder) / f"counts-{len(kept)}"
            path.write_text("".join(f"{word} {count}\n" for word, count in kept),
                            encoding="utf-8")
            name = f"learn {args.merges} merges on {len(kept)} types"
            log = Path(folder) / "usage.jsonl"
            subprocess.run([sys.executable, "-m", "xlpe_fairseq_cli.stage_usage", "--log",
                            str(log), "--name", name, "--", sys.executable, __file__,
                            str(args.results), "--learn", str(path), "--merges",
                            str(args.merges)], check=True, stdout=subprocess.DEVNULL)
            row = json.dumps({**json.loads(log.read_text().splitlines()[-1]),
                              "types": len(kept), "tokens": sum(count for _, count in kept)})
            with open(args.results, "a", encoding="utf-8") as results:
                results.write(row + "\n")
            print(row, flush=True)


if __name__ == "__main__":
    main()
