"""The line prepare-corpus.sh (and xlpe-study's report) ends with: the model to train and its
command, by how much of the gap between the source order and the alignment's the preorderer's
test positions close, calibrated on every study's measured InXL gain."""
import subprocess
import sys

import pytest

from xlpe_fairseq.preordering.advice import advice, gap_share, read_score_file
from xlpe_fairseq.preordering.metrics import format_scores

# The calibration table of docs/preorderer.md#which-model-the-advice-names: the preorderer's
# test positions (tau, FRS) and the source order's, against InXL's measured BLEU gain over the
# Transformer (p) on the same test set, and the model the advice must name.
STUDIES = [
    # pair, InXL setting, tau, FRS, monotone tau, monotone FRS, delta BLEU, p, model
    ("En→Tr", "default", 0.7918, 0.7421, 0.4647, 0.6741, +2.27, 0.002, "xlpe-inxl"),
    ("Ko→En", "default", 0.7014, 0.6783, 0.4752, 0.6380, +1.34, 0.002, "xlpe-inxl"),
    ("En→De", "default", 0.8999, 0.8943, 0.8638, 0.8801, +1.07, 0.14, "xlpe-inxl"),
    ("held-out SOV→SVO", "default", 0.7364, 0.7396, 0.5469, 0.7547, +2.97, 0.002, "xlpe-inxl"),
    ("Tr→En", "paper's", 0.7729, 0.7395, 0.4960, 0.6758, +3.74, 0.002, "xlpe-inxl"),
    ("En→Tr", "paper's", 0.7841, 0.7163, 0.4704, 0.6730, +1.24, 0.004, "xlpe-inxl"),
    ("Ko→En", "paper's", 0.7169, 0.6844, 0.4752, 0.6380, +0.97, 0.048, "xlpe-inxl"),
    ("En→De", "paper's", 0.8881, 0.8875, 0.8609, 0.8783, -0.08, 0.91, "xlpe-inxl"),
    # He→En's preorderer moved 0.37% of the test tokens: in effect the source order (its tau
    # was not recorded; valid's monotone tau and FRS stand in for both rows)
    ("He→En", "paper's", 0.8812, 0.6364, 0.8812, 0.6364, -0.30, 0.48, "re-both"),
]


def scores(tau, frs, monotone_tau, monotone_frs):
    def row(kendall, fuzzy):
        return {"kendall_tau": kendall, "fuzzy_reordering_score": fuzzy, "exact_match": 0.1,
                "sentences": 300}
    return format_scores(row(tau, frs), row(monotone_tau, monotone_frs))


def score_file(tmp_path, text):
    path = tmp_path / "preorderer.test.score"
    path.write_text(text + "\n", encoding="utf-8")
    return path


def line_for(tmp_path, tau, frs, monotone_tau, monotone_frs):
    return advice(read_score_file(score_file(tmp_path, scores(tau, frs, monotone_tau,
                                                              monotone_frs))))


@pytest.mark.parametrize("pair, setting, tau, frs, mono_tau, mono_frs, gain, p, model", STUDIES,
                         ids=[f"{row[0]} ({row[1]})" for row in STUDIES])
def test_each_study_gets_the_model_its_measured_gain_supports(
        tmp_path, pair, setting, tau, frs, mono_tau, mono_frs, gain, p, model):
    line = line_for(tmp_path, tau, frs, mono_tau, mono_frs)
    command = f"xlpe-train {model} OUT/data-bin CHECKPOINT_DIR"
    assert line.startswith(f"advice: train {model}: {command}; "), (
        f"{pair} (InXL {gain:+.2f} BLEU, p {p}) should be told to train {model}:\n{line}")
    if p < 0.05 and gain > 0:
        assert "unlikely to help" not in line and "small gain at most" not in line, (
            f"InXL gained {gain:+.2f} BLEU (p {p}) on {pair}, yet:\n{line}")


def test_the_held_out_pair_is_not_vetoed_by_an_frs_below_the_source_order(tmp_path):
    """tau closed 42% of the gap, FRS fell below the source order's, InXL gained +2.97 BLEU."""
    line = line_for(tmp_path, 0.7364, 0.7396, 0.5469, 0.7547)
    assert "close 42% of the way" in line and "FRS 0.7396 against 0.7547" in line, line
    assert "1 to 4 BLEU" in line


