"""Random option values through the shell entry points: data_prep/prepare-corpus.sh (its
options and environment settings), examples/train.sh and examples/evaluate.sh.

Each example gives one to three options hostile or fitting values (0, negative, NaN,
infinite, huge, not a number, empty, leading zeros, codes that are paths). The rule
(docs/input-rules.md): a value the option does not take is one line naming it, exit 2, and
nothing is written; otherwise the script goes on with the value as given (leading zeros
dropped). No training or decoding runs: fairseq's commands the scripts run are the stubs of
tests/support/workflow_stubs.py (its checkpoints hold settings and no weights), and
prepare-corpus.sh is given a
raw folder without a corpus, so that it stops at its first look at the data, after every
check. ``EXAMPLES`` counts what ran (shown in the suite's summary).
"""
import os
import re
import subprocess
import tempfile
from pathlib import Path

from hypothesis import event, given, strategies as st

from fuzz.fuzz_settings import fuzz_settings
from support.workflow_stubs import prepared, stubs, trained_checkpoint
from xlpe_fairseq.io import default_workers

ROOT = Path(__file__).resolve().parents[2]
PREPARE = ROOT / "data_prep" / "prepare-corpus.sh"
TRAIN = ROOT / "examples" / "train.sh"
EVALUATE = ROOT / "examples" / "evaluate.sh"
EXAMPLES = {"prepare-corpus.sh": 0, "train.sh": 0, "evaluate.sh": 0}

HOSTILE = ["0", "1", "2", "3", "08", "-1", "-5", "0.5", "1.5", ".5", "5e-4", "nan", "inf",
           "-inf", "1e400", "1e-400", "1e3", "99999999999999999999", "999999999999999999",
           "abc", "", " 3 ", "0x10", "+1", "\u0663"]
LANGUAGES = ["en", "de", "pt-BR", "sr_Latn", "zz", "", "../x", "a b", "e", "en.txt", "-en"]
CORES = default_workers()


# the values each kind of option takes, as docs/input-rules.md states them
def whole(low, high=None):
    def takes(value):
        if not re.fullmatch(r"[0-9]+", value) or len(value.lstrip("0")) > 18:
            return False
        return int(value) >= low and (high is None or int(value) <= high)
    return takes


