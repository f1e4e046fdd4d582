"""Reading fairseq-train's log: the validation curve and DPE's order diagnostics."""
from xlpe_fairseq.evaluation.study.logs import order_diagnostics, validation_curve
from xlpe_fairseq.evaluation.study.report import order_diagnostics_text


def test_validation_curve_reads_fairseq_simple_log(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(
        "2026-11-23 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 7.5 | "
        "nll_loss 7.1 | ppl 137 | wps 100 | wpb 50 | bsz 4 | num_updates 3\n"
        "2026-11-23 | INFO | train | epoch 001 | loss 8.0 | num_updates 3\n"
        "2026-11-23 | INFO | valid | epoch 002 | valid on 'valid' subset | loss 6.25 | "
        "nll_loss 6.0 | ppl 64 | wps 100 | wpb 50 | bsz 4 | num_updates 6 | best_loss 6.25\n")
    assert validation_curve(log) == {3: 7.1, 6: 6.0}, "the NLL, which every model reports alike"


def test_order_diagnostics_of_a_log_written_before_the_pairwise_share(tmp_path):
    """Logs of runs trained before the criterion logged ``order_nearer_target`` still report
    the other diagnostics; the report shows the missing share as a dash."""
    common = ("order_loss 0.0813 | order_own_loss 0.1094 | order_moved_loss 0.1327 | "
              "order_moved_own_loss 0.205 | order_nearest_target 0.066 | order_nearest_own 0.543")
    line = ("2026-11-20 10:00:00 | INFO | valid | epoch 005 | valid on 'valid' subset | loss 3.1 | "
            "nll_loss 5.7 | {} | ppl 52 | num_updates 1000\n")
    old_log, new_log = tmp_path / "old.log", tmp_path / "new.log"
    old_log.write_text(line.format(common))
    new_log.write_text(line.format(common + " | order_nearer_target 0.25"))
    before = order_diagnostics(old_log)["valid"]
    assert "order_nearer_target" not in before and before["order_nearest_own"] == 0.543, before
    after = order_diagnostics(new_log)["valid"]
    assert after["order_nearer_target"] == 0.25, after
    rows = [row for row in order_diagnostics_text({"dpe": {"valid": before},
                                                   "dpe-new": {"valid": after}})
            if row.startswith("| dpe")]
    assert rows[0].endswith("| 54.3% | – |"), rows[0]
    assert rows[1].endswith("| 54.3% | 25.0% |"), rows[1]
