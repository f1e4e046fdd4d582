"""Every console command's ``--help`` names the default of each option that has one."""
import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import xlpe_fairseq
from support.console_scripts import console_scripts, run_help
from xlpe_fairseq_cli import user_dir


def entries(help_text):
    """The help text of each option, keyed by its first line (where its flags are)."""
    chunks, current = [], None
    for line in help_text.splitlines():
        if re.match(r"^  \S", line):
            current = [line]
            chunks.append(current)
        elif current is not None and line.startswith("   "):
            current.append(line)
        else:
            current = None
    return [" ".join(" ".join(chunk).split()) for chunk in chunks]


def says_something(action):
    """A default worth showing: one of an option that takes a value, and not None."""
    return (action.nargs != 0 and action.default is not None
            and action.default is not False and action.default is not argparse.SUPPRESS)


def option_entry(action, help_text):
    flag = action.option_strings[0] if action.option_strings else action.metavar or action.dest
    entry = next((e for e in entries(help_text)
                  if re.match(rf"^{re.escape(flag)}(\W|$)", e)), None)
    assert entry is not None, f"option {flag} not found in the help:\n{help_text}"
    return flag, entry


def options(parser):
    return [action for action in parser._actions
            if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))]


def missing_defaults(parser, help_text):
    missing = []
    for action in options(parser):
        if not says_something(action):
            continue
        if not action.option_strings and action.nargs not in ("?", "*"):
            continue  # a required positional has no default to show
        flag, entry = option_entry(action, help_text)
        if "(default" not in entry:
            missing.append(f"{flag} (default {action.default!r}): {entry}")
    return missing


def flags_with_defaults(parser, help_text):
    """Flags (store_true, store_false, store_const) whose help shows a default: the default of
    a flag is the value it stands against, and --no-tokenize "(default: True)" reads as on."""
    shown = []
    for action in options(parser):
        if action.nargs == 0:
            flag, entry = option_entry(action, help_text)
            if f"(default: {action.default})" in entry:
                shown.append(entry)
    return shown


def every_help(name, entry, monkeypatch):
    """(subcommand or "", parser, help text) of the command and each of its subcommands."""
    parser, help_text = run_help(name, entry, [], monkeypatch)
    helps = [("", parser, help_text)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps += [(f"{command} ", *run_help(name, entry, [command], monkeypatch))
                      for command in action.choices]
    return helps


@pytest.mark.parametrize("name,entry", console_scripts().items(), ids=list(console_scripts()))
def test_help_shows_every_default(name, entry, monkeypatch):
    missing = [f"{command}{m}"
               for command, parser, help_text in every_help(name, entry, monkeypatch)
               for m in missing_defaults(parser, help_text)]
    assert not missing, f"{name} --help does not show these defaults:\n" + "\n".join(missing)


@pytest.mark.parametrize("name,entry", console_scripts().items(), ids=list(console_scripts()))
def test_help_shows_no_default_of_a_flag(name, entry, monkeypatch):
    shown = [f"{command}{e}"
             for command, parser, help_text in every_help(name, entry, monkeypatch)
             for e in flags_with_defaults(parser, help_text)]
    assert not shown, f"{name} --help shows a flag's default:\n" + "\n".join(shown)


def test_a_store_false_flag_shows_no_default(monkeypatch):
    _, help_text = run_help("xlpe-tokenize", "xlpe_fairseq.preprocessing.tokenize:main", [],
                            monkeypatch)
    entry = next(e for e in entries(help_text) if e.startswith("--no-tokenize"))
    assert "(default" not in entry, entry


def test_help_shows_the_value_itself(monkeypatch):
    parser, help_text = run_help("xlpe-preorder-train", "xlpe_fairseq.preordering.train:main", [],
                                 monkeypatch)
    epochs = next(e for e in entries(help_text) if e.startswith("--epochs"))
    assert f"(default: {parser.get_default('epochs')})" in epochs, epochs
    assert "(default: None)" not in help_text and "(default: False)" not in help_text, help_text


def test_user_dir_prints_the_installed_package(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the path must not depend on where it is asked from
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        user_dir.main([])
    printed = Path(out.getvalue().strip())
    assert printed.is_absolute(), f"xlpe-user-dir printed a relative path: {printed}"
    assert printed == Path(xlpe_fairseq.__file__).resolve().parent, printed
    assert (printed / "tasks").is_dir(), f"{printed} is not the plugin's folder"


def test_fairseq_loads_the_plugin_from_the_printed_path(tmp_path):
    """What fairseq-train --user-dir does with the path, from a folder outside the repository."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        user_dir.main([])
    check = ("import argparse, sys; from fairseq import utils; from fairseq.tasks import TASK_REGISTRY; "
             "utils.import_user_module(argparse.Namespace(user_dir=sys.argv[1])); "
             "assert 'translation_reorder' in TASK_REGISTRY, 'task not registered'")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", check, out.getvalue().strip()], cwd=tmp_path,
                            env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"--user-dir {out.getvalue().strip()} failed:\n{result.stderr}"
