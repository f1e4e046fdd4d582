"""Option values through every numeric option of every console command and of the plugin's
fairseq options: 0, negative, NaN, infinite, huge, not a number, and values in range.

The rule (docs/input-rules.md): a value out of range is a usage error, one line naming the
option, exit 2, nothing written; a value in range goes on to the work (here: to the next
missing argument, also exit 2, or to a run on a tiny input, exit 0 with the right output).
Every numeric option must take an ``io.options.Number``: a bare ``int`` or ``float`` would
let NaN, infinities and out-of-range values through.

Parsers and model builds run in this process (milliseconds an example); only a sample of
accepted values runs a command on real input. ``EXAMPLES`` counts what ran (shown in the
suite's summary).
"""
import argparse
import contextlib
import os
import tempfile

import pytest
from fairseq.models import ARCH_MODEL_REGISTRY
from hypothesis import given, strategies as st

from fuzz.fuzz_settings import fuzz_settings
from models.model_builders import build_model, make_task
from support.console_scripts import console_scripts, run_help, run_main
from support.input_rule import check_rule, files
from xlpe_fairseq.io import Number, OptionError, count_lines, default_workers

VALUES = ["0", "1", "2", "-1", "-5", "0.5", "1.5", "nan", "-nan", "inf", "-inf", "1e400",
          "99999999999999999999", "4294967296", "abc", "", " 3 ", "0x10", "1e3", "٣"]
EXAMPLES = {"parsers": 0, "runs": 0, "plugin": 0}


def parsers():
    """``(command, words before the options, parser)`` of every console command and
    subcommand, found through its --help (as test_help_defaults does)."""
    found = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name, entry in console_scripts().items():
            parser, _ = run_help(name, entry, [], monkeypatch)
            found.append((name, entry, [], parser))
            for action in parser._actions:
                if isinstance(action, argparse._SubParsersAction):
                    for command in action.choices:
                        sub, _ = run_help(name, entry, [command], monkeypatch)
                        found.append((name, entry, [command], sub))
    return found


def numeric(parser):
    """The options of ``parser`` that take numbers (a Number, or a bare int or float)."""
    return [action for action in parser._actions if action.option_strings
            and (isinstance(action.type, Number) or action.type in (int, float))]


PARSERS = parsers()
OPTIONS = [(name, entry, words, action) for name, entry, words, parser in PARSERS
           for action in numeric(parser)]


def test_every_numeric_option_takes_a_checked_number():
    bare = [f"{name} {' '.join(words)} {action.option_strings[0]}".replace("  ", " ")
            for name, _, words, action in OPTIONS if not isinstance(action.type, Number)]
    assert not bare, "numeric options without a range (use io.options.Number):\n" + \
        "\n".join(bare)
    assert len(OPTIONS) > 40, f"only {len(OPTIONS)} numeric options found"


@pytest.mark.parametrize("name, entry, words, action", OPTIONS,
                         ids=[f"{n}{''.join(' ' + w for w in ws)} {a.option_strings[0]}"
                              for n, _, ws, a in OPTIONS])
def test_a_value_out_of_range_is_one_line_exit_2_and_writes_nothing(name, entry, words,
                                                                    action):
    option = action.option_strings[0]
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        for value in VALUES:
            status, stderr = run_main(name, [*words, f"{option}={value}"])
            EXAMPLES["parsers"] += 1
            assert status == 2, f"{name} {option}={value!r} exited {status}:\n{stderr}"
            assert "Traceback" not in stderr, stderr
            last = stderr.strip().splitlines()[-1]
            assert last.startswith(f"{name} ") or last.startswith(f"{name}: error: "), stderr
            accepted = _accepts(action.type, value)
            if not accepted:
                assert f"argument {option}" in last and "expected" in last, \
                    f"{name} {option}={value!r}: {last}"
            else:  # parsing went on to the arguments still missing
                assert f"argument {option}" not in last, f"{name} {option}={value!r}: {last}"
            assert os.listdir(folder) == [], f"{name} {option}={value!r} wrote {os.listdir()}"


def _accepts(kind, value):
    try:
        kind(value)
    except argparse.ArgumentTypeError:
        return False
    return True


# accepted values at the edges of their ranges, run on a tiny input: exit 0, right output
TINY = ["a b c", "b a", "c"]


@fuzz_settings(6)
@given(st.sampled_from(["1", str(default_workers())]),
       st.sampled_from(["1", "2", str(2 ** 63 - 1)]))
def test_accepted_values_at_the_edges_run(workers, chunk_size):
    argv = ["--workers", workers, "--chunk-size", chunk_size]
    data = "".join(line + "\n" for line in TINY).encode()
    with files(**{"in.en": data}) as folder:
        status = check_rule("xlpe-tokenize", folder,
                            ["--lang", "en", "--input", str(folder / "in.en"), "--output",
                             str(folder / "tok.en"), *argv], {"tok.en": "in.en"})
        EXAMPLES["runs"] += 1
        assert status == 0
        assert count_lines(folder / "tok.en") == len(TINY)


