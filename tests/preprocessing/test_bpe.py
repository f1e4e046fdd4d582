"""BPE learning (Sennrich et al. 2016) and application through fastBPE."""
import collections

import pytest

from xlpe_fairseq.preprocessing.bpe import learn_bpe, main

# The example of Sennrich et al. (2016), Figure 1.
TOY = collections.Counter({"low": 5, "lower": 2, "newest": 6, "widest": 3})


def test_learns_the_paper_example_merges_in_order():
    # the end-of-word mark sits on the last character (fastBPE's convention), so "low"
    # ends in "w</w>"; ("e", "w") and ("n", "e") tie at 6 and the smaller pair wins
    merges = [(a, b) for a, b, _ in learn_bpe(TOY, 4)]
    assert merges == [("e", "s"), ("es", "t</w>"), ("l", "o"), ("e", "w")], merges


def test_merge_counts_are_pair_frequencies():
    assert learn_bpe(TOY, 1) == [("e", "s", 9)]


def test_stops_below_min_frequency():
    merges = learn_bpe(collections.Counter({"ab": 1, "cd": 1}), 10, min_frequency=2)
    assert merges == [], "no pair occurs twice, so nothing should be merged"


def test_repeated_symbols_counted_once_per_occurrence():
    # "aaaa" is a a a a</w>: the pair (a, a) occurs twice, (a, a</w>) once
    merges = learn_bpe(collections.Counter({"aaaa": 1}), 1, min_frequency=1)
    assert merges == [("a", "a", 2)], merges


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_learn_then_apply_with_fastbpe(tmp_path):
    text = "the newest lower widest lowest\nnewer wider low\n" * 20
    corpus = write(tmp_path / "train.tok.en", text)
    codes = tmp_path / "codes"
    main(["learn", "--input", corpus, "--codes", str(codes), "--merges", "5", "--workers", "2"])
    lines = codes.read_text().splitlines()
    assert len(lines) == 5, f"{len(lines)} merges"
    assert all(len(line.split()) == 3 for line in lines), f"not fastBPE format: {lines[:3]}"
    out = tmp_path / "train.bpe.en"
    main(["apply", "--codes", str(codes), "--input", corpus, "--output", str(out),
          "--workers", "2", "--chunk-size", "7"])
    applied = out.read_text(encoding="utf-8")
    assert applied.replace("@@ ", "") == text, "removing the BPE marks must restore the text"
    assert "@@ " in applied, "some words should be split"
    assert len(applied.splitlines()) == 40


def test_joint_codes_cover_both_languages(tmp_path):
    he = write(tmp_path / "he", "שָׁלוֹם שָׁלוֹם\n" * 5)
    en = write(tmp_path / "en", "peace peace\n" * 5)
    codes = tmp_path / "codes"
    main(["learn", "--input", he, en, "--codes", str(codes), "--merges", "100"])
    learned = codes.read_text(encoding="utf-8")
    assert "ש" in learned and "p" in learned, learned


def test_missing_input_exits_with_message(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["learn", "--input", str(tmp_path / "nope"), "--codes", str(tmp_path / "c"),
              "--merges", "10"])
    assert exit_info.value.code == 1
    assert "nope: no such file" in capsys.readouterr().err
