"""BPE learning (Sennrich et al. 2016) and application through fastBPE."""
import collections
import random

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


def merges_by_definition(word_counts, num_merges, min_frequency):
    """Sennrich et al.'s procedure as stated, every pair recounted from scratch each merge."""
    words = {tuple(word[:-1]) + (word[-1] + "</w>",): count for word, count in word_counts.items()}
    merges = []
    while len(merges) < num_merges:
        counts = collections.Counter()
        for symbols, count in words.items():
            for pair in zip(symbols, symbols[1:]):
                counts[pair] += count
        if not counts:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))
        if counts[pair] < min_frequency:
            break
        merges.append((pair[0], pair[1], counts[pair]))
        merged = {}
        for symbols, count in words.items():
            out, k = [], 0
            while k < len(symbols):
                if symbols[k:k + 2] == pair:
                    out.append(pair[0] + pair[1])
                    k += 2
                else:
                    out.append(symbols[k])
                    k += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + count
        words = merged
    return merges


@pytest.mark.parametrize("alphabet", ["ab", "abcdé中"])
def test_incremental_learning_matches_the_definition(alphabet):
    # runs of one letter (aaaa, abab) are where counting only next to a merge can go wrong
    rng = random.Random(alphabet)
    for trial in range(150):
        counts = collections.Counter()
        for _ in range(rng.randint(1, 60)):
            word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10)))
            counts[word] += rng.randint(1, 5)
        num_merges, min_frequency = rng.randint(1, 60), rng.randint(1, 3)
        expected = merges_by_definition(counts, num_merges, min_frequency)
        assert learn_bpe(counts, num_merges, min_frequency) == expected, \
            f"trial {trial}: {dict(counts)}, {num_merges} merges, min {min_frequency}"


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


@pytest.mark.parametrize("workers", ["1", "2"])
def test_apply_prints_no_fastbpe_loading_lines(tmp_path, capfd, workers):
    """fastBPE's C++ announces every load of the codes on stderr, once per worker."""
    corpus = write(tmp_path / "train.tok.en", "the newest lower widest lowest\n" * 5)
    codes = write(tmp_path / "codes", "l o 5\nlo w 5\n")
    main(["apply", "--codes", codes, "--input", corpus, "--output", str(tmp_path / "out"),
          "--workers", workers])
    err = capfd.readouterr().err
    assert "codes" not in err, f"xlpe-bpe apply printed:\n{err}"


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


def run_bpe(argv, capsys):
    """``(exit status, stderr)`` of xlpe-bpe."""
    try:
        main(argv)
        status = 0
    except SystemExit as exit_info:
        status = exit_info.code
    return status, capsys.readouterr().err


@pytest.mark.parametrize("bad_line", ["", "   ", "low", "l o", "l o 3 4", "l o x", "l\to 3",
                                      "l  o 3", "l o ³"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_malformed_codes_line_is_named_before_fastbpe_reads_it(tmp_path, capsys, bad_line,
                                                                  workers):
    # fastBPE crashed (segmentation fault) on a line of fewer than three fields, and the
    # worker pool then waited for it forever
    codes = tmp_path / "codes"
    codes.write_text(f"e s 9\n{bad_line}\n", encoding="utf-8")
    source = tmp_path / "tok.en"
    source.write_text("lowest newest\n" * 4, encoding="utf-8")
    status, err = run_bpe(["apply", "--codes", str(codes), "--input", str(source), "--output",
                           str(tmp_path / "out.en"), "--workers", workers, "--chunk-size", "1"],
                          capsys)
    assert status == 1, err
    assert err.splitlines()[-1].startswith(
        f"xlpe-bpe: error: {codes} line 2: expected a merge 'left right count'"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["codes", "tok.en"]


@pytest.mark.parametrize("text, message", [
    ("e s 9\ne s 3\n", "{codes} line 2: the merge 'e' 's' occurs twice"),
    ("", "{codes}: no merges"),
])
def test_repeated_merges_and_empty_codes_are_refused(tmp_path, capsys, text, message):
    codes = tmp_path / "codes"
    codes.write_text(text, encoding="utf-8")
    source = tmp_path / "tok.en"
    source.write_text("newest\n", encoding="utf-8")
    status, err = run_bpe(["apply", "--codes", str(codes), "--input", str(source),
                           "--output", str(tmp_path / "out.en")], capsys)
    assert status == 1 and message.format(codes=codes) in err, err
    assert not (tmp_path / "out.en").exists()


def test_codes_with_a_byte_order_mark_and_crlf_apply_like_clean_codes(tmp_path, capsys):
    source = tmp_path / "tok.en"
    source.write_text("lowest newest\n", encoding="utf-8")
    outputs = []
    for name, text in (("clean", "e s 9\nes t</w> 9\n"),
                       ("windows", "\ufeffe s 9\r\nes t</w> 9\r\n")):
        codes = tmp_path / name
        codes.write_bytes(text.encode())
        output = tmp_path / f"{name}.out"
        status, err = run_bpe(["apply", "--codes", str(codes), "--input", str(source),
                               "--output", str(output)], capsys)
        assert status == 0, err
        outputs.append(output.read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1] == "l@@ o@@ w@@ est n@@ e@@ w@@ est\n", outputs


@pytest.mark.parametrize("text", ["", "\n\n", "ab cd\n"])
def test_learning_from_no_words_or_no_repeated_pair_writes_no_codes(tmp_path, capsys, text):
    source = tmp_path / "tok.en"
    source.write_text(text, encoding="utf-8")
    status, err = run_bpe(["learn", "--input", str(source), "--codes", str(tmp_path / "codes"),
                           "--merges", "10"], capsys)
    assert status == 1, err
    assert "no words" in err or "no pair of symbols occurs" in err, err
    assert not (tmp_path / "codes").exists()
