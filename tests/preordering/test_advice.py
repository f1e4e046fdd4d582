"""The line prepare-corpus.sh ends with: does the preorderer beat the source order, and what
that means for XL PE."""
import subprocess
import sys

import pytest

from xlpe_fairseq.preordering.advice import advice, read_score_file
from xlpe_fairseq.preordering.metrics import format_scores


def scores(tau, frs, monotone_tau, monotone_frs):
    def row(kendall, fuzzy):
        return {"kendall_tau": kendall, "fuzzy_reordering_score": fuzzy, "exact_match": 0.1,
                "sentences": 300}
    return format_scores(row(tau, frs), row(monotone_tau, monotone_frs))


def score_file(tmp_path, text):
    path = tmp_path / "preorderer.test.score"
    path.write_text(text + "\n", encoding="utf-8")
    return path


def test_a_preorderer_no_better_than_the_source_order_advises_against_xlpe(tmp_path):
    # the English->Chinese LibreOffice pair: tau a little above monotone, FRS below
    path = score_file(tmp_path, scores(0.7375, 0.6012, 0.7319, 0.6100))
    result = subprocess.run([sys.executable, "-m", "xlpe_fairseq.preordering.advice", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "advice: XL PE is unlikely to help on this pair: the preorderer's test positions are no "
        "better than the source order (Kendall's tau 0.7375 against 0.7319 for the source "
        "order, FRS 0.6012 against 0.6100); try re-both or dpe, or a stronger preorderer "
        "(PREORDER_SEEDS, PREORDER_EPOCHS; docs/preorderer.md)\n")


def test_a_preorderer_that_beats_the_source_order_says_how_far(tmp_path):
    line = advice(read_score_file(score_file(tmp_path, scores(0.80, 0.70, 0.60, 0.50))))
    assert "beat the source order" in line and "50% of the way" in line
    assert line.endswith("XL PE can help on this pair")


def test_monotone_alignments_leave_nothing_to_add(tmp_path):
    line = advice(read_score_file(score_file(tmp_path, scores(1.0, 1.0, 1.0, 1.0))))
    assert "has no other order to add" in line


@pytest.mark.parametrize("text, message", [
    ("hypothesis 0.5 0.5 0.1", "no 'monotone' row"),
    ("hypothesis x 0.5 0.1\nmonotone 0.5 0.5 0.1", "line 1: expected a row"),
])
def test_a_file_that_is_not_a_score_table_is_one_line(tmp_path, text, message):
    result = subprocess.run([sys.executable, "-m", "xlpe_fairseq.preordering.advice",
                             str(score_file(tmp_path, text))], capture_output=True, text=True)
    assert result.returncode == 1 and message in result.stderr
    assert result.stderr.count("\n") == 1
