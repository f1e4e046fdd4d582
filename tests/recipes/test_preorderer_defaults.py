"""What preorderer a corpus gets when no PREORDER_* variable is set: xlpe-prepare's
preorderer_defaults by the number of training pairs, each setting overridable."""
import os

import pytest

from xlpe_fairseq.preordering.train import build_parser
from xlpe_fairseq.workflow.preorderer_steps import (
    preorderer_training,
    sampling_settings,
    training_settings,
)
from xlpe_fairseq.workflow.prepare_settings import preorderer_defaults, settings_of
from xlpe_fairseq.workflow.script_options import Refused

SETTINGS = ("PREORDER_LOSS", "PREORDER_SEEDS", "PREORDER_EPOCHS", "PREORDER_BATCH_TOKENS",
            "PREORDER_MAX_LENGTH", "PREORDER_SAMPLE", "PREORDER_JOBS", "PREORDER_THREADS")
CORES = len(os.sched_getaffinity(0))


def defaults(pairs, **given):
    """The settings, xlpe-preorder-train options and summary line that xlpe-prepare chooses
    for ``pairs`` training pairs, with the variables ``given`` set."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PREORDER_")}
    env.update(given)
    settings = settings_of({"SRC": "en", "TGT": "de"}, env)
    said = preorderer_defaults(settings, pairs)
    # the options, a space, the sample options (none: the space ends the line)
    training = (f"{' '.join(preorderer_training(settings))} "
                f"{' '.join(settings['PREORDER_SAMPLING'])}")
    return {name: settings[name] for name in SETTINGS}, training, said


@pytest.mark.parametrize("pairs, expected", [
    (12253, ("structured", "4", "9", "2000", "150", "0")),
    (33941, ("structured", "4", "9", "2000", "150", "0")),
    (35000, ("structured", "4", "9", "2000", "150", "0")),
    (35001, ("structured", "3", "9", "2000", "150", "0")),
    (50000, ("structured", "3", "9", "2000", "150", "0")),
    (50001, ("structured", "4", "9", "2000", "150", "35000")),
    (4500000, ("structured", "4", "9", "2000", "150", "35000")),
    (20000000, ("structured", "4", "9", "2000", "150", "35000")),
])
def test_the_corpus_size_chooses_the_preorderer(pairs, expected):
    chosen, training, said = defaults(pairs)
    assert tuple(chosen[name] for name in SETTINGS[:6]) == expected, \
        f"{pairs} training pairs got {chosen}, the documented defaults are {expected}"
    assert (f"--epochs {expected[2]} " in training and f"--loss {expected[0]} " in training
            and f"--batch-tokens {expected[3]} " in training
            and f"--max-train-length {expected[4]} " in training), training
    assert f"preorderer for {pairs} training pairs: {expected[1]} seed(s)" in said, said


@pytest.mark.parametrize("pairs", [50001, 4500000, 20000000])
def test_a_large_corpus_trains_on_one_bounded_sample(pairs):
    """Above 50,000 pairs every member gets the same seeded sample of 35,000 pairs, so that
    the preorderer's cost does not grow with the corpus."""
    _, training, said = defaults(pairs)
    assert training.endswith(" --sample 35000 --sample-seed 1"), training
    assert f"trained on a sample of 35000 of the {pairs} pairs" in said, said


@pytest.mark.parametrize("pairs, sample", [(50000, "0"), (60000, "100000"), (60000, "0")])
def test_no_sample_option_where_it_would_keep_every_pair(pairs, sample):
    _, training, said = defaults(pairs, **({"PREORDER_SAMPLE": sample}))
    assert "--sample" not in training, training
    assert f"trained on all {pairs} pairs" in said, said


def test_a_chosen_sample_size_is_kept_at_any_size():
    chosen, training, said = defaults(20000, PREORDER_SAMPLE="5000")
    assert chosen["PREORDER_SAMPLE"] == "5000" and training.endswith(
        "--sample 5000 --sample-seed 1"), training


def test_members_train_side_by_side_one_thread_each():
    """One thread a member and as many members at once as there are cores: threads of one
    process stall beside other work on the same cores, separate processes do not."""
    chosen, training, said = defaults(18395)
    assert chosen["PREORDER_THREADS"] == "1" and "--threads 1 " in training, training
    assert chosen["PREORDER_JOBS"] == str(CORES), chosen
    assert f"{CORES} member(s) at a time of 1 thread(s)" in said, said


def test_threads_given_leave_the_cores_they_do_not_take_to_other_members():
    chosen, _, _ = defaults(18395, PREORDER_THREADS=str(CORES))
    assert chosen["PREORDER_JOBS"] == "1", chosen
    chosen, _, _ = defaults(18395, PREORDER_JOBS="1")
    assert (chosen["PREORDER_JOBS"], chosen["PREORDER_THREADS"]) == ("1", "1"), chosen


def test_a_set_variable_wins_and_the_rest_follow_the_corpus():
    chosen, training, said = defaults(18395, PREORDER_LOSS="pairwise", PREORDER_SEEDS="1")
    assert {name: chosen[name] for name in SETTINGS[:5]} == {
        "PREORDER_LOSS": "pairwise", "PREORDER_SEEDS": "1", "PREORDER_EPOCHS": "9",
        "PREORDER_BATCH_TOKENS": "2000", "PREORDER_MAX_LENGTH": "150"}, chosen
    assert "--loss pairwise" in training and "1 seed(s), pairwise loss" in said


def test_an_unknown_loss_is_refused_before_any_work():
    env = {key: value for key, value in os.environ.items() if not key.startswith("PREORDER_")}
    with pytest.raises(Refused) as refused:
        settings_of({"SRC": "en", "TGT": "de"}, {**env, "PREORDER_LOSS": "hinge"})
    assert refused.value.exit_status == 2
    assert str(refused.value) == "PREORDER_LOSS must be one of: pairwise structured both, not 'hinge'"


@pytest.mark.parametrize("pairs", [18395, 60000])
def test_a_member_is_called_with_the_values_of_the_options_its_settings_record(pairs):
    """The members train in the command's process, called with keywords; the record of their
    settings (OUT/preorderer.settings) holds xlpe-preorder-train's options: both say the
    same."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PREORDER_")}
    settings = settings_of({"SRC": "en", "TGT": "de"}, {**env, "PREORDER_SECONDS": "90.5"})
    preorderer_defaults(settings, pairs)
    options = build_parser().parse_args([*preorderer_training(settings),
                                         *settings["PREORDER_SAMPLING"], "--source", "S",
                                         "--reorder", "R", "--save", "P"])
    keywords = {**training_settings(settings), **sampling_settings(settings)}
    assert ("sample" in keywords) == (pairs > 50000), keywords
    assert keywords == {name: getattr(options, name) for name in keywords}, keywords
