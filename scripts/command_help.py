#!/usr/bin/env python3
"""Write docs/commands.md: every installed ``xlpe-*`` command's ``--help``, as the command
prints it. The help text is the one source of each command's options and defaults; the page
is its copy, and ``--check`` (what the test runs) says which commands' help it no longer shows.

    scripts/command_help.py [--check] [--page FILE]

Each command runs in this process with ``--help`` at a fixed width of 100 columns, in the
order setup.py lists them. Exit 1 with --check when the page differs, naming the commands.
"""
import argparse
import contextlib
import importlib.metadata
import io
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "commands.md"
COLUMNS = "100"
HEADER = """# Commands

Every command the package installs, with its `--help` as it prints it: options, defaults and
what each writes. In a checkout, `data_prep/prepare-corpus.sh`, `examples/train.sh` and
`examples/evaluate.sh` run `xlpe-prepare`, `xlpe-train` and `xlpe-evaluate` under their own
names. This page is written by `scripts/command_help.py` from the commands themselves, and a
test fails when it differs from them.
"""


def commands():
    """``(name, entry point)`` of every console script of the installed package, in
    setup.py's order."""
    return [(entry.name, entry) for entry in importlib.metadata.distribution(
        "xlpe-fairseq").entry_points if entry.group == "console_scripts"]


def help_text(name, entry):
    """What ``name --help`` prints."""
    main = entry.load()
    out = io.StringIO()
    saved_argv = sys.argv
    sys.argv = [name, "--help"]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                main()
            except SystemExit as done:
                if done.code not in (0, None):
                    raise RuntimeError(f"{name} --help exited {done.code}:\n{out.getvalue()}")
    finally:
        sys.argv = saved_argv
    return out.getvalue().rstrip() + "\n"


def sections():
    """``{name: its section of the page}``."""
    os.environ["COLUMNS"] = COLUMNS
    return {name: section(name, help_text(name, entry)) for name, entry in commands()}


def section(name, text):
    return f"## {name}\n\n```\n{text}```\n"


def page(parts):
    return "\n".join([HEADER, *parts.values()])


def stale(parts, text):
    """The commands whose section the page ``text`` does not hold as it is now."""
    return [name for name, section in parts.items() if section not in text]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare instead of writing; exit 1 naming the stale commands")
    parser.add_argument("--page", default=str(PAGE), help="the page (default: docs/commands.md)")
    args = parser.parse_args(argv)
    parts = sections()
    path = Path(args.page)
    if args.check:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        behind = stale(parts, text)
        if behind or text != page(parts):
            print(f"{path} is out of date ({', '.join(behind) or 'order or header'}): run "
                  f"scripts/command_help.py", file=sys.stderr)
            return 1
        return 0
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(page(parts), encoding="utf-8")
    os.replace(temporary, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
