"""What preorderer a corpus gets when no PREORDER_* variable is set: data_prep/pipeline.sh's
preorderer_defaults by the number of training pairs, each setting overridable."""
import os
import subprocess
from pathlib import Path

import pytest

DATA_PREP = Path(__file__).resolve().parents[2] / "data_prep"
SETTINGS = ("PREORDER_LOSS", "PREORDER_SEEDS", "PREORDER_EPOCHS", "PREORDER_BATCH_TOKENS",
            "PREORDER_MAX_LENGTH")


def defaults(pairs, **given):
    """The settings and xlpe-preorder-train options pipeline_settings + preorderer_defaults
    choose for ``pairs`` training pairs, with the variables ``given`` set."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PREORDER_")}
    env.update(given)
    script = (f"source {DATA_PREP}/lib.sh; source {DATA_PREP}/pipeline.sh; "
              f"pipeline_settings && preorderer_defaults {pairs} && "
              + "echo " + " ".join(f"${name}" for name in SETTINGS)
              + ' && echo "${PREORDER_TRAINING[*]}"')
    result = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    values, training = result.stdout.splitlines()
    return dict(zip(SETTINGS, values.split())), training, result.stderr


@pytest.mark.parametrize("pairs, expected", [
    (12253, ("structured", "4", "9", "2000", "150")),
    (33941, ("structured", "4", "9", "2000", "150")),
    (35000, ("structured", "4", "9", "2000", "150")),
    (35001, ("structured", "3", "9", "2000", "150")),
    (50000, ("structured", "3", "9", "2000", "150")),
    (50001, ("pairwise", "1", "5", "4000", "200")),
    (4500000, ("pairwise", "1", "5", "4000", "200")),
])
def test_the_corpus_size_chooses_the_preorderer(pairs, expected):
    chosen, training, said = defaults(pairs)
    assert tuple(chosen[name] for name in SETTINGS) == expected, \
        f"{pairs} training pairs got {chosen}, the documented defaults are {expected}"
    assert (f"--epochs {expected[2]} " in training and f"--loss {expected[0]} " in training
            and f"--batch-tokens {expected[3]} " in training
            and f"--max-train-length {expected[4]} " in training), training
    assert f"preorderer for {pairs} training pairs: {expected[1]} seed(s)" in said, said


def test_a_set_variable_wins_and_the_rest_follow_the_corpus():
    chosen, training, said = defaults(18395, PREORDER_LOSS="pairwise", PREORDER_SEEDS="1")
    assert chosen == {"PREORDER_LOSS": "pairwise", "PREORDER_SEEDS": "1", "PREORDER_EPOCHS": "9",
                      "PREORDER_BATCH_TOKENS": "2000", "PREORDER_MAX_LENGTH": "150"}, chosen
    assert "--loss pairwise" in training and "1 seed(s), pairwise loss" in said


def test_an_unknown_loss_is_refused_before_any_work():
    env = {key: value for key, value in os.environ.items() if not key.startswith("PREORDER_")}
    result = subprocess.run(
        ["bash", "-c", f"source {DATA_PREP}/lib.sh; source {DATA_PREP}/pipeline.sh; "
                       "pipeline_settings"],
        env={**env, "PREORDER_LOSS": "hinge"}, capture_output=True, text=True)
    assert result.returncode == 2, result
    assert result.stderr.strip() == \
        "PREORDER_LOSS must be one of: pairwise structured both, not 'hinge'", result.stderr
