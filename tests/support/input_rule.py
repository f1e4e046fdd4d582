"""The rule of docs/input-rules.md, checked on a console command run in this process on the
files of a temporary folder: exit 0 with exactly its outputs, or 1 with one error line and
nothing written; inputs never changed."""
import contextlib
import tempfile
from pathlib import Path

from hypothesis import event

from support.console_scripts import run_main
from xlpe_fairseq.io import count_lines


def snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def check_rule(command, folder, argv, outputs):
    """Run ``command`` on the files in ``folder``; assert the rule; return the exit status.

    ``outputs``: ``{output name: input name}``, the input whose line count each output keeps
    (None: no line count to compare).
    """
    inputs = snapshot(folder)
    status, stderr = run_main(command, argv)
    after = snapshot(folder)
    event(f"exit status {status}")  # shown by --hypothesis-show-statistics
    assert status in (0, 1), f"{command} exited {status}:\n{stderr}"
    assert "Traceback" not in stderr, stderr
    for name, data in inputs.items():
        assert after.get(name) == data, f"{command} changed its input {name}"
    if status == 1:
        last = stderr.splitlines()[-1] if stderr else ""
        assert last.startswith(f"{command}: error: "), f"no error line:\n{stderr}"
        assert set(after) == set(inputs), f"{command} failed and left {set(after) - set(inputs)}"
        return status
    assert set(after) - set(inputs) == set(outputs), \
        f"{command} wrote {set(after) - set(inputs)}, expected {set(outputs)}"
    for output, source in outputs.items():
        if source is not None:
            assert count_lines(folder / output) == count_lines(folder / source), \
                f"{output} has {count_lines(folder / output)} lines, {source} " \
                f"{count_lines(folder / source)}"
    return status


@contextlib.contextmanager
def files(**contents):
    """A temporary folder holding the given ``{name: bytes}``."""
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for name, data in contents.items():
            (folder / name).write_bytes(data)
        yield folder
