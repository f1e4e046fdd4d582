"""xlpe-swap-robustness (Chen et al. 2019, §6.5): the word-swap procedure and the command end
to end on a tiny checkpoint."""
import json
import os
import random
import subprocess
import sys

import pytest

from evaluation.tiny_checkpoints import session_checkpoints
from xlpe_fairseq.evaluation.generate_output import read_hypotheses
from xlpe_fairseq.evaluation.swap_robustness import group_words, main, swap_corpus, swap_words
from xlpe_fairseq.user_dir import PLUGIN_DIR

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TEN_WORDS = "a b@@ c d e@@ f@@ g h i j k l m".split()  # 10 words, two of them split by BPE


def moved_positions(before, after):
    """Word positions that hold another word after the swap."""
    return {i for i, (x, y) in enumerate(zip(group_words(before), group_words(after))) if x != y}


def word_multiset(tokens):
    return sorted(map(tuple, group_words(tokens)))


def test_words_keep_their_bpe_pieces():
    assert group_words(TEN_WORDS)[1] == ["b@@", "c"]
    assert group_words(TEN_WORDS)[3] == ["e@@", "f@@", "g"]
    for seed in range(20):
        swapped, _ = swap_words(TEN_WORDS, 0.5, random.Random(seed))
        assert word_multiset(swapped) == word_multiset(TEN_WORDS)


def test_exactly_the_rounded_share_of_words_moves():
    for fraction, expected in [(0.2, 2), (0.3, 3), (0.45, 5), (0.75, 8), (1.0, 10)]:
        for seed in range(10):
            swapped, count = swap_words(TEN_WORDS, fraction, random.Random(seed))
            assert count == expected
            assert len(moved_positions(TEN_WORDS, swapped)) == expected, (fraction, seed)


def test_zero_percent_and_a_single_word_leave_the_sentence_alone():
    assert swap_words(TEN_WORDS, 0.0, random.Random(1)) == (TEN_WORDS, 0)
    # 10% of 10 words is one word, which cannot move alone
    assert swap_words(TEN_WORDS, 0.1, random.Random(1)) == (TEN_WORDS, 0)
    assert swap_words([], 1.0, random.Random(1)) == ([], 0)


def test_all_of_a_two_word_sentence_swaps_the_words():
    assert swap_words(["x@@", "y", "z"], 1.0, random.Random(7)) == (["z", "x@@", "y"], 2)


def test_swaps_are_seeded_and_nested_across_percentages():
    lines = [" ".join(TEN_WORDS)] * 3
    assert swap_corpus(lines, 0.5, seed=4) == swap_corpus(lines, 0.5, seed=4)
    assert swap_corpus(lines, 0.5, seed=4) != swap_corpus(lines, 0.5, seed=5)
    swapped, share = swap_corpus(lines, 0.5, seed=4)
    assert share == 0.5 and len(set(swapped)) > 1, "each line draws its own swaps"
    for seed in range(10):
        smaller, _ = swap_words(TEN_WORDS, 0.3, random.Random(seed))
        larger, _ = swap_words(TEN_WORDS, 0.6, random.Random(seed))
        assert moved_positions(TEN_WORDS, smaller) <= moved_positions(TEN_WORDS, larger)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return session_checkpoints(tmp_path_factory)


def test_command_end_to_end_matches_plain_generation_at_zero(tiny, tmp_path):
    corpus, checkpoints = tiny
    generate_args = "--beam 1 --batch-size 8 --max-len-a 0 --max-len-b 8"
    out = tmp_path / "out"
    main(["--checkpoint", f"tiny={checkpoints['untied']}", "--data-bin", str(corpus["data_bin"]),
          "--source", str(corpus["bpe"] / "test.xx"), "--reference", str(corpus["raw"] / "test.yy"),
          "--source-lang", "xx", "--target-lang", "yy", "--percentages", "0", "100",
          "--generate-args", generate_args, "--output-dir", str(out)])
    result = json.loads((out / "swap_robustness.json").read_text())
    assert set(result["bleu"]["tiny"]) == {"0", "100"}
    assert result["moved_share"]["0"] == 0 and result["moved_share"]["100"] > 0.8
    source = (corpus["bpe"] / "test.xx").read_text()
    assert (out / "swapped" / "0.xx").read_text() == source
    swapped = (out / "swapped" / "100.xx").read_text()
    assert swapped != source
    for before, after in zip(source.splitlines(), swapped.splitlines()):
        assert word_multiset(after.split()) == word_multiset(before.split()), \
            "BPE pieces stay with their word"
    assert "| 100 |" in (out / "swap_robustness.md").read_text()
    assert (out / "swap_robustness.png").read_bytes().startswith(PNG_MAGIC)
    # 0% through the temporary data-bin gives what fairseq-generate gives on the real one
    plain = subprocess.run(
        [sys.executable, "-m", "fairseq_cli.generate", str(corpus["data_bin"]), "--user-dir",
         PLUGIN_DIR, "--task", "translation_reorder", "--gen-subset", "test", "--path",
         str(checkpoints["untied"]), "--remove-bpe", "--required-batch-size-multiple", "1",
         "--num-workers", "0", *generate_args.split()],
        capture_output=True, text=True, check=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"})
    (tmp_path / "plain.out").write_text(plain.stdout)
    sentences = len(source.splitlines())
    assert read_hypotheses(tmp_path / "plain.out", sentences) == read_hypotheses(
        out / "generate" / "tiny.0.out", sentences)
