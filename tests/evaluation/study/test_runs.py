"""The options a run's checkpoint was trained with, and a row whose seeds differ in them."""
import json

import pytest

from xlpe_fairseq.evaluation.study.runs import row_options, trained_options
from xlpe_fairseq.io import InputError


def test_row_options_are_refused_where_seeds_differ_and_absent_in_older_results():
    options = {"model": {"name": "transformer_dpe", "dpe_layers": 2},
               "criterion": {"name": "c", "order_lambda": 0.5}}
    same = [{"options": options}, {"options": json.loads(json.dumps(options))}]
    assert row_options("dpe", [1, 2], same) == options
    assert row_options("dpe", [1, 2], [{"options": options}, {}]) is None, \
        "results written before options were recorded must still report"
    changed = json.loads(json.dumps(options))
    changed["criterion"]["order_lambda"] = 0.3
    changed["model"]["new_option"] = 1
    with pytest.raises(InputError, match=r"dpe: seeds 1 and 3 .*criterion\.order_lambda, "
                                         r"model\.new_option"):
        row_options("dpe", [1, 3], [{"options": options}, {"options": changed}])


def test_decoding_options_are_not_options_a_row_was_trained_with():
    """A seed trained after --preorderer-nbest existed has it in its checkpoint, an older seed
    does not; decoding choices must not make a row's seeds look differently trained."""
    state = {"cfg": {
        "model": {"_name": "transformer_xlpe", "xlpe_heads": 1},
        "task": {"_name": "translation_reorder", "reorder_noise": 0.1, "preorderer_nbest": 4,
                 "preorderer_nbest_weight": 0.5},
        "criterion": {"_name": "label_smoothed_cross_entropy_with_order"}}}
    task = trained_options(state)["task"]
    assert task["reorder_noise"] == 0.1, "a training option of the task must be recorded"
    assert "preorderer_nbest" not in task and "preorderer_nbest_weight" not in task, task
