"""The workflow's commands (xlpe-train, xlpe-evaluate and the shell entry points that exec
them) without their work: an OUT as prepared, without the data; fairseq's and the xlpe-*
commands they start as stubs that log their arguments; a run to which a folder is read-only."""
import os
import shutil
import sys

from xlpe_fairseq.io.provenance import record_corpus


def prepared(root):
    """An OUT of prepare-corpus.sh, without the data."""
    for variant in ("text", "dpe", "xlpe"):
        folder = root / "data-bin" / variant
        folder.mkdir(parents=True)
        for split in ("train", "valid", "test"):
            (folder / f"{split}.fr-en.fr.idx").write_text("")
        (folder / "dict.fr.txt").write_text("le 1\n")
        (folder / "dict.en.txt").write_text("the 1\n")
    (root / "raw").mkdir()
    (root / "reference").mkdir()
    for split in ("train", "valid", "test"):
        for lang in ("fr", "en"):
            (root / "raw" / f"{split}.{lang}").write_text("the\n")
    for split in ("valid", "test"):
        (root / "reference" / f"{split}.en").write_text("the\n")
    (root / "bpe").mkdir()
    (root / "bpe" / "codes").write_text("t h 2\n")
    (root / "recipe.env").write_text(f"SRC=fr\nTGT=en\nLOWERCASE=0\nRAW={root / 'raw'}\n"
                                     "TOKENIZATION=reversible\n")
    record_corpus(str(root), str(root / "raw"), "fr", "en", {}, ["prepare-corpus.sh"])
    return root


def stubs(tmp_path):
    """fairseq-train, fairseq-generate, xlpe-average-checkpoints and xlpe-bleu that log their
    arguments, and xlpe-provenance, which logs what reads checkpoints and outputs (these are
    empty files here) and does the rest (folders, OUT's record)."""
    folder = tmp_path / "stubs"
    folder.mkdir()
    for name in ("fairseq-train", "fairseq-generate", "xlpe-average-checkpoints", "xlpe-bleu"):
        (folder / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "{tmp_path}/calls"\n')
        (folder / name).chmod(0o755)
    (folder / "xlpe-provenance").write_text(
        '#!/bin/sh\ncase $1 in verify-checkpoint | evaluation | training)\n'
        f'    echo "xlpe-provenance $*" >> "{tmp_path}/provenance-calls" ;;\n'
        f'*) exec "{shutil.which("xlpe-provenance")}" "$@" ;;\nesac\n')
    (folder / "xlpe-provenance").chmod(0o755)
    return stubbed_fairseq(folder, {})


def stubbed_fairseq(folder, programs):
    """An environment in which fairseq-train and fairseq-generate are the executables in
    ``folder`` (``programs``: more of them to write there, name -> script), however they are
    started: from PATH, or by the launcher of xlpe-train and xlpe-evaluate (python -m
    xlpe_fairseq_cli.fairseq fairseq-generate ...), which runs fairseq_cli's module: a
    fairseq_cli whose modules exec them stands first on PYTHONPATH."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, script in programs.items():
        (folder / name).write_text(script)
        (folder / name).chmod(0o755)
    shadow = folder / "python" / "fairseq_cli"
    shadow.mkdir(parents=True, exist_ok=True)
    (shadow / "__init__.py").write_text("")
    for module, name in (("train", "fairseq-train"), ("generate", "fairseq-generate")):
        (shadow / f"{module}.py").write_text(
            f"import os, sys\nos.execvp({name!r}, [{name!r}, *sys.argv[1:]])\n")
    python_path = os.pathsep.join(filter(None, [str(shadow.parent), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": python_path}


READ_ONLY_RUN = """
import os, sys
from xlpe_fairseq.workflow import {command}

out = os.path.realpath(sys.argv[1])
access = os.access
# a corpus on a read-only file system (as root, no permission makes a folder one)
os.access = lambda path, mode, **kw: (False if mode & os.W_OK and
                                      os.path.realpath(path).startswith(out)
                                      else access(path, mode, **kw))
sys.exit({command}.main(["--prog", "{prog}", *sys.argv[2:]]))
"""


def read_only_run(command, prog, folder, *args):
    """Run ``xlpe_fairseq.workflow.COMMAND`` as PROG with ``args``, ``folder`` read-only to it."""
    return [sys.executable, "-c", READ_ONLY_RUN.format(command=command, prog=prog), str(folder),
            *map(str, args)]
