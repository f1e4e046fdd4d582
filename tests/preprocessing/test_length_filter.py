"""The training pairs' length filter: a pair is judged against the corpus's own length ratio
(a Japanese side with twice English's tokens keeps its pairs), misaligned pairs still go, the
run says what went and why, and a filter that leaves nothing fails in one line."""
import os
import subprocess
import sys

import pytest

from xlpe_fairseq.preprocessing.length_filter import (
    LengthRule,
    filter_pairs,
    main,
    typical_ratio,
)


def write_pairs(tmp_path, pairs):
    source, target = tmp_path / "train.full.en", tmp_path / "train.full.ja"
    source.write_text("".join(" ".join(["w"] * ns) + "\n" for ns, _ in pairs), encoding="utf-8")
    target.write_text("".join(" ".join(["t"] * nt) + "\n" for _, nt in pairs), encoding="utf-8")
    return source, target


def run_filter(tmp_path, pairs, *options):
    source, target = write_pairs(tmp_path, pairs)
    outputs = [tmp_path / "train.en", tmp_path / "train.ja"]
    result = subprocess.run(
        [sys.executable, "-m", "xlpe_fairseq.preprocessing.length_filter", "--source", source,
         "--target", target, "--out-source", outputs[0], "--out-target", outputs[1],
         "--max-len", "50", "--prog", "prepare-corpus.sh", *options],
        capture_output=True, text=True)
    return result, outputs


def lengths(path):
    return [len(line.split()) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_target_with_twice_the_tokens_keeps_its_pairs(tmp_path):
    """The fixed 1.5 rule keeps none of these pairs; the corpus's ratio (2) keeps them all,
    and the run says so without a warning."""
    pairs = [(n, 2 * n + (n % 3) - 1) for n in range(3, 24)] * 3
    result, (source, target) = run_filter(tmp_path, pairs)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(f"== kept {len(pairs)} of {len(pairs)} training pairs")
    assert "warning" not in result.stderr
    assert list(zip(lengths(source), lengths(target))) == pairs


def test_the_fixed_rule_that_keeps_nothing_fails_in_one_line_and_writes_nothing(tmp_path):
    pairs = [(n, 2 * n) for n in range(3, 24)]
    result, outputs = run_filter(tmp_path, pairs, "--ratio-rule", "fixed")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("prepare-corpus.sh: error: ")
    assert "train.full.en" in result.stderr and "train.full.ja" in result.stderr
    assert f"none of the {len(pairs)} training pairs is left" in result.stderr
    assert f"{len(pairs)} with a length ratio over 1.5" in result.stderr
    assert not any(path.exists() for path in outputs)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")], "no temporaries"


def test_misaligned_pairs_and_long_pairs_go_with_a_warning_naming_each_reason(tmp_path):
    good = [(n, 2 * n) for n in range(4, 25)] * 3
    misaligned = [(4, 30), (30, 4), (25, 6)]
    too_long = [(60, 100)]
    empty = [(0, 3)]
    result, (source, target) = run_filter(tmp_path, good + misaligned + too_long + empty)
    assert result.returncode == 0, result.stderr
    total = len(good) + 5
    kept_line, warning = result.stderr.splitlines()
    assert kept_line.startswith(f"== kept {len(good)} of {total} training pairs")
    assert warning == (
        f"prepare-corpus.sh: warning: dropped 5 of {total} training pairs "
        f"({5 / total:.1%}): 1 longer than 50 tokens, 1 with an empty side, 3 with a length "
        "ratio more than 1.5 times off the corpus's 2.00 target tokens a source token")
    assert list(zip(lengths(source), lengths(target))) == good


def test_the_fixed_rule_is_moses_clean_corpus_n():
    rule = LengthRule(max_len=10, max_ratio=1.5)
    assert [rule.reason(ns, nt) for ns, nt in [(2, 3), (2, 4), (3, 2), (4, 2), (11, 10),
                                               (0, 1)]] == \
        [None, "ratio", None, "ratio", "long", "empty"]


def test_the_typical_ratio_is_a_median_that_misaligned_pairs_do_not_move():
    histogram = {(10, 14): 60, (20, 27): 30, (5, 60): 20, (60, 5): 20}
    assert typical_ratio(histogram) == pytest.approx(1.4)


def test_short_pairs_get_slack_long_ones_do_not():
    rule = LengthRule(max_len=100, max_ratio=1.5, ratio=1.4, slack=5)
    assert rule.reason(1, 4) is None, "a one-word label of four target tokens stays"
    assert rule.reason(4, 20) == "ratio"
    assert rule.reason(20, 28) is None and rule.reason(20, 50) == "ratio"


def test_outputs_are_written_atomically_in_one_process(tmp_path):
    source, target = write_pairs(tmp_path, [(3, 4), (5, 6)])
    kept, total, _, dropped = filter_pairs(str(source), str(target), str(tmp_path / "a"),
                                           str(tmp_path / "b"), 10)
    assert (kept, total, sum(dropped.values())) == (2, 2, 0)
    assert lengths(tmp_path / "a") == [3, 5] and lengths(tmp_path / "b") == [4, 6]


def test_files_of_different_lengths_are_refused(tmp_path, capsys):
    source, target = write_pairs(tmp_path, [(3, 4), (5, 6)])
    target.write_text("t\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["--source", str(source), "--target", str(target), "--out-source",
              str(tmp_path / "a"), "--out-target", str(tmp_path / "b"), "--max-len", "10"])
    assert exit_info.value.code == 1
    assert "parallel files differ in length" in capsys.readouterr().err


