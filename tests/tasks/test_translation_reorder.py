"""translation_reorder: loading, validating and requiring reorder positions per model."""
import shutil
from pathlib import Path

import pytest
import torch
from fairseq import options, tasks

from synthetic_corpus import preprocess_corpus, write_corpus
from xlpe_fairseq.data.reorder_dataset import LanguagePairWithReorderDataset
from xlpe_fairseq.plugin_errors import ReorderPositionsError
from xlpe_fairseq.io import InputError
from xlpe_fairseq.data.positions_note import NO_PREORDERER
from xlpe_fairseq.plugin_errors import MissingReorderPositionsError
from xlpe_fairseq.preprocessing.binarize import binarize_reorder
from xlpe_fairseq.reordering.extract import extract_file

USER_DIR = str(Path(__file__).resolve().parents[2] / "xlpe_fairseq")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = tmp_path_factory.mktemp("task")
    raw = write_corpus(root / "raw", sizes={"train": 30, "valid": 5, "test": 5})
    preprocess_corpus(raw, root / "data-bin")
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
    with pytest.raises(MissingReorderPositionsError,
                       match=r"test\.reorder\.xx-yy\.bin/\.idx not found.*transformer_xlpe.*--preorderer"):
        task.load_dataset("test")


def test_xlpe_on_a_data_bin_prepared_without_preorderer_says_to_rerun_with_it(prepared,
                                                                             tmp_path):
    raw, _ = prepared
    data_bin = data_bin_with(prepared, tmp_path, {"train": (raw / "train.reorder",
                                                            raw / "train.xx")})
    (data_bin / NO_PREORDERER).write_text("it was prepared without the preorderer: rerun\n")
    task, args = setup_task(data_bin, "transformer_xlpe", "--xlpe-heads", "1")
    task.load_dataset("valid")  # fairseq-train: before the model exists
    with pytest.raises(MissingReorderPositionsError,
                       match=r"has no valid positions: it was prepared without the preorderer: rerun"):
        task.build_model(args)


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
    with pytest.raises(ValueError, match=r"--reorder-noise must be a finite number of at least "
                       r"0 and at most 1"):
        setup_task(data_bin_with(prepared, tmp_path, {}), "transformer", "--reorder-noise", "1.5")


def skip_mode_positions(raw, tmp_path, split="train"):
    """``xlpe-reorder --method dpe --unaligned skip`` positions of ``split`` after dropping
    the links of each sentence's second token, so that it has no order target."""
    links = (raw / f"{split}.align").read_text().splitlines()
    dropped = [" ".join(link for link in line.split() if not link.startswith("1-"))
               for line in links]
    alignment = tmp_path / f"{split}.dropped.align"
    alignment.write_text("".join(line + "\n" for line in dropped))
    reorder = tmp_path / f"{split}.skip.reorder"
    extract_file("dpe", str(raw / f"{split}.xx"), str(raw / f"{split}.yy"), str(alignment),
                 str(reorder), 1, 100, unaligned="skip")
    assert "-1" in reorder.read_text(), "the fixture must contain tokens without order target"
    return reorder


def test_dpe_trains_on_positions_without_order_target(prepared, tmp_path):
    raw, _ = prepared
    reorder = skip_mode_positions(raw, tmp_path)
    data_bin = data_bin_with(prepared, tmp_path, {"train": (reorder, raw / "train.xx")})
    task, args = setup_task(
        data_bin, "transformer_dpe", "--encoder-embed-dim", "16", "--decoder-embed-dim", "16",
        "--encoder-ffn-embed-dim", "32", "--decoder-ffn-embed-dim", "32",
        "--decoder-attention-heads", "2", "--encoder-layers", "1", "--decoder-layers", "1",
        "--dpe-layers", "1", "--criterion", "label_smoothed_cross_entropy_with_order",
        "--order-loss-reduction", "batch-mean", "--order-lambda", "0.3",
    )
    model = task.build_model(args)
    criterion = task.build_criterion(args)
    task.load_dataset("train")
    dataset = task.datasets["train"]
    batch = dataset.collater([dataset[i] for i in range(8)])
    loss, _, log = criterion(model, batch)
    loss.backward()

    lines = [line.split() for line in reorder.read_text().splitlines()[:8]]
    aligned = sum(position != "-1" for line in lines for position in line)
    assert log["order_ntokens"] == aligned, "exactly the aligned tokens are supervised"
    assert aligned < sum(map(len, lines))
    assert torch.isfinite(loss), loss
    # the residual output's zero-initialized projection takes the first gradient
    dpe_grad = model.encoder.dpe_projection.weight.grad
    assert dpe_grad is not None and dpe_grad.abs().sum() > 0, "the order loss trains DPE"


def test_xlpe_refuses_positions_without_order_target(prepared, tmp_path):
    raw, _ = prepared
    reorder = skip_mode_positions(raw, tmp_path)
    data_bin = data_bin_with(prepared, tmp_path, {"train": (reorder, raw / "train.xx")})
    task, args = setup_task(data_bin, "transformer_xlpe", "--xlpe-heads", "1")
    task.build_model(args)
    task.load_dataset("train")
    first = next(k for k, line in enumerate(reorder.read_text().splitlines()) if "-1" in line.split())
    with pytest.raises(ReorderPositionsError, match=(
            rf"train\.reorder\.xx-yy\.bin line {first + 1}: token 1 has no position \(-1.*"
            r"--unaligned skip.*reads positions as input and needs a full permutation")):
        task.datasets["train"][first]


@pytest.mark.parametrize("redraw", [[], ["--reorder-noise-redraw"]])
def test_noise_settings_reach_the_training_split_only(prepared, tmp_path, redraw):
    raw, _ = prepared
    data_bin = data_bin_with(prepared, tmp_path, {
        split: (raw / f"{split}.reorder", raw / f"{split}.xx") for split in ("train", "valid")
    })
    task, _ = setup_task(data_bin, "transformer", "--reorder-noise", "0.1", "--seed", "7", *redraw)
    task.load_dataset("train")
    task.load_dataset("valid")
    train, valid = task.datasets["train"], task.datasets["valid"]
    assert (train.noise, train.seed, train.noise_redraw) == (0.1, 7, bool(redraw))
    assert valid.noise == 0.0, "the noise attack corrupts training positions only"


def test_a_missing_preorderer_fails_even_where_every_split_has_positions(prepared, tmp_path):
    # fairseq-generate used to ignore a wrong --preorderer and exit 0 on such a data-bin
    raw, _ = prepared
    data_bin = data_bin_with(prepared, tmp_path, {
        split: (raw / f"{split}.reorder", raw / f"{split}.xx") for split in ("train", "test")})
    with pytest.raises(InputError, match=r"nonexistent\.pt: no such preorderer checkpoint"):
        setup_task(data_bin, "transformer_xlpe", "--xlpe-heads", "1",
                   "--preorderer", str(tmp_path / "nonexistent.pt"))


def test_a_corrupt_reorder_index_names_its_file(prepared, tmp_path):
    raw, _ = prepared
    data_bin = data_bin_with(prepared, tmp_path, {"valid": (raw / "valid.reorder", raw / "valid.xx")})
    (data_bin / "valid.reorder.xx-yy.idx").write_bytes(b"not an index" * 10)
    task, _ = setup_task(data_bin, "transformer_dpe")
    with pytest.raises(ReorderPositionsError, match=r"valid\.reorder\.xx-yy\.idx: not a fairseq index"):
        task.load_dataset("valid")
