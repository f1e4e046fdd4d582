"""xlpe-reorder-ceiling: the oracle of one occurrence of a repeated source scored on another."""
import os
import subprocess
import sys

import pytest

from xlpe_fairseq.preordering import ceiling
from xlpe_fairseq.plugin_errors import ReorderFileError


def write_lines(path, rows):
    path.write_text("".join(" ".join(map(str, row)) + "\n" for row in rows))
    return str(path)


def test_pairs_are_ordered_and_within_groups_of_repeated_sources_of_two_or_more_tokens():
    sources = [["a", "b"], ["c"], ["a", "b"], ["c"], ["d", "e"], ["a", "b"]]
    pairs = ceiling.repeated_source_pairs(sources)
    assert sorted(pairs) == [(0, 2), (0, 5), (2, 0), (2, 5), (5, 0), (5, 2)], (
        "every ordered pair of the three 'a b' lines, and nothing from the one-token 'c' "
        "or the unrepeated 'd e'")


def test_a_source_repeated_many_times_gives_each_occurrence_a_bounded_number_of_partners():
    pairs = ceiling.repeated_source_pairs([["a", "b"]] * 20, partners=8)
    assert len(pairs) == 20 * 8, "linear in the occurrences, not quadratic"
    assert len(set(pairs)) == len(pairs) and all(a != b for a, b in pairs)
    predicted = sorted(b for _, b in pairs)
    assert predicted == sorted(list(range(20)) * 8), "every occurrence predicted 8 times"


def test_reading_keeps_only_repeated_lines_and_checks_every_line(tmp_path):
    source = write_lines(tmp_path / "train.en", [["a", "b"], ["c", "d"], ["a", "b"], ["e"]])
    reorder = write_lines(tmp_path / "train.reorder", [[1, 0], [0, 1], [0, 1], [0]])
    target = write_lines(tmp_path / "train.de", [["B", "A"], ["C", "D"], ["A", "B"], ["E"]])
    sources, positions, targets, total = ceiling.read_repeated(source, reorder, target)
    assert sources == [["a", "b"], ["a", "b"]] and total == 2
    assert positions == [[1, 0], [0, 1]] and targets == ["B A", "A B"]
    bad = write_lines(tmp_path / "bad.reorder", [[1, 0], [0, 1, 2], [0, 1], [0]])
    with pytest.raises(ReorderFileError, match="bad.reorder line 2"):
        ceiling.read_repeated(source, bad)


def test_many_repeats_are_scored_on_a_bounded_stable_set_of_whole_groups(tmp_path):
    """A corpus of many repeats (here every source three times) is read up to
    --max-repeated lines, whole groups of one source, the same ones in every process."""
    rows = [[f"w{k}", f"x{k}"] for k in range(100)] * 3
    source = write_lines(tmp_path / "train.en", rows)
    reorder = write_lines(tmp_path / "train.reorder", [[1, 0]] * 300)
    sources, _, _, total = ceiling.read_repeated(source, reorder, max_lines=31)
    assert total == 300 and len(sources) == 30, (total, len(sources))
    counts = {tuple(s): sources.count(s) for s in sources}
    assert set(counts.values()) == {3}, "a group of one source is kept whole or not at all"
    again = subprocess.run(
        [sys.executable, "-c", "import sys; from xlpe_fairseq.preordering import ceiling; "
         "print(sorted(map(' '.join, ceiling.read_repeated(sys.argv[1], sys.argv[2], "
         "max_lines=31)[0])))", source, reorder],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "7"})
    assert again.stdout.strip() == str(sorted(map(" ".join, sources))), \
        "another process (another string hash seed) chose other groups"


def test_the_report_says_when_it_scored_a_sample(tmp_path, capsys):
    rows = [[f"w{k}", f"x{k}"] for k in range(50)] * 2
    source = write_lines(tmp_path / "train.en", rows)
    reorder = write_lines(tmp_path / "train.reorder", [[1, 0]] * 100)
    ceiling.main(["--source", source, "--reorder", reorder, "--max-repeated", "10"])
    assert capsys.readouterr().out.startswith(
        "on 10 of the 100 lines whose source repeats (--max-repeated 10)\n")
    ceiling.main(["--source", source, "--reorder", reorder])
    assert capsys.readouterr().out.startswith("repeated sources"), "no note without a sample"


