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