def test_a_small_share_names_xlpe_inxl_with_a_small_gain_and_re_both_beside_it(tmp_path):
    line = line_for(tmp_path, 0.8999, 0.8943, 0.8638, 0.8801)  # En→De at the default: 27%
    assert "expect a small gain at most" in line and "close 27% of the way" in line, line
    assert "re-both needs no preorderer" in line


def test_a_preorderer_no_better_than_the_source_order_names_re_both(tmp_path):
    # the English->Chinese LibreOffice pair: tau a little above monotone, FRS below
    path = score_file(tmp_path, scores(0.7375, 0.6012, 0.7319, 0.6100))
    result = subprocess.run([sys.executable, "-m", "xlpe_fairseq.preordering.advice", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "advice: train re-both: xlpe-train re-both OUT/data-bin CHECKPOINT_DIR; XL PE "
        "is unlikely to help on this pair: the preorderer's test positions close only 2% of "
        "the way from the source order to the alignment's (Kendall's tau 0.7375 against "
        "0.7319 for the source order; FRS 0.6012 against 0.6100); a stronger preorderer "
        "(PREORDER_SEEDS, PREORDER_EPOCHS) may change that "
        "(docs/preorderer.md#which-model-the-advice-names)\n")


def test_positions_further_from_the_alignment_than_the_source_order_name_re_both(tmp_path):
    line = line_for(tmp_path, 0.60, 0.70, 0.65, 0.70)
    assert line.startswith("advice: train re-both: ") and "are no closer" in line, line


def test_monotone_alignments_leave_nothing_to_add(tmp_path):
    line = line_for(tmp_path, 1.0, 1.0, 1.0, 1.0)
    assert line.startswith("advice: train re-both: ") and "has no other order to add" in line


def test_the_thresholds_fall_between_the_studies_that_gained_and_those_that_did_not():
    """Every significant InXL gain lies above the upper threshold (35%), every pair level in
    BLEU below it."""
    shares = {row[:2]: gap_share({"hypothesis": {"kendall_tau": row[2]},
                                  "monotone": {"kendall_tau": row[4]}}) for row in STUDIES}
    gained = [shares[row[:2]] for row in STUDIES if row[7] < 0.05 and row[6] > 0]
    level = [shares[row[:2]] for row in STUDIES if row[7] >= 0.05]
    assert min(gained) >= 0.35 > max(level), (gained, level)


def test_the_recipe_fills_in_its_own_folder(tmp_path):
    (tmp_path / "data-bin").mkdir()
    path = score_file(tmp_path, scores(0.80, 0.75, 0.50, 0.70))
    result = subprocess.run([sys.executable, "-m", "xlpe_fairseq.preordering.advice", str(path)],
                            capture_output=True, text=True)
    assert result.stdout.startswith(
        f"advice: train xlpe-inxl: xlpe-train xlpe-inxl {tmp_path}/data-bin "
        "CHECKPOINT_DIR; "), result.stdout
    assert result.stdout.count("\n") == 1


def test_the_command_in_the_advice_runs_nothing_when_pasted(tmp_path):
    """OUT is quoted as one shell word: a name holding $(...) is a name, not a command."""
    out = tmp_path / "o'ut $(touch PWNED)"
    (out / "data-bin").mkdir(parents=True)
    path = score_file(out, scores(0.80, 0.75, 0.50, 0.70))
    line = subprocess.run([sys.executable, "-m", "xlpe_fairseq.preordering.advice", str(path)],
                          capture_output=True, text=True).stdout
    command = line.split(": ", 2)[2].split(";")[0]
    pasted = subprocess.run(["bash", "-c", f"xlpe-train() {{ printf '%s\\n' \"$@\"; }}; {command}"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert pasted.stdout.splitlines() == ["xlpe-inxl", f"{out}/data-bin", "CHECKPOINT_DIR"], (
        command, pasted.stderr)
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("text, message", [
    ("hypothesis 0.5 0.5 0.1", "no 'monotone' row"),
    ("hypothesis x 0.5 0.1\nmonotone 0.5 0.5 0.1", "line 1: expected a row"),
])
def test_a_file_that_is_not_a_score_table_is_one_line(tmp_path, text, message):
    result = subprocess.run([sys.executable, "-m", "xlpe_fairseq.preordering.advice",
                             str(score_file(tmp_path, text))], capture_output=True, text=True)
    assert result.returncode == 1 and message in result.stderr
    assert result.stderr.count("\n") == 1
