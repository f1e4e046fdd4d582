"""translation_reorder: loading, validating and requiring reorder positions per model."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fairseq import options, tasks

from synthetic_corpus import write_corpus
from xlpe_fairseq.data.reorder_dataset import LanguagePairWithReorderDataset, ReorderPositionsError
from xlpe_fairseq.preprocessing.binarize import binarize_reorder

USER_DIR = str(Path(__file__).resolve().parents[2] / "xlpe_fairseq")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = tmp_path_factory.mktemp("task")
    raw = write_corpus(root / "raw", sizes={"train": 30, "valid": 5, "test": 5})
    subprocess.run(
        [sys.executable, "-m", "fairseq_cli.preprocess", "--source-lang", "xx", "--target-lang",
         "yy", "--trainpref", raw / "train", "--validpref", raw / "valid", "--testpref",
         raw / "test", "--destdir", root / "data-bin", "--joined-dictionary", "--workers", "1"],
        check=True, capture_output=True,
    )
    return raw, root / "data-bin"


def data_bin_with(prepared, tmp_path, reorder_files):
    """A copy of the binarized corpus with the given {split: (reorder text, source text)}."""
    raw, data_bin = prepared
    copy = tmp_path / "data-bin"
    shutil.copytree(data_bin, copy)
    for split, (reorder, source) in reorder_files.items():
        binarize_reorder(str(reorder), str(source), str(copy / f"{split}.reorder.xx-yy"))
    return copy


def setup_task(data_bin, arch, *extra):
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, [
        str(data_bin), "--user-dir", USER_DIR, "--task", "translation_reorder", "--arch", arch,
        "--encoder-attention-heads", "2", *extra,
    ])
    task = tasks.setup_task(args)
    return task, args


def test_positions_are_loaded_and_go_to_the_model_that_reads_them(prepared, tmp_path):
    raw, _ = prepared
    data_bin = data_bin_with(prepared, tmp_path, {
        split: (raw / f"{split}.reorder", raw / f"{split}.xx") for split in ("train", "valid")})
    task, args = setup_task(data_bin, "transformer_xlpe", "--xlpe-heads", "1")
    task.load_dataset("valid")
    assert isinstance(task.datasets["valid"], LanguagePairWithReorderDataset)
    assert not task.datasets["valid"].positions_as_input, "no model yet: positions stay aside"
    task.build_model(args)
    assert task.datasets["valid"].positions_as_input, "XL PE reads positions from net_input"
    task.load_dataset("train")
    batch = task.datasets["train"].collater([task.datasets["train"][i] for i in range(3)])
    assert "reorder_positions" in batch["net_input"]


def test_dpe_needs_train_positions_only(prepared, tmp_path):
    raw, _ = prepared
    data_bin = data_bin_with(prepared, tmp_path, {"train": (raw / "train.reorder", raw / "train.xx")})
    task, args = setup_task(data_bin, "transformer_dpe")
    task.build_model(args)
    task.load_dataset("train")
    task.load_dataset("test")
    assert isinstance(task.datasets["train"], LanguagePairWithReorderDataset)
    assert not task.datasets["train"].positions_as_input, "DPE never reads positions as input"


def test_xlpe_without_positions_names_the_missing_file(prepared, tmp_path):
    task, args = setup_task(data_bin_with(prepared, tmp_path, {}), "transformer_xlpe", "--xlpe-heads", "1")
    task.build_model(args)
    with pytest.raises(FileNotFoundError, match=r"test\.reorder\.xx-yy\.bin/\.idx not found.*--preorderer"):
        task.load_dataset("test")


def test_line_count_mismatch_is_reported(prepared, tmp_path):
    raw, _ = prepared
    data_bin = data_bin_with(prepared, tmp_path, {"valid": (raw / "test.reorder", raw / "test.xx")})
    task, _ = setup_task(data_bin, "transformer_dpe")
    with pytest.raises(ReorderPositionsError, match=r"valid\.reorder\.xx-yy\.bin line \d+: expected \d+ positions"):
        task.load_dataset("valid")


def test_wrong_number_of_lines_is_reported(prepared, tmp_path):
    raw, _ = prepared
    data_bin = data_bin_with(prepared, tmp_path, {"valid": (raw / "train.reorder", raw / "train.xx")})
    task, _ = setup_task(data_bin, "transformer_dpe")
    with pytest.raises(ReorderPositionsError, match=r"valid\.reorder\.xx-yy\.bin: 30 lines, but the source valid split has 5"):
        task.load_dataset("valid")


def test_truncate_source_is_refused_with_positions(prepared, tmp_path):
    raw, _ = prepared
    data_bin = data_bin_with(prepared, tmp_path, {"train": (raw / "train.reorder", raw / "train.xx")})
    task, _ = setup_task(data_bin, "transformer_dpe", "--truncate-source")
    with pytest.raises(ReorderPositionsError, match="--truncate-source"):
        task.load_dataset("train")


def test_noise_is_validated(prepared, tmp_path):
    with pytest.raises(ValueError, match=r"--reorder-noise must be in \[0, 1\]"):
        setup_task(data_bin_with(prepared, tmp_path, {}), "transformer", "--reorder-noise", "1.5")
