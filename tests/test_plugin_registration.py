"""The plugin registers with fairseq however the process imported the two."""
import subprocess
import sys
from pathlib import Path

import pytest

USER_DIR = Path(__file__).resolve().parents[1] / "xlpe_fairseq"

# fairseq's own --user-dir path: parse a training command line with the plugin's task and arch
PARSE = """
from fairseq import options
parser = options.get_training_parser()
args = options.parse_args_and_arch(parser, ["data-bin", "--user-dir", {user_dir!r},
    "--task", "translation_reorder", "--arch", "transformer_xlpe"])
print(args.task, args.arch)
"""


@pytest.mark.parametrize("first", [
    "",  # fairseq first: --user-dir imports the plugin
    "import xlpe_fairseq.preordering.preorderer\n",  # the plugin first (a notebook, a script)
    # plugin modules that import fairseq themselves: the models they register import them back
    "import xlpe_fairseq.modules\n",
    "from xlpe_fairseq.modules import SinusoidalPositionsAt\n",
    "import xlpe_fairseq.data\n",
])
def test_user_dir_finds_the_task_whichever_was_imported_first(first):
    code = first + PARSE.format(user_dir=str(USER_DIR))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=USER_DIR.parent)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["translation_reorder", "transformer_xlpe"], result.stdout