@pytest.mark.parametrize("ratio", ["1", "0.5", "nan", "x"])
def test_a_ratio_of_at_most_one_is_a_usage_error(tmp_path, ratio, capsys):
    source, target = write_pairs(tmp_path, [(3, 4)])
    with pytest.raises(SystemExit) as exit_info:
        main(["--source", str(source), "--target", str(target), "--out-source",
              str(tmp_path / "a"), "--out-target", str(tmp_path / "b"), "--max-len", "10",
              "--max-ratio", ratio])
    assert exit_info.value.code == 2
    assert "--max-ratio" in capsys.readouterr().err


def clean_train(out, **settings):
    """xlpe-prepare's clean_train step on OUT/tok/train.full.{en,ja}, MAX_LEN 50, with the
    rule the dataset recipes give it unless told (RATIO_RULE fixed, MAX_RATIO 1.5)."""
    chosen = {"MAX_LEN": "50", "RATIO_RULE": "fixed", "MAX_RATIO": "1.5", **settings}
    script = ("import sys\n"
              "from xlpe_fairseq.io import run_command\n"
              "from xlpe_fairseq.workflow.pipeline import clean_train\n"
              "from xlpe_fairseq.workflow.steps import Steps\n"
              f"run_command(lambda: clean_train(Steps('prepare-corpus.sh'), {chosen!r}, "
              f"{str(out)!r}, 'en', 'ja'), 'prepare-corpus.sh')\n")
    env = {**os.environ,
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True)


def test_the_pipeline_keeps_moses_rule_unless_told_and_reruns_when_the_rule_changes(tmp_path):
    (tmp_path / "tok").mkdir()
    write_pairs(tmp_path / "tok", [(n, 2 * n) for n in range(3, 20)] * 2)
    failed = clean_train(tmp_path)
    assert failed.returncode == 1 and "ratio within 1.5 of the fixed ratio" in failed.stderr
    assert "error: " in failed.stderr.splitlines()[-1], failed.stderr
    assert "mv: cannot stat" not in failed.stderr
    assert not (tmp_path / "tok" / "train.en").exists()
    kept = clean_train(tmp_path, RATIO_RULE="corpus")
    assert kept.returncode == 0, kept.stderr
    assert "== kept 34 of 34 training pairs (typical ratio 2.00" in kept.stderr
    assert "clean train: up to date" in clean_train(tmp_path, RATIO_RULE="corpus").stderr
    again = clean_train(tmp_path, RATIO_RULE="corpus", MAX_RATIO="3")
    assert "clean train: up to date" not in again.stderr and "within 3 of" in again.stderr
