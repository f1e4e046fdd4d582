"""The dataset scripts' presets: every examples/train-NAME.sh names a recipe of the table and
every recipe has its script, and a script's operands name its corpus (the pair given or the
recipe's own), an empty one refused in one line."""
import re
from pathlib import Path

import pytest

from xlpe_fairseq.workflow.dataset_recipes import RECIPES, corpus_of_recipe
from xlpe_fairseq.workflow.script_options import Refused

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_every_dataset_script_has_its_recipe_and_every_recipe_its_script():
    named = {script.name: re.search(r"--recipe (\S+)", script.read_text())
             for script in EXAMPLES.glob("train-*.sh")}
    named = {script: found.group(1) for script, found in named.items() if found}
    assert set(named.values()) == set(RECIPES), named
    for script, recipe in named.items():
        assert script == f"train-{recipe}.sh", f"{script} runs the recipe {recipe}"


def test_the_operands_name_the_corpus():
    corpus, rest = corpus_of_recipe("train-iwslt14.sh", RECIPES["iwslt14"],
                                    ["de-en", "data/iwslt", "--model", "dpe"])
    assert (corpus.src, corpus.tgt, corpus.dataset) == ("de", "en", "iwslt14-de-en")
    assert corpus.data_bin == "data/iwslt/data-bin" and rest == ["--model", "dpe"]
    corpus, rest = corpus_of_recipe("train-wmt14-en-de.sh", RECIPES["wmt14-en-de"],
                                    ["data/wmt14"])
    assert (corpus.src, corpus.tgt, corpus.sizes) == ("en", "de", ("base", "big"))


@pytest.mark.parametrize("argv, message", [
    ([], "usage: train-iwslt14.sh PAIR DATA --model M [options]"),
    (["en-de", ""], "'' is not a DATA: an empty operand (an unset variable?)"),
])
def test_missing_or_empty_operands_are_one_line(argv, message):
    with pytest.raises(Refused) as refused:
        corpus_of_recipe("train-iwslt14.sh", RECIPES["iwslt14"], argv)
    assert refused.value.exit_status == 2 and str(refused.value) == message
