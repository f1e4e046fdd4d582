"""Reading fairseq-train's log: the validation curve, DPE's order diagnostics and InXL's input
statistics."""
from xlpe_fairseq.evaluation.study.logs import (
    input_diagnostics,
    last_update,
    order_diagnostics,
    validation_curve,
)
from xlpe_fairseq.evaluation.study.report import input_diagnostics_text, order_diagnostics_text


def test_validation_curve_reads_fairseq_simple_log(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(
        "2026-11-23 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 7.5 | "
        "nll_loss 7.1 | ppl 137 | wps 100 | wpb 50 | bsz 4 | num_updates 3\n"
        "2026-11-23 | INFO | train | epoch 001 | loss 8.0 | num_updates 3\n"
        "2026-11-23 | INFO | valid | epoch 002 | valid on 'valid' subset | loss 6.25 | "
        "nll_loss 6.0 | ppl 64 | wps 100 | wpb 50 | bsz 4 | num_updates 6 | best_loss 6.25\n")
    assert validation_curve(log) == {3: 7.1, 6: 6.0}, "the NLL, which every model reports alike"


def test_last_update_is_the_logs_last_count_resumes_included(tmp_path):
    """What a second xlpe-study tells of a run in training: the last update its log gives, in
    interval lines, summaries and a resume's "@ N updates"."""
    log = tmp_path / "train.log"
    assert last_update(log) == 0, "no log yet: update 0"
    log.write_text("2026-11-23 | INFO | fairseq_cli.train | training on 1 devices (GPUs/TPUs)\n")
    assert last_update(log) == 0
    log.write_text(
        "2026-11-23 | INFO | train_inner | epoch 001:     40 / 120 loss=9.1, num_updates=40\n"
        "2026-11-23 | INFO | train | epoch 001 | loss 8.0 | num_updates 120\n"
        "2026-11-23 | INFO | fairseq.trainer | Loaded checkpoint ck/checkpoint_last.pt "
        "(epoch 2 @ 100 updates)\n")
    assert last_update(log) == 100, "a resume from update 100 is at update 100"


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


def test_input_diagnostics_read_the_last_interval_and_validation(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(
        "2026-11-28 | INFO | train_inner | epoch 001:     50 / 106 loss=12.9, nll_loss=12.8, "
        "xlpe_in_norm=7.15, xlpe_embed_norm=11.316, xlpe_saturated=0.0496, num_updates=50\n"
        "2026-11-28 | INFO | train_inner | epoch 001:    100 / 106 loss=11.0, nll_loss=10.8, "
        "xlpe_in_norm=7.5, xlpe_embed_norm=11.5, xlpe_saturated=0.125, num_updates=100\n"
        "2026-11-28 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 10.5 | "
        "nll_loss 10.2 | xlpe_in_norm 7.4 | xlpe_embed_norm 11.4 | xlpe_saturated 0.1 | "
        "num_updates 100\n")
    found = input_diagnostics(log)
    assert found["train"] == {"xlpe_in_norm": 7.5, "xlpe_embed_norm": 11.5,
                              "xlpe_saturated": 0.125, "num_updates": 100}, found
    assert found["valid"]["xlpe_saturated"] == 0.1
    assert order_diagnostics(log) == {}, "an InXL log has no order diagnostics"
    rows = [row for row in input_diagnostics_text({"xlpe-inxl": found}) if row.startswith("| xlpe")]
    assert rows == ["| xlpe-inxl | train | 7.50 | 11.50 | 12.5% |",
                    "| xlpe-inxl | valid | 7.40 | 11.40 | 10.0% |"], rows
    plain = tmp_path / "transformer.log"
    plain.write_text("2026-11-28 | INFO | valid | epoch 001 | valid on 'valid' subset | "
                     "nll_loss 9.0 | num_updates 100\n")
    assert input_diagnostics(plain) == {} and input_diagnostics_text({}) == []
