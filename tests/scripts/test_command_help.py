"""scripts/command_help.py: docs/commands.md shows every installed command's --help as the
command prints it, so the help and the reference page have one source."""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "command_help.py"


def load_script():
    spec = importlib.util.spec_from_file_location("command_help", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                    reason="the page is written on the pinned Python 3.11, whose argparse "
                           "lays help out as it shows")
def test_the_commands_page_is_every_commands_help_as_printed():
    result = subprocess.run([sys.executable, SCRIPT, "--check"], capture_output=True,
                            text=True)
    assert result.returncode == 0, (
        f"docs/commands.md differs from the commands' --help (exit {result.returncode}):\n"
        f"{result.stderr[-2000:]}")


def test_a_changed_help_is_named_as_stale():
    script = load_script()
    parts = {"xlpe-a": script.section("xlpe-a", "usage: xlpe-a\n"),
             "xlpe-b": script.section("xlpe-b", "usage: xlpe-b [--n N]\n")}
    page = script.page(parts)
    assert script.stale(parts, page) == []
    changed = {**parts, "xlpe-b": script.section("xlpe-b", "usage: xlpe-b [--n N] [--m M]\n")}
    assert script.stale(changed, page) == ["xlpe-b"]


def test_the_page_is_written_with_every_installed_command(tmp_path):
    """The page lists the commands of the installed package, each under its own heading."""
    script = load_script()
    names = [name for name, _ in script.commands()]
    assert "xlpe-prepare" in names and "xlpe-train" in names and "xlpe-evaluate" in names, names
    page = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    assert [line[3:] for line in page.splitlines() if line.startswith("## ")] == names
