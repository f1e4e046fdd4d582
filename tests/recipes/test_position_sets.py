"""examples/position_sets.sh: the oracle and monotone position sets xlpe-study trains and tests on."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fairseq.data import data_utils

from support.fairseq_commands import binarized_corpus

REPO = Path(__file__).resolve().parents[2]


def position_sets(*args, bin_dirs=(), **env):
    """Run the script with ``bin_dirs`` and then this interpreter's folder (its python and the
    xlpe commands) first on PATH, and ``env`` added to the environment."""
    path = os.pathsep.join([*map(str, bin_dirs), os.path.dirname(sys.executable),
                            os.environ["PATH"]])
    return subprocess.run(["bash", REPO / "examples/position_sets.sh", *args], capture_output=True,
                          text=True, env={**os.environ, "PATH": path, **env})


@pytest.fixture(scope="module")
def corpus_template(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    binarized_corpus(root, {"train": 12, "valid": 4, "test": 5})
    return root


@pytest.fixture
def corpus(corpus_template, tmp_path):
    """The synthetic corpus and its data-bin, a copy per test: tests add files to it."""
    for name in ("raw", "data-bin"):
        shutil.copytree(corpus_template / name, tmp_path / name)
    return tmp_path / "raw", tmp_path / "data-bin"


@pytest.fixture
def corpus_with_oracle(corpus):
    """The corpus with each split's positions as its BTG oracle."""
    raw = corpus[0]
    for split in ("train", "valid", "test"):
        shutil.copy(raw / f"{split}.reorder", raw / f"{split}.btg.reorder")
    return corpus


def positions(data_bin, split):
    dataset = data_utils.load_indexed_dataset(str(data_bin / f"{split}.reorder.xx-yy"), None)
    return [dataset[k].tolist() for k in range(len(dataset))]


def test_oracle_and_monotone_sets_hold_the_expected_positions(tmp_path, corpus_with_oracle):
    raw, data_bin = corpus_with_oracle
    before = sorted(path.name for path in data_bin.iterdir())
    result = position_sets(data_bin, raw, "xx", "yy", tmp_path / "sets")
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(path.name for path in data_bin.iterdir()) == before, "DATA_BIN was written"

    for split in ("train", "valid", "test"):
        lines = (raw / f"{split}.reorder").read_text().splitlines()
        assert positions(tmp_path / "sets/oracle", split) == [
            [int(p) for p in line.split()] for line in lines], f"oracle {split}"
        assert positions(tmp_path / "sets/monotone", split) == [
            list(range(len(line.split()))) for line in lines], f"monotone {split}"
    text = tmp_path / "sets/monotone/test.xx-yy.xx.bin"
    assert text.is_symlink() and text.resolve() == (data_bin / "test.xx-yy.xx.bin").resolve()
    assert not (tmp_path / "sets/predicted").exists(), \
        "no cross-fitted train positions, so no predicted set"


def reversed_positions(path):
    """A reorder file of the same lengths as ``path`` with every sentence reversed."""
    return "".join(" ".join(str(len(line.split()) - 1 - k) for k in range(len(line.split())))
                   + "\n" for line in path.read_text().splitlines())


def test_cross_fitted_sets_train_on_their_file_and_test_on_the_preorderers(tmp_path,
                                                                           corpus_with_oracle):
    raw, data_bin = corpus_with_oracle
    (raw / "train.pred.reorder").write_text(reversed_positions(raw / "train.reorder"))
    shutil.copy(raw / "train.reorder", raw / "train.mixed.reorder")
    for split in ("valid", "test"):
        (raw / f"{split}.pred.reorder").write_text(reversed_positions(raw / f"{split}.reorder"))
    result = position_sets(data_bin, raw, "xx", "yy", tmp_path / "sets")
    assert result.returncode == 0, result.stderr[-3000:]

    def read(path):
        return [[int(p) for p in line.split()] for line in path.read_text().splitlines()]
    for name, train in (("predicted", "train.pred.reorder"), ("mixed", "train.mixed.reorder")):
        assert positions(tmp_path / "sets" / name, "train") == read(raw / train), \
            f"{name} must train on {train}"
        for split in ("valid", "test"):
            assert positions(tmp_path / "sets" / name, split) == read(
                raw / f"{split}.pred.reorder"), f"{name} {split} must hold the preorderer's"