@pytest.mark.parametrize("samples", ["1", "2000"])
def test_bootstrap_samples_at_the_edges_run(samples):
    generated = "".join(f"H-{k}\t-0.5\t{line}\n" for k, line in enumerate(TINY)).encode()
    reference = "".join(line + "\n" for line in TINY).encode()
    with files(**{"gen.out": generated, "ref.en": reference}) as folder:
        status, stderr = run_main("xlpe-compare", [
            "--generated", f"a={folder / 'gen.out'}", "--generated", f"b={folder / 'gen.out'}",
            "--reference", str(folder / "ref.en"), "--target-lang", "en",
            "--bootstrap-samples", samples, "--seed", "4294967295", "--json",
            str(folder / "c.json")])
        EXAMPLES["runs"] += 1
        assert status == 0, stderr
        assert (folder / "c.json").exists()


# the plugin's numeric fairseq options: each model's own (add_args), the task's and the
# criterion's (dataclass fields); a model is built with each value (a tiny one)
PLUGIN_MODELS = {
    "transformer_relpe": "transformer_relpe_iwslt_de_en",
    "transformer_rope": "transformer_rope_iwslt_de_en",
    "transformer_t5_bias": "transformer_t5_bias_iwslt_de_en",
    "transformer_dpe": "transformer_dpe_iwslt_de_en",
    "transformer_xlpe": "transformer_xlpe_iwslt_de_en",
}
PLUGIN_VALUES = [0, 1, 2, 4, -1, -5, 0.5, float("nan"), float("inf"), float("-inf"), 1e30,
                 10 ** 12]


def model_options(model):
    parser = argparse.ArgumentParser()
    ARCH_MODEL_REGISTRY[model].add_args(parser)
    own = {action.dest: action.type for action in parser._actions
           if action.type in (int, float) and action.dest not in DEFAULTS_OF_FAIRSEQ}
    return own


# options fairseq's TransformerModel.add_args defines itself (fairseq checks them, or not)
DEFAULTS_OF_FAIRSEQ = {action.dest for action in (lambda p: (
    ARCH_MODEL_REGISTRY["transformer"].add_args(p), p)[1])(argparse.ArgumentParser())._actions}
MODEL_OPTIONS = [(model, dest, kind) for model in PLUGIN_MODELS
                 for dest, kind in model_options(model).items()]


def test_the_plugin_models_have_numeric_options():
    assert {dest for _, dest, _ in MODEL_OPTIONS} >= {
        "max_relative_positions", "rotary_base", "relative_attention_num_buckets",
        "relative_attention_max_distance", "xlpe_heads", "dpe_layers"}, MODEL_OPTIONS


@pytest.mark.parametrize("model, dest, kind", MODEL_OPTIONS,
                         ids=[f"{m} --{d.replace('_', '-')}" for m, d, _ in MODEL_OPTIONS])
def test_a_plugin_model_option_builds_or_is_one_option_error(model, dest, kind):
    for value in PLUGIN_VALUES:
        # fairseq's argparse turns the text into kind: a float option may hold anything,
        # an int option only whole numbers
        if kind is int and not (isinstance(value, int) or value.is_integer()):
            continue
        value = kind(value) if isinstance(value, float) and value.is_integer() else value
        EXAMPLES["plugin"] += 1
        try:
            built, _ = build_model(PLUGIN_MODELS[model], **{dest: value})
        except OptionError as err:
            flag = "--" + dest.replace("_", "-")
            assert "\n" not in str(err) and flag in str(err), f"{flag}={value}: {err}"
            continue
        for parameter in built.parameters():
            assert parameter.isfinite().all(), f"--{dest} {value}: non-finite weights"


@pytest.mark.parametrize("option", ["order_lambda"])
def test_the_criterions_numeric_options(option):
    from xlpe_fairseq.criterions.label_smoothed_cross_entropy_with_order import (
        LabelSmoothedCrossEntropyWithOrderCriterion,
    )

    for value in PLUGIN_VALUES:
        EXAMPLES["plugin"] += 1
        try:
            LabelSmoothedCrossEntropyWithOrderCriterion(make_task(), False, 0.1, value)
        except OptionError as err:
            assert "--order-lambda" in str(err)
            continue
        assert 0 <= value <= 1, f"--order-lambda {value} accepted"


@pytest.mark.parametrize("option", ["reorder_noise", "preorderer_nbest",
                                    "preorderer_nbest_weight"])
def test_the_tasks_numeric_options(option):
    from fairseq.data import Dictionary

    from xlpe_fairseq.tasks.translation_reorder import (
        TranslationReorderConfig,
        TranslationReorderTask,
    )

    for value in PLUGIN_VALUES:
        EXAMPLES["plugin"] += 1
        cfg = TranslationReorderConfig()
        setattr(cfg, option, value)
        try:
            TranslationReorderTask(cfg, Dictionary(), Dictionary())
        except OptionError as err:
            assert "--" + option.replace("_", "-") in str(err) and "\n" not in str(err)
            continue
        assert value == value and abs(value) != float("inf"), f"--{option} {value} accepted"