def number(positive=False):
    """Digits with a sign (without one where the number must be above 0), finite, of
    magnitude below 1e300."""
    sign = "" if positive else "[-+]?"
    def takes(value):
        if not re.fullmatch(sign + r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", value):
            return False
        return abs(float(value)) < 1e300 and (not positive or float(value) > 0)
    return takes


def choice(*choices):
    return lambda value: value in choices


def language(value):
    return re.fullmatch(r"[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*", value) is not None


def decimal(value):
    """A whole number as the scripts pass it on: without leading zeros."""
    return str(int(value))


def options(table):
    """Lists of one to three distinct ``(option, value)`` of ``table`` (option: (takes,
    values)), each value as often one the option takes as any of its values."""
    def value(name):
        takes, values = table[name]
        return st.one_of(st.sampled_from([v for v in values if takes(v)]),
                         st.sampled_from(values))

    pair = st.sampled_from(sorted(table)).flatmap(
        lambda name: st.tuples(st.just(name), value(name)))
    return st.lists(pair, min_size=1, max_size=3, unique_by=lambda p: p[0])


def run(script, args, env=None, cwd=None):
    result = subprocess.run(["bash", str(script), *map(str, args)], capture_output=True,
                            text=True, env={**os.environ, **(env or {})}, cwd=cwd)
    EXAMPLES[script.name] += 1
    event(f"exit {result.returncode}")
    return result


def snapshot(folder):
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*"))


def assert_one_line(result, status, names):
    """Exit ``status``, one line on stderr that names one of ``names``, nothing on stdout."""
    assert result.returncode == status, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert any(name in result.stderr for name in names), (names, result.stderr)


def logged_calls(folder):
    """The stubs' log, each argument followed by a space."""
    return (folder / "calls").read_text().replace("\n", " \n")


PREPARE_OPTIONS = {
    "--merges": (whole(1), HOSTILE),
    "--max-len": (whole(1), HOSTILE),
    "--workers": (whole(1, CORES), HOSTILE),
    "--src": (language, LANGUAGES),
    "--tgt": (language, LANGUAGES),
}
# an empty setting is an unset one: its default
SETTINGS = {
    "PREORDER_SEEDS": (whole(1, 999), HOSTILE + ["999", "1000"]),
    "PREORDER_BATCH_TOKENS": (whole(1, 9999999), HOSTILE),
    "PREORDER_MAX_LENGTH": (whole(1, 9999999), HOSTILE),
    "PREORDER_THREADS": (whole(1, CORES), HOSTILE),
    "PREORDER_JOBS": (whole(1, CORES), HOSTILE),
    "PREORDER_SAMPLE": (whole(0), HOSTILE + ["0", "35000"]),
    "WORKERS": (whole(1, CORES), HOSTILE),
    "PREORDER_EPOCHS": (whole(1), HOSTILE),
    "PREORDER_FOLDS": (whole(2), HOSTILE),
    "LOWERCASE": (whole(0, 1), HOSTILE),
    "JOINED_DICT": (whole(0, 1), HOSTILE),
    "MERGES": (whole(1), HOSTILE),
    "MAX_LEN": (whole(1), HOSTILE),
    "PREORDER_SECONDS": (number(positive=True), HOSTILE),
    "PREORDER_LOSS": (choice("pairwise", "structured", "both"),
                      ["pairwise", "structured", "both", "hinge", "", "0"]),
    "XLPE_TRAIN_POSITIONS": (choice("oracle", "predicted", "mixed"),
                             ["oracle", "predicted", "mixed", "btg", "", "1"]),
}


@fuzz_settings(60)
@given(options(PREPARE_OPTIONS), options(SETTINGS))
def test_prepare_corpus_checks_every_value_before_any_work(given_options, settings):
    """Accepted values reach the first look at the data (a raw folder without train files,
    exit 1); a refused one is named in one line, exit 2; nothing is written either way."""
    argv = {"--src": "fr", "--tgt": "en", **dict(given_options)}
    env = dict(settings)
    refused = [name for name, value in given_options if not PREPARE_OPTIONS[name][0](value)]
    # an option wins over its variable; an empty variable is unset
    overridden = {"--merges": "MERGES", "--max-len": "MAX_LEN", "--workers": "WORKERS"}
    ignored = {overridden[name] for name in argv if name in overridden}
    refused_settings = [name for name, value in settings
                        if value and name not in ignored and not SETTINGS[name][0](value)]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        (folder / "raw").mkdir()
        args = [word for pair in argv.items() for word in pair] + [folder / "raw", folder / "out"]
        result = run(PREPARE, args, env={**{name: "" for name in SETTINGS}, **env}, cwd=folder)
        # the options, then the two languages together, then the settings
        if refused:
            assert_one_line(result, 2, refused)
        elif argv["--src"] == argv["--tgt"]:
            assert_one_line(result, 2, ["--src and --tgt are both"])
        elif refused_settings:
            assert_one_line(result, 2, refused_settings)
        else:
            assert_one_line(result, 1, [f"{folder / 'raw'}/train.{argv['--src']} and"])
        assert snapshot(folder) == ["raw"], "nothing is written"


TRAIN_OPTIONS = {
    "--max-update": (whole(1), HOSTILE),
    "--warmup": (whole(1), HOSTILE),
    "--max-tokens": (whole(1), HOSTILE),
    "--update-freq": (whole(1), HOSTILE),
    "--gpus": (whole(1, 1), ["1", "01", "2", "0", "-1", "abc", ""]),
    "--lr": (number(positive=True), HOSTILE),
    "--size": (choice("small", "base", "big"), ["small", "base", "big", "huge", ""]),
    "--schedule": (choice("dpe-iwslt", "dpe", "re", "xlpe"),
                   ["dpe-iwslt", "dpe", "re", "xlpe", "bogus", ""]),
    "--save-dir": (bool, ["ck2", ""]),
}
# where fairseq-train gets each value
TRAIN_FLAGS = {"--max-update": "--max-update", "--warmup": "--warmup-updates",
               "--max-tokens": "--max-tokens", "--update-freq": "--update-freq",
               "--gpus": "--distributed-world-size", "--lr": "--lr"}


@fuzz_settings(40)
@given(options(TRAIN_OPTIONS))
def test_train_passes_on_the_values_it_takes_and_refuses_the_others(given_options):
    """(--gpus above 1 asks torch for the machine's GPUs: one run in a few, on a machine
    without them refused)"""
    refused = [name for name, value in given_options if not TRAIN_OPTIONS[name][0](value)]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        out, env = prepared(folder / "out"), stubs(folder)
        before = snapshot(folder)
        args = ["transformer", out / "data-bin", folder / "ck",
                *[word for pair in given_options for word in pair]]
        result = run(TRAIN, args, env=env, cwd=folder)
        if refused:
            assert_one_line(result, 2, refused)
            assert snapshot(folder) == before, "nothing is written"
            return
        assert result.returncode == 0, result.stderr
        call = logged_calls(folder)
        assert call.startswith("fairseq-train ") and call.count("\n") == 1, call
        for name, value in given_options:
            if name in TRAIN_FLAGS:
                passed = value if name == "--lr" else decimal(value)
                assert f" {TRAIN_FLAGS[name]} {passed} " in call, (name, value, call)
        save_dir = folder / dict(given_options).get("--save-dir", "ck")
        assert (save_dir / "schedule.env").read_text().endswith("TRAINED_MODEL=transformer\n")


EVALUATE_OPTIONS = {
    "--average": (whole(0), HOSTILE),
    "--beam": (whole(1), HOSTILE),
    "--lenpen": (number(), HOSTILE + ["-0.5", "+2"]),
    "--subset": (choice("test", "valid"), ["test", "valid", "train", "bogus", ""]),
    "--schedule": (choice("dpe-iwslt", "dpe", "re", "xlpe"), ["dpe", "re", "xlpe", "x", ""]),
    "--model": (choice("transformer", "dpe", "xlpe-inxl", "rope"),
                ["transformer", "dpe", "rope", "bogus", ""]),
    "--tokenize": (choice("13a", "intl", "none", "zh", "char"),
                   ["13a", "intl", "zh", "bogus", "", "13A"]),
}


@fuzz_settings(30)
@given(options(EVALUATE_OPTIONS))
def test_evaluate_passes_on_the_values_it_takes_and_refuses_the_others(given_options):
    """Against a folder that trained transformer and saved 3 numbered checkpoints: another
    --model, or an --average above 3, is refused in one line too."""
    chosen = dict(given_options)
    refused = [name for name, value in given_options if not EVALUATE_OPTIONS[name][0](value)]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        out, env = prepared(folder / "out"), stubs(folder)
        trained = folder / "ck"
        trained.mkdir()
        (trained / "schedule.env").write_text("SCHEDULE=dpe-iwslt\nTRAINED_MODEL=transformer\n")
        for name in ("checkpoint_1_10.pt", "checkpoint_2_20.pt", "checkpoint_3_30.pt",
                     "checkpoint_best.pt"):
            trained_checkpoint(trained / name, "transformer")
        before = snapshot(folder)
        args = [out, trained, "--cpu", *[word for pair in given_options for word in pair]]
        result = run(EVALUATE, args, env=env, cwd=folder)
        if refused:
            assert_one_line(result, 2, refused)
        elif chosen.get("--model", "transformer") != "transformer":
            assert_one_line(result, 2, ["holds a transformer model"])
        elif "--average" in chosen and int(chosen["--average"]) > 3:
            assert_one_line(result, 1, ["--average 3"])
        else:
            assert result.returncode == 0, result.stderr
            calls = logged_calls(folder)
            if "--beam" in chosen:
                assert f" --beam {decimal(chosen['--beam'])} " in calls, calls
            if "--lenpen" in chosen:
                assert f" --lenpen {chosen['--lenpen']} " in calls, calls
            if "--tokenize" in chosen:
                scores = (trained / f"bleu-{chosen.get('--subset', 'test')}.json").read_text()
                assert f"tok:{chosen['--tokenize']}|" in scores, scores
            subset = chosen.get("--subset", "test")
            assert f" --gen-subset {subset} " in calls
            assert (trained / f"generate-{subset}.out").exists()
            return
        assert snapshot(folder) == before, "nothing is written"
