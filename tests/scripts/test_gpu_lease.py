"""scripts/gpu_lease: pack.sh puts the device's missing wheels and the corpus into the folders
a device run carries, links kept inside them; run.sh installs the plugin, runs one command
under a time limit and brings back what it wrote without checkpoints."""
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "gpu_lease"
TEXT_FILES = ["dict.en.txt", "dict.tr.txt", "train.en-tr.en.bin", "train.en-tr.en.idx"]


def make_corpus(root):
    """A recipe OUT as the recipe and examples/position_sets.sh leave it: xlpe and dpe link
    into text relatively, the position sets absolutely."""
    text = root / "data-bin" / "text"
    text.mkdir(parents=True)
    for name in TEXT_FILES:
        (text / name).write_text(f"contents of {name}\n")
    for name in ("xlpe", "dpe"):
        folder = root / "data-bin" / name
        folder.mkdir()
        (folder / "train.reorder.en-tr.bin").write_text(f"{name} positions\n")
        (folder / ".train.reorder.en-tr.bin.made-from").write_text("stamp\n")
        for file in TEXT_FILES:
            (folder / file).symlink_to(Path("..") / "text" / file)
    for name in ("oracle", "monotone"):
        folder = root / "sets" / name
        folder.mkdir(parents=True)
        (folder / "train.reorder.en-tr.bin").write_text(f"{name} positions\n")
        for file in TEXT_FILES:
            (folder / file).symlink_to(text / file)
    (root / "raw").mkdir()
    (root / "raw" / "test.tr").write_text("bir cümle\n")
    (root / "preorderer.test.score").write_text("hypothesis 0.79\n")
    return root


def pack(corpus, kit, wheels):
    return subprocess.run(["bash", str(SCRIPTS / "pack.sh"), str(corpus)], capture_output=True,
                          text=True, env={**os.environ, "KIT": str(kit), "WHEELS": str(wheels)})


def test_pack_keeps_every_link_inside_the_folders_a_device_run_carries(tmp_path):
    corpus = make_corpus(tmp_path / "corpus")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "fairseq_fixed-0.12.3.1-cp312-cp312-manylinux_2_28_x86_64.whl").write_bytes(b"w")
    kit = tmp_path / "kit"
    result = pack(corpus, kit, wheels)
    assert result.returncode == 0, result.stderr
    assert "MiB of at most 64" in result.stderr, result.stderr
    assert [path.name for path in (kit / ".whl").iterdir()] == [
        "fairseq_fixed-0.12.3.1-cp312-cp312-manylinux_2_28_x86_64.whl"]
    packed = kit / ".lease" / "corpus"
    for folder in ("data-bin/xlpe", "data-bin/dpe", "sets/oracle", "sets/monotone"):
        for file in TEXT_FILES:
            path = packed / folder / file
            assert path.is_symlink() and not os.path.isabs(os.readlink(path)), \
                f"{path} must stay a relative link, or the text travels once per folder"
            assert path.resolve().is_relative_to(packed.resolve()), \
                f"{path} points out of what travels: {path.resolve()}"
            assert path.read_text() == f"contents of {file}\n"
    assert (packed / "sets" / "oracle" / "train.reorder.en-tr.bin").read_text() == \
        "oracle positions\n"
    assert (packed / "data-bin" / "dpe" / ".train.reorder.en-tr.bin.made-from").exists(), \
        "the binarizer's stamps must travel with the positions"
    assert (packed / "raw" / "test.tr").read_text() == "bir cümle\n"
    assert (packed / "preorderer.test.score").read_text() == "hypothesis 0.79\n", \
        "the report gives the test positions' tau from it"
    grid = kit / ".lease" / "grid"
    assert sorted(path.name for path in grid.iterdir()) == ["monotone", "text", "xlpe"]
    assert (grid / "monotone" / "train.reorder.en-tr.bin").read_text() == "monotone positions\n"


