"""setup.py's console commands, run in the test's process through the entry points setup.py
names: their list, a run's exit status and stderr, and their ``--help``."""
import argparse
import ast
import contextlib
import importlib
import io
import sys
from pathlib import Path

import pytest

SETUP_PY = Path(__file__).resolve().parents[2] / "setup.py"


def console_scripts():
    """``{command: "module:function"}`` of setup.py's CONSOLE_SCRIPTS."""
    tree = ast.parse(SETUP_PY.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "CONSOLE_SCRIPTS":
            entries = ast.literal_eval(node.value)
            return dict(tuple(part.strip() for part in entry.split("=")) for entry in entries)
    raise AssertionError(f"no CONSOLE_SCRIPTS in {SETUP_PY}")


def entry_point(entry):
    """The function ``"module:function"`` names."""
    module_name, function = entry.split(":")
    return getattr(importlib.import_module(module_name), function)


def run_main(command, argv):
    """``(exit status, stderr)`` of console command ``command`` run in this process (its
    stdout dropped)."""
    main = entry_point(console_scripts()[command])
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv) or 0
        except SystemExit as exit_info:
            status = exit_info.code or 0
    return status, err.getvalue()


def run_help(name, entry, args, monkeypatch):
    """Run the command's main in-process with ``args + --help``; return (parser, help text)."""
    main = entry_point(entry)
    shown = []
    print_help = argparse.ArgumentParser.print_help

    def recording_print_help(parser, file=None):
        shown.append(parser)
        print_help(parser, file)

    monkeypatch.setattr(argparse.ArgumentParser, "print_help", recording_print_help)
    monkeypatch.setattr(sys, "argv", [name, *args, "--help"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code in (0, None), f"{name} {' '.join(args)} --help exited {exit_info.value.code}"
    assert shown, f"{name} --help printed no argparse help"
    return shown[-1], out.getvalue()
