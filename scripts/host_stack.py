#!/usr/bin/env python3
"""Install xlpe-fairseq into a Python environment that already holds a fairseq, as a user
would, and check that it replaced nothing and that fairseq runs the plugin there.

    scripts/host_stack.py --python ENV/bin/python [--plugin WHEEL_OR_FOLDER] [--work DIR]
                          [--report FILE]

Before and after the install it records every installed distribution's version and a digest
of every file of the fairseq package folder; the install follows the README's own-environment
steps (fastBPE built without build isolation, eflomal from scripts/install_eflomal.sh, then the
plugin without its `fairseq` extra and without the development pins of constraints.txt). Then,
with the host's own commands, it trains DPE for a few updates on a tiny verb-final corpus with
``--user-dir $(xlpe-user-dir)`` and translates its test split with fairseq-generate.
Prints a JSON report (also to --report) and exits 1 when fairseq's files or any version that
was installed before changed, or a step failed, with the step's last lines of output.
"""
import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# runs inside the host's Python: its fairseq folder, version, distribution and file digest
FAIRSEQ_FACTS = r"""
import hashlib, importlib.metadata, importlib.util, json, sys
from pathlib import Path
spec = importlib.util.find_spec("fairseq")
folder = Path(list(spec.submodule_search_locations)[0])
digest, count = hashlib.sha256(), 0
for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
    digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    count += 1
owners = importlib.metadata.packages_distributions().get("fairseq", [])
print(json.dumps({"folder": str(folder), "files": count, "sha256": digest.hexdigest(),
                  "distributions": owners,
                  "python": sys.version.split()[0]}))
"""
# runs inside the host's Python after the install: the plugin's requirements naming a fairseq
# outside an extra
PLUGIN_FAIRSEQ_REQUIREMENTS = r"""
import importlib.metadata, json, re
names = ("fairseq", "ve-fairseq", "fairseq-fixed")
print(json.dumps([r for r in importlib.metadata.requires("xlpe-fairseq") or []
                  if re.split(r"[ ;<>=!~\[]", r)[0].lower() in names and "extra ==" not in r]))
"""
VERSIONS = ("import importlib.metadata, json; print(json.dumps({d.metadata['Name'].lower(): "
            "d.version for d in importlib.metadata.distributions()}))")


class StepFailed(RuntimeError):
    pass


def run(step, command, log, **kwargs):
    """Run one step; its output goes to ``log``; a failure ends the check with its tail."""
    start = time.monotonic()
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                            **kwargs)
    with open(log, "a") as out:
        out.write(f"$ {' '.join(map(str, command))}\n{result.stdout}{result.stderr}\n")
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise StepFailed(f"{step} failed (exit {result.returncode}):\n{tail}")
    return result, round(time.monotonic() - start, 1)


def host_state(python, log):
    facts = json.loads(run("reading fairseq", [python, "-c", FAIRSEQ_FACTS], log)[0].stdout)
    facts["versions"] = json.loads(run("listing versions", [python, "-c", VERSIONS], log)[0].stdout)
    return facts


def importable(python, module):
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0


def install_plugin(python, plugin, log):
    """The README's own-environment install; returns each step's seconds."""
    pip = [python, "-m", "pip", "install", "-q"]
    times = {}
    if not importable(python, "fastBPE"):
        if not importable(python, "Cython"):
            times["Cython"] = run("installing Cython", pip + ["Cython"], log)[1]
        times["fastBPE"] = run("building fastBPE", pip + ["--no-build-isolation",
                                                          "fastbpe==0.1.0"], log)[1]
    if subprocess.run([python, "-m", "pip", "show", "-q", "eflomal"],
                      capture_output=True).returncode != 0:
        times["eflomal"] = run("building eflomal", ["bash", REPO / "scripts/install_eflomal.sh",
                                                    Path(python).parent / "pip"], log)[1]
    times["plugin"] = run("installing the plugin", pip + [plugin], log)[1]
    return times


def write_tiny_corpus(raw, rng):
    """Verb-final word order: every fourth source word's translation moves to the end; the
    alignment and so the reorder positions are known exactly."""
    raw.mkdir(parents=True)
    for split, size in (("train", 300), ("valid", 20), ("test", 20)):
        lines = {"xx": [], "yy": [], "reorder": []}
        for _ in range(size):
            words = [rng.randrange(24) for _ in range(rng.randint(2, 8))]
            order = ([i for i, w in enumerate(words) if w % 4] +
                     [i for i, w in enumerate(words) if not w % 4])
            positions = [order.index(i) for i in range(len(words))]
            lines["xx"].append(" ".join(f"s{w}" for w in words))
            lines["yy"].append(" ".join(f"t{words[i]}" for i in order))
            lines["reorder"].append(" ".join(map(str, positions)))
        for suffix, text in lines.items():
            (raw / f"{split}.{suffix}").write_text("\n".join(text) + "\n")


