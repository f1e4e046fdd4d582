"""The workflow's commands (xlpe-train, xlpe-evaluate and the shell entry points that exec
them) without their work: an OUT as prepared, without the data; fairseq's commands they run as
stubs that log their arguments; checkpoints that hold a training's settings and no weights; a
run to which a folder is read-only."""
import argparse
import hashlib
import os
import sys
from pathlib import Path

import torch

from xlpe_fairseq.io.digests import CHECKPOINT_KEY, fingerprint_of
from xlpe_fairseq.io.provenance import record_corpus
from xlpe_fairseq.model_registry import variant
from xlpe_fairseq.workflow.schedules import trained_settings

# the files of each data-bin of ``prepared``
DATA_BIN = {"dict.fr.txt": "le 1\n", "dict.en.txt": "the 1\n",
            **{f"{split}.fr-en.fr.idx": "" for split in ("train", "valid", "test")}}


def prepared(root):
    """An OUT of prepare-corpus.sh, without the data."""
    for name in ("text", "dpe", "xlpe"):
        folder = root / "data-bin" / name
        folder.mkdir(parents=True)
        for file_name, text in DATA_BIN.items():
            (folder / file_name).write_text(text)
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


# a stub of a fairseq command: it logs its arguments to CALLS as the command line it was
# given, "fairseq-NAME ARGS"
FAIRSEQ_STUB = """import json, os, sys, time
with open({calls!r}, "a") as calls:
    calls.write(" ".join(["fairseq-{name}", *sys.argv[1:]]) + "\\n")
"""
# fairseq-generate's stub: each line of OUT's reference of the split as its hypothesis
GENERATE = """args = sys.argv[1:]
out = os.path.dirname(os.path.dirname(os.path.abspath(args[0])))
split, tgt = (args[args.index(option) + 1] for option in ("--gen-subset", "--target-lang"))
with open(os.path.join(out, "reference", f"{split}.{tgt}"), encoding="utf-8") as reference:
    for number, line in enumerate(reference.read().splitlines()):
        print(f"S-{number}\\t{line}\\nH-{number}\\t-0.1\\t{line}\\nD-{number}\\t-0.1\\t{line}")
"""


def stubs(tmp_path):
    """fairseq-train and fairseq-generate, as the xlpe-* commands run them (python -m
    xlpe_fairseq_cli.fairseq, which runs fairseq_cli's module), replaced by the stubs of a
    fairseq_cli package first on PYTHONPATH: they log their arguments to TMP/calls, and
    fairseq-generate gives the reference as its hypotheses. The rest (averaging, checking the
    checkpoint, scoring, records) is the commands' own."""
    package = tmp_path / "stubs" / "fairseq_cli"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(package.parent),
                                                       os.environ.get("PYTHONPATH")]))}
    fairseq_stub(env, "train", "")
    fairseq_stub(env, "generate", GENERATE)
    return env


def fairseq_stub(env, name, body):
    """The stub of fairseq-NAME in the stubs ``env`` names: it logs its arguments, then runs
    the Python ``body``. Returns the folder the stubs are in."""
    folder = Path(env["PYTHONPATH"].split(os.pathsep)[0])
    (folder / "fairseq_cli" / f"{name}.py").write_text(
        FAIRSEQ_STUB.format(calls=str(folder.parent / "calls"), name=name) + body)
    return folder


def trained_checkpoint(path, model, schedule="dpe-iwslt"):
    """A checkpoint of ``model`` as xlpe-train saves it on ``schedule`` from the data-bin of
    ``prepared``: its settings and data fingerprint, no weights."""
    settings = {name: values[0] for name, values in trained_settings(model, schedule).items()}
    digests = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in DATA_BIN.items()}
    torch.save({"model": {}, "cfg": {"model": argparse.Namespace(**settings)},
                "task_state": {CHECKPOINT_KEY: fingerprint_of(f"data-bin/{variant(model)}",
                                                              [digests])}},
               path)


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