def test_pack_names_a_missing_folder_of_the_corpus(tmp_path):
    corpus = make_corpus(tmp_path / "corpus")
    for path in (corpus / "sets" / "monotone").iterdir():
        path.unlink()
    (corpus / "sets" / "monotone").rmdir()
    result = pack(corpus, tmp_path / "kit", tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"{corpus}/sets/monotone: no such folder" in result.stderr, result.stderr
    assert not (tmp_path / "kit").exists(), "nothing may be written for a corpus that is refused"


def test_run_installs_the_plugin_stops_the_command_in_time_and_brings_back_its_files(tmp_path):
    kit, out, site = tmp_path / "kit", tmp_path / "out", tmp_path / "site"
    (kit / ".whl").mkdir(parents=True)
    out.mkdir()
    command = ('command -v xlpe-study >"$RESULTS/report.md"; mkdir -p "$RESULTS/work/ck"; '
               'touch "$RESULTS/work/ck/checkpoint_last.pt" "$RESULTS/work/train.log"; '
               'echo "$CORPUS" >"$RESULTS/work/corpus.txt"; sleep 60')
    env = {**os.environ, "KIT": str(kit), "OUT": str(out), "SITE": str(site),
           "LEASE_RESULTS": str(tmp_path / "lease"), "LEASE_SECONDS": "5",
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    result = subprocess.run(["bash", str(SCRIPTS / "run.sh"), "probe", "bash", "-c", command],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 124, (result.returncode, result.stderr[-2000:])
    assert (out / "probe.report.md").read_text().strip() == str(site / "bin" / "xlpe-study"), \
        "the command must run the plugin run.sh installed, not another one"
    with tarfile.open(out / "probe.tar.gz") as archive:
        names = set(archive.getnames())
        log = archive.extractfile("probe/command.log").read().decode()
        corpus = archive.extractfile("probe/work/corpus.txt").read().decode().strip()
    assert {"probe/device.txt", "probe/work/train.log", "probe/report.md"} <= names, names
    assert not any(name.endswith(".pt") for name in names), "checkpoints must stay behind"
    assert "run.sh: exit 124" in log, log
    assert corpus == str(kit / ".lease" / "corpus")


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("script, usage", [("pack.sh", "scripts/gpu_lease/pack.sh CORPUS"),
                                           ("run.sh", "scripts/gpu_lease/run.sh NAME COMMAND...")])
def test_help_prints_the_header_comment(tmp_path, script, usage, flag):
    """--help used to exit 2 without a word (pack.sh) or to want OUT (run.sh)."""
    env = {key: value for key, value in os.environ.items() if key not in ("OUT", "KIT")}
    result = subprocess.run(["bash", str(SCRIPTS / script), flag], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0 and not result.stderr, (result.returncode, result.stderr)
    assert usage in result.stdout, result.stdout
    assert not result.stdout.startswith(("#", "!")) and "set -" not in result.stdout, \
        result.stdout
    assert not any(tmp_path.iterdir()), sorted(os.listdir(tmp_path))


THREE_SEEDS = SCRIPTS.parents[1] / "docs" / "results" / "inxl-at-scale" / "three_seeds.sh"


def three_seeds_arguments(tmp_path, corpus, *options, extra=None):
    """The arguments docs/results/inxl-at-scale/three_seeds.sh gives xlpe-study, as the study's
    parser reads them, and the threads it leaves each run; a stand-in xlpe-study records them
    (no training)."""
    from xlpe_fairseq.evaluation.study.cli import build_parser

    bin_dir, record = tmp_path / "bin", tmp_path / "arguments"
    bin_dir.mkdir(exist_ok=True)
    stand_in = bin_dir / "xlpe-study"
    stand_in.write_text(f'#!/usr/bin/env bash\necho "$OMP_NUM_THREADS" >"{record}.threads"\n'
                        f'printf "%s\\0" "$@" >"{record}"\n')
    stand_in.chmod(0o755)
    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    if extra:
        env["EXTRA"] = extra
    result = subprocess.run(["bash", str(THREE_SEEDS), str(corpus), str(tmp_path / "work"),
                             *options], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    arguments = record.read_bytes().decode().split("\0")[:-1]
    # the parser refuses more jobs than this machine's cores (the device has 16): read them apart
    jobs = [k + 1 for k, argument in enumerate(arguments) if argument == "--jobs"]
    runs_at_once = int(arguments[jobs[-1]])
    for k in jobs:
        arguments[k] = "1"
    args = build_parser().parse_args(arguments)
    args.jobs = runs_at_once
    return args, (record.parent / "arguments.threads").read_text()


def test_the_three_seed_lease_reads_only_what_pack_carries_and_resumes_a_cut_run(tmp_path):
    """The lease of three seeds at the GPU profile: the packed corpus holds every file it names,
    its six runs train at once at the earlier comparison's budget and checkpoint, InXL is also
    decoded with the oracle's positions, and a run cut before its budget has a save to resume
    from."""
    corpus = make_corpus(tmp_path / "corpus")
    wheels, kit = tmp_path / "wheels", tmp_path / "kit"
    wheels.mkdir()
    (wheels / "fairseq_fixed-0.12.3.1-cp312-cp312-manylinux_2_28_x86_64.whl").write_bytes(b"w")
    packing = pack(corpus, kit, wheels)
    assert packing.returncode == 0, packing.stderr
    packed = kit / ".lease" / "corpus"
    args, threads = three_seeds_arguments(tmp_path, packed)
    for path in (args.data_bin, args.xlpe_data_bin, args.reference,
                 *(data_bin for _, data_bin in args.positions),
                 *filter(None, (args.preorderer, args.preorderer_score, args.gold))):
        assert Path(path).exists() and Path(path).resolve().is_relative_to(packed.resolve()), \
            f"{path}: the lease reads a file that pack.sh does not carry"
    assert (args.models, args.seeds, args.baseline) == (["transformer", "xlpe-inxl"], [1, 2, 3],
                                                        "transformer")
    assert args.jobs == len(args.models) * len(args.seeds), "all six runs train at once"
    assert (args.profile, args.updates, args.checkpoint, args.cpu) == (
        "gpu-iwslt", 1300, "last", False), "the earlier three-seed comparison's settings"
    assert args.test_positions == ["oracle"] and [name for name, _ in args.positions] == \
        ["oracle"], "InXL is decoded with the preorderer's positions and the oracle's"
    train = args.train_args.split()
    save_every = int(train[train.index("--save-interval-updates") + 1])
    assert save_every < args.updates, "a run cut before its budget must have a save to resume"
    assert threads.strip() == "1", threads

    dry, _ = three_seeds_arguments(tmp_path, packed, "--cpu", "--updates", "2",
                                   extra="--encoder-embed-dim 32")
    assert (dry.cpu, dry.updates) == (True, 2), "options after WORK must win (a dry run)"
    assert dry.train_args == f"{args.train_args} --encoder-embed-dim 32", dry.train_args
