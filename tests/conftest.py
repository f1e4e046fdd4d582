"""The suite's tiers, and what every test finds set up.

Tiers (markers, registered in pytest.ini; docs/testing.md):

- ``unit``: one module's behaviour on tiny synthetic data, in this process (a fairseq data-bin
  or a single command at most besides). The fast tier (``make test-fast``, ``pytest -m unit``).
- ``integration``: commands and fairseq's own commands end to end (tiny trainings and
  decodings), the shell entry points with stub commands, what real processes print as they
  start and do on signals.
- ``system``: a whole preparation, training and evaluation as a user runs them (xlpe-prepare
  and the recipes, the README's first try, a study on a SLURM cluster, an installation into
  another environment).

A test's tier is its own marker if it has one, else its file's below, else ``unit``: a new
test file is a unit test unless it is listed here (or marks itself).

The shell entry points under test find the plugin's commands and Python as a user's shell
does, on PATH: the environment the suite runs in goes first, and before it the stand-ins for
Python and those commands that start them from a warm server (``warm_python``), which is also
what ``sys.executable`` names in the test processes.
"""
import ast
import os
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from warm_python import REAL_PYTHON, SERVER_VARIABLE, stand_ins, start_server

os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

TESTS = Path(__file__).resolve().parent
TIERS = ("unit", "integration", "system")
FILE_TIERS = {
    "integration": [
        "data/test_prefetch_shutdown.py",
        "evaluation/study/test_cli.py",
        "evaluation/study/test_profiles.py",
        "evaluation/test_attention_alignment.py",
        "evaluation/test_attention_heatmap.py",
        "evaluation/test_compare.py",
        "evaluation/test_curves.py",
        "evaluation/test_noise_attack.py",
        "evaluation/test_swap_robustness.py",
        "evaluation/test_translate.py",
        "fuzz/test_fuzz_scripts.py",
        "io/test_checkpoints.py",
        "io/test_command.py",
        "io/test_stage_usage.py",
        "preordering/test_advice.py",
        "preprocessing/test_length_filter.py",
        "preprocessing/test_split_corpus.py",
        "recipes/test_average_checkpoints.py",
        "recipes/test_demo_models.py",
        "recipes/test_example_options.py",
        "recipes/test_position_sets.py",
        "recipes/test_script_help.py",
        "recipes/test_shell_entry_points.py",
        "recipes/test_training_scripts.py",
        "scripts/test_command_help.py",
        "scripts/test_gpu_lease.py",
        "tasks/test_data_bin_files.py",
        "tasks/test_data_provenance.py",
        "test_cli_end_to_end.py",
        "test_fairseq_support.py",
        "test_hostile_input.py",
        "test_plugin_errors.py",
        "test_plugin_registration.py",
        "test_quiet_warnings.py",
        "test_warm_python.py",
        "workflow/test_evaluate.py",
        "workflow/test_schedules.py",
        "workflow/test_train.py",
    ],
    "system": [
        "evaluation/study/test_slurm.py",
        "recipes/test_multi_node_training.py",
        "recipes/test_recipes_offline.py",
        "scripts/test_benchmark.py",
        "scripts/test_host_stack.py",
        "test_own_corpus.py",
        "test_provenance_chain.py",
        "test_two_pass_recipe.py",
        "workflow/test_bible_recipe.py",
        "workflow/test_prepare.py",
    ],
}
TIER_OF_FILE = {path: tier for tier, paths in FILE_TIERS.items() for path in paths}
STAND_INS = pytest.StashKey[Path]()


def pytest_configure(config):
    stale = [path for path in TIER_OF_FILE if not (TESTS / path).is_file()]
    if stale:
        raise pytest.UsageError(f"tests/conftest.py gives a tier to files that are not there: "
                                f"{', '.join(stale)}")
    broken = broken_file_rules()
    if broken:
        raise pytest.UsageError("tests/ breaks its rules (docs/testing.md):\n" + "\n".join(broken))
    if not (getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput")):
        # a process that runs tests (not pytest-xdist's controller), before test modules read
        # the environment and sys.executable; the server imports while the tests are collected
        os.environ[SERVER_VARIABLE] = start_server()
        config.stash[STAND_INS] = stand_ins(tempfile.mkdtemp(prefix="xlpe-commands-"))
        os.environ["PATH"] = f"{config.stash[STAND_INS]}{os.pathsep}{os.environ['PATH']}"
        sys.executable = str(config.stash[STAND_INS] / "python")


def pytest_unconfigure(config):
    if STAND_INS in config.stash:
        sys.executable = REAL_PYTHON
        shutil.rmtree(config.stash[STAND_INS], ignore_errors=True)


def broken_file_rules():
    """A test module imported by another file, a helper that skips at its import: either would
    make collecting or skipping one file change another."""
    broken = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        name = path.relative_to(TESTS).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            broken += [f"{name} imports the test module {module} (move what it shares to "
                       "tests/support)" for module in modules
                       if module.rpartition(".")[2].startswith("test_")]
        if not path.name.startswith("test_") and any(map(skips, tree.body)):
            broken.append(f"{name}, a helper, skips at its import: every importer would be skipped")
    return broken


def skips(statement):
    """Whether a module-level statement calls pytest's skip or importorskip."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    return any(isinstance(node, ast.Call)
               and ast.unparse(node.func).rpartition(".")[2] in ("skip", "importorskip")
               for node in ast.walk(statement))


def tier(item):
    own = [marker.name for marker in item.iter_markers() if marker.name in TIERS]
    if own:
        return own[0]
    return TIER_OF_FILE.get(Path(item.path).relative_to(TESTS).as_posix(), "unit")


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        if not any(item.get_closest_marker(name) for name in TIERS):
            item.add_marker(tier(item))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """What a test module counts in its ``EXAMPLES`` (``{kind: count}``, the examples its
    property-based tests ran) goes into the test's report, for the summary."""
    examples = getattr(item.module, "EXAMPLES", None)
    before = dict(examples) if isinstance(examples, dict) else None
    yield
    if before is not None:
        for kind, count in examples.items():
            if count != before.get(kind, 0):
                item.user_properties.append((f"examples {item.path.name} {kind}",
                                             count - before.get(kind, 0)))


def pytest_terminal_summary(terminalreporter):
    """Tests run and their time by tier (summed over the workers: not the wall time), and the
    examples each fuzz module ran."""
    outcomes, seconds, examples = defaultdict(Counter), Counter(), defaultdict(Counter)
    for reports in terminalreporter.stats.values():
        for report in reports:
            if not hasattr(report, "when"):
                continue
            name = next((t for t in TIERS if t in report.keywords), None)
            if name is None:
                continue
            seconds[name] += report.duration
            if report.when == "call" or (report.when == "setup" and not report.passed):
                outcomes[name][report.outcome] += 1
            for key, count in report.user_properties:
                if key.startswith("examples "):
                    _, module, kind = key.split(" ", 2)
                    examples[module][kind] += count
    if outcomes:
        terminalreporter.write_sep("-", "tiers")
        for name in TIERS:
            if outcomes[name]:
                counts = ", ".join(f"{n} {o}" for o, n in sorted(outcomes[name].items()))
                terminalreporter.write_line(f"{name}: {counts} ({seconds[name]:.0f} s of tests)")
    if examples:
        terminalreporter.write_sep("-", "examples run")
        for module, counts in sorted(examples.items()):
            terminalreporter.write_line(
                f"{module}: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