def smoke_test(python, work, log):
    """A few DPE updates and fairseq-generate through the host's own commands; returns the
    number of test sentences translated and each step's seconds."""
    bin_dir = Path(python).parent
    raw, data_bin, save_dir = work / "raw", work / "data-bin", work / "checkpoints"
    write_tiny_corpus(raw, random.Random(0))
    times = {}
    _, times["fairseq-preprocess"] = run("fairseq-preprocess", [
        bin_dir / "fairseq-preprocess", "--source-lang", "xx", "--target-lang", "yy",
        "--trainpref", raw / "train", "--validpref", raw / "valid", "--testpref", raw / "test",
        "--destdir", data_bin, "--workers", "1"], log)
    _, times["xlpe-binarize"] = run("xlpe-binarize", [
        bin_dir / "xlpe-binarize", "--reorder", raw / "train.reorder", "--source",
        raw / "train.xx", "--destdir", data_bin, "--split", "train", "--source-lang", "xx",
        "--target-lang", "yy"], log)
    user_dir = run("xlpe-user-dir", [bin_dir / "xlpe-user-dir"], log)[0].stdout.strip()
    _, times["fairseq-train"] = run("fairseq-train", [
        bin_dir / "fairseq-train", data_bin, "--user-dir", user_dir, "--task",
        "translation_reorder", "--arch", "transformer_dpe", "--encoder-embed-dim", "32",
        "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64",
        "--decoder-ffn-embed-dim", "64", "--encoder-layers", "1", "--decoder-layers", "1",
        "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
        "--criterion", "label_smoothed_cross_entropy_with_order", "--order-lambda", "0.5",
        "--optimizer", "adam", "--lr", "0.002", "--max-tokens", "800", "--max-update", "6",
        "--save-dir", save_dir, "--no-progress-bar", "--num-workers", "0", "--seed", "3",
        "--cpu"], log)
    generated, times["fairseq-generate"] = run("fairseq-generate", [
        bin_dir / "fairseq-generate", data_bin, "--user-dir", user_dir, "--task",
        "translation_reorder", "--path", save_dir / "checkpoint_last.pt", "--gen-subset",
        "test", "--beam", "2", "--batch-size", "8", "--required-batch-size-multiple", "1",
        "--num-workers", "0", "--cpu"], log)
    translated = sum(line.startswith("H-") for line in generated.stdout.splitlines())
    if translated != 20:
        raise StepFailed(f"fairseq-generate translated {translated} of 20 test sentences")
    return translated, times


def changes(before, after):
    """Distributions installed before whose version is now another or gone."""
    return {name: [version, after.get(name)] for name, version in before.items()
            if after.get(name) != version}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="the host environment's python")
    parser.add_argument("--plugin", default=str(REPO),
                        help="what pip installs: a wheel or the repository (default: this one)")
    parser.add_argument("--work", help="folder for the tiny corpus and checkpoints "
                                       "(default: a temporary one, removed after)")
    parser.add_argument("--report", help="also write the JSON report here")
    args = parser.parse_args(argv)
    python = os.path.abspath(args.python)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(args.work or scratch)
        work.mkdir(parents=True, exist_ok=True)
        log = work / "host_stack.log"
        report = {"python_path": python, "plugin": args.plugin, "log": str(log)}
        try:
            before = host_state(python, log)
            report["install_seconds"] = install_plugin(python, args.plugin, log)
            after = host_state(python, log)
            report["plugin_requires_fairseq"] = json.loads(run(
                "reading the plugin's requirements", [python, "-c", PLUGIN_FAIRSEQ_REQUIREMENTS],
                log)[0].stdout)
            report.update(
                python=before["python"], fairseq=before["distributions"],
                fairseq_version=before["versions"].get(
                    (before["distributions"] or ["fairseq"])[0].lower()),
                fairseq_files=before["files"],
                fairseq_files_unchanged=before["sha256"] == after["sha256"]
                and before["folder"] == after["folder"],
                fairseq_after=after["distributions"],
                changed_versions=changes(before["versions"], after["versions"]),
                added=sorted(set(after["versions"]) - set(before["versions"])),
                torch=before["versions"].get("torch"))
            report["translated"], report["smoke_seconds"] = smoke_test(python, work, log)
            report["ok"] = (report["fairseq_files_unchanged"] and not report["changed_versions"]
                            and report["fairseq_after"] == report["fairseq"]
                            and not report["plugin_requires_fairseq"])
        except StepFailed as error:
            report.update(ok=False, error=str(error))
        text = json.dumps(report, indent=1)
        print(text)
        if args.report:
            Path(args.report).write_text(text + "\n")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
