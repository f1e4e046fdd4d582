"""The line plot of the study and the robustness analyses."""
import subprocess
import sys

from xlpe_fairseq.evaluation.curves import markdown_table


def test_plot_after_importing_fairseq_prints_no_debug_log(tmp_path):
    # fairseq's task registry sets the root logger to DEBUG on import, as xlpe-study's report
    # does before it plots; a fresh process, since pytest owns this one's logging
    plot = tmp_path / "curves.png"
    result = subprocess.run(
        [sys.executable, "-c",
         "import fairseq.tasks\n"
         "from xlpe_fairseq.evaluation.curves import plot_curves\n"
         f"plot_curves({str(plot)!r}, {{'dpe': {{500: 7.8, 1000: 6.4}}}}, 'updates', 'valid')"],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert plot.stat().st_size > 0
    assert "DEBUG" not in result.stderr and "findfont" not in result.stderr, \
        "matplotlib's debug log reached the terminal:\n" + result.stderr[:1000]


def test_table_leaves_a_missing_point_blank():
    table = markdown_table({"a": {0.1: 10.0, 0.2: 9.5}, "b": {0.1: 11.0}}, "swapped")
    assert table.splitlines()[-1] == "| 0.2 | 9.50 |  |", table