def test_cross_fitted_sets_need_the_preorderers_test_positions(tmp_path, corpus_with_oracle):
    raw, data_bin = corpus_with_oracle
    shutil.copy(raw / "train.reorder", raw / "train.pred.reorder")
    result = position_sets(data_bin, raw, "xx", "yy", tmp_path / "sets")
    assert result.returncode == 1 and "valid.pred.reorder" in result.stderr, result.stderr
    assert not (tmp_path / "sets").exists(), "nothing may be written before the check"


def test_a_missing_oracle_file_is_named(tmp_path, corpus):
    raw, data_bin = corpus
    result = position_sets(data_bin, raw, "xx", "yy", tmp_path / "sets")
    assert result.returncode == 1 and "train.btg.reorder" in result.stderr, result.stderr
    assert not (tmp_path / "sets").exists(), "nothing may be written before the check"


STUB_DPE_ORDER = """#!{python}
# stands in for xlpe-dpe-order: the split's sentences reversed, or a failure on FAIL_SPLIT
import os, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
if args["--split"] == os.environ.get("FAIL_SPLIT"):
    sys.exit("xlpe-dpe-order: error: stub failure")
assert os.path.isfile(args["--checkpoint"]), args
lines = open(os.path.join(os.environ["RAW"], args["--split"] + ".reorder")).read().splitlines()
with open(args["--output"], "w") as out:
    for line in lines:
        n = len(line.split())
        out.write(" ".join(str(n - 1 - k) for k in range(n)) + "\\n")
"""


def run_with_dpe_checkpoint(tmp_path, raw, data_bin, checkpoint, create=True, **env):
    """position_sets.sh with DPE_CHECKPOINT (an empty file unless ``create`` is false) and a
    stub xlpe-dpe-order first on PATH (the command itself is tested on a trained checkpoint in
    test_cli_end_to_end)."""
    if create:
        checkpoint.write_bytes(b"")
    stub_dir = tmp_path / "stub-bin"
    stub_dir.mkdir()
    (stub_dir / "xlpe-dpe-order").write_text(STUB_DPE_ORDER.format(python=sys.executable))
    (stub_dir / "xlpe-dpe-order").chmod(0o755)
    return position_sets(data_bin, raw, "xx", "yy", tmp_path / "sets", bin_dirs=[stub_dir],
                         RAW=str(raw), DPE_CHECKPOINT=str(checkpoint), **env)


def test_dpe_network_set_holds_the_network_s_order_in_every_split(tmp_path, corpus_with_oracle):
    raw, data_bin = corpus_with_oracle
    result = run_with_dpe_checkpoint(tmp_path, raw, data_bin, tmp_path / "dpe.pt")
    assert result.returncode == 0, result.stderr[-3000:]
    for split in ("train", "valid", "test"):
        assert positions(tmp_path / "sets/dpe-network", split) == [
            [int(p) for p in line.split()] for line in
            reversed_positions(raw / f"{split}.reorder").splitlines()], \
            f"dpe-network {split} must hold xlpe-dpe-order's positions"
    assert sorted(path.name for path in (tmp_path / "sets").iterdir()) == [
        "dpe-network", "monotone", "oracle"], "no intermediate file may be left in OUT"


def test_a_failing_dpe_order_leaves_no_partial_set(tmp_path, corpus_with_oracle):
    raw, data_bin = corpus_with_oracle
    result = run_with_dpe_checkpoint(tmp_path, raw, data_bin, tmp_path / "dpe.pt",
                                     FAIL_SPLIT="valid")
    assert result.returncode == 1 and "stub failure" in result.stderr, result.stderr[-2000:]
    assert sorted(path.name for path in (tmp_path / "sets").iterdir()) == [
        "monotone", "oracle"], "the failed set must not be left half-built"


def test_a_missing_dpe_checkpoint_is_named_before_anything_is_written(tmp_path,
                                                                      corpus_with_oracle):
    raw, data_bin = corpus_with_oracle
    result = run_with_dpe_checkpoint(tmp_path, raw, data_bin, tmp_path / "missing.pt",
                                     create=False)
    assert result.returncode == 1 and "missing.pt: no such file" in result.stderr, result.stderr
    assert not (tmp_path / "sets").exists(), "nothing may be written before the check"