def test_agreeing_oracles_close_the_whole_gap_and_disagreeing_ones_none_of_it():
    agreeing = ceiling.copy_agreement([[1, 0], [1, 0]], [(0, 1), (1, 0)])
    assert agreeing["copy"]["kendall_tau"] == 1.0
    assert agreeing["monotone"]["kendall_tau"] == -1.0
    assert agreeing["gap_closed"] == 1.0
    # one translation keeps the order, the other swaps: copying either is always wrong
    disagreeing = ceiling.copy_agreement([[0, 1], [1, 0]], [(0, 1), (1, 0)])
    assert disagreeing["copy"]["kendall_tau"] == -1.0
    assert disagreeing["monotone"]["kendall_tau"] == 0.0
    assert disagreeing["gap_closed"] == -1.0


def test_no_gap_when_every_oracle_is_monotone():
    assert ceiling.copy_agreement([[0, 1], [0, 1]], [(0, 1), (1, 0)])["gap_closed"] is None


def test_report_splits_by_source_length_and_by_target():
    sources = [["a", "b"]] * 3 + [list("cdefghi")] * 2
    positions = [[1, 0], [1, 0], [0, 1], [6, 0, 1, 2, 3, 4, 5], [6, 0, 1, 2, 3, 4, 5]]
    targets = ["B A", "B A", "A B", "x", "y"]
    rows = dict(ceiling.ceiling_report(sources, positions, targets, short_length=6))
    assert rows["all"]["pairs"] == 8
    assert rows["2-6 tokens"]["pairs"] == 6 and rows[">6 tokens"]["pairs"] == 2
    assert rows[">6 tokens"]["gap_closed"] == 1.0, "identical long oracles: the copy is exact"
    assert rows["same target"]["pairs"] == 2 and rows["same target"]["gap_closed"] == 1.0
    # other targets: four short pairs whose copies never match, two long ones that do
    assert rows["other target"]["pairs"] == 6
    assert rows["other target"]["copy"]["exact_match"] == pytest.approx(2 / 6)


def test_command_prints_the_table(tmp_path, capsys):
    source = write_lines(tmp_path / "train.en", [["a", "b"], ["a", "b"], ["c", "d"]])
    reorder = write_lines(tmp_path / "train.reorder", [[1, 0], [1, 0], [0, 1]])
    target = write_lines(tmp_path / "train.de", [["B", "A"], ["B", "A"], ["C", "D"]])
    ceiling.main(["--source", source, "--reorder", reorder, "--target", target])
    report = capsys.readouterr().out
    row = next(line for line in report.splitlines() if line.startswith("all"))
    assert row.split()[1:5] == ["2", "1.0000", "-1.0000", "100%"], report
    assert "same target" in report and "other target" not in report, report
    assert report.rstrip().splitlines()[-1].startswith("gap closed: "), \
        "the table must end with how to read its 'gap closed' column (a negative share too)"


def test_command_says_so_when_no_source_repeats(tmp_path, capsys):
    source = write_lines(tmp_path / "train.en", [["a", "b"], ["c", "d"]])
    reorder = write_lines(tmp_path / "train.reorder", [[1, 0], [0, 1]])
    ceiling.main(["--source", source, "--reorder", reorder])
    assert "no source of two or more tokens occurs twice" in capsys.readouterr().out


@pytest.mark.parametrize("reorder_rows, target_rows, fragments", [
    ([[1, 0]], None, ["train.reorder", "differ in length"]),
    ([[1, 0], [0, 1, 2]], None, ["train.reorder", "line 2"]),
    ([[1, 0], [0, 1]], [["A"]], ["train.de", "differ in length"]),
])
def test_bad_input_exits_1_naming_the_file(tmp_path, capsys, reorder_rows, target_rows,
                                           fragments):
    source = write_lines(tmp_path / "train.en", [["a", "b"], ["a", "b"]])
    argv = ["--source", source, "--reorder", write_lines(tmp_path / "train.reorder", reorder_rows)]
    if target_rows is not None:
        argv += ["--target", write_lines(tmp_path / "train.de", target_rows)]
    with pytest.raises(SystemExit) as exit_info:
        ceiling.main(argv)
    assert exit_info.value.code == 1
    message = capsys.readouterr().err
    assert all(fragment in message for fragment in fragments), message


def test_missing_file_exits_1(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        ceiling.main(["--source", str(tmp_path / "absent.en"), "--reorder",
                      str(tmp_path / "absent.reorder")])
    assert exit_info.value.code == 1
    assert "absent.en" in capsys.readouterr().err
