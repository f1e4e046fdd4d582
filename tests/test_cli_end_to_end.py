"""End to end through the command lines, with --user-dir, on a tiny synthetic corpus:
fairseq-preprocess -> xlpe-binarize -> fairseq-train -> resume -> fairseq-generate
(beam, ensemble, --score-reference, --print-alignment) -> fairseq-interactive.

The commands run as ``python -m`` runs them, forked from a process that has imported torch
and the libraries fairseq imports (``warm_python``); the data-parallel test starts real
processes."""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from support.errors import assert_plugin_error
from support.fairseq_commands import (
    FAMILIES,
    POSITION_FAMILIES,
    USER_DIR,
    binarize_positions,
    binarized_corpus,
    generate,
    linked_data_bin,
    run,
    training_args,
)
from xlpe_fairseq.evaluation.generate_output import read_hypotheses


def train(data_bin, save_dir, max_update, *extra):
    return run("fairseq_cli.train", *training_args(data_bin, "dpe", save_dir, max_update, 800),
               "--label-smoothing", "0.1", "--order-lambda", "0.5", *extra)


@pytest.fixture(scope="module")
def data_bin(tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    return binarized_corpus(root, {"train": 300, "valid": 20, "test": 20})[1]


@pytest.fixture(scope="module")
def checkpoints(data_bin):
    save_dir = data_bin.parent / "checkpoints"
    first = train(data_bin, save_dir, 4)
    assert "order_loss" in first.stdout + first.stderr, "training must log order_loss"
    resumed = train(data_bin, save_dir, 8)
    log = resumed.stdout + resumed.stderr
    assert "Loaded checkpoint" in log and "@ 4 updates" in log, f"resume did not load:\n{log[-2000:]}"
    assert "num_updates 8" in log, "training must continue from update 4 to 8"
    return save_dir


def test_beam_search_translates_every_sentence_with_alignments(data_bin, checkpoints, tmp_path):
    out = generate(data_bin, checkpoints / "checkpoint_last.pt", "--beam", "3", "--print-alignment")
    (tmp_path / "gen.out").write_text(out.stdout)
    assert len(read_hypotheses(tmp_path / "gen.out", 20)) == 20
    assert any(line.startswith("A-") for line in out.stdout.splitlines()), "no alignment lines"


def test_reloaded_checkpoint_gives_identical_translations(data_bin, checkpoints):
    first = generate(data_bin, checkpoints / "checkpoint_last.pt", "--beam", "2")
    second = generate(data_bin, checkpoints / "checkpoint_last.pt", "--beam", "2")
    hypotheses = [line for line in first.stdout.splitlines() if line.startswith(("H-", "P-"))]
    assert hypotheses and hypotheses == [
        line for line in second.stdout.splitlines() if line.startswith(("H-", "P-"))
    ]


def test_resumed_training_ends_where_uninterrupted_training_ends(data_bin, checkpoints, tmp_path):
    """xlpe-study resumes interrupted runs and reports them beside uninterrupted ones: resuming
    from update 4 must give the very parameters of one run straight to update 8."""
    train(data_bin, tmp_path, 8)
    straight = torch.load(tmp_path / "checkpoint_last.pt", map_location="cpu")["model"]
    resumed = torch.load(checkpoints / "checkpoint_last.pt", map_location="cpu")["model"]
    differing = [name for name in straight if not torch.equal(straight[name], resumed[name])]
    assert not differing, f"resumed training differs from uninterrupted training in {differing[:5]}"


def test_ensemble_and_score_reference(data_bin, checkpoints):
    ensemble = f"{checkpoints / 'checkpoint_last.pt'}:{checkpoints / 'checkpoint_best.pt'}"
    out = generate(data_bin, ensemble, "--beam", "2")
    assert sum(line.startswith("H-") for line in out.stdout.splitlines()) == 20
    scored = generate(data_bin, checkpoints / "checkpoint_last.pt", "--score-reference")
    assert sum(line.startswith("H-") for line in scored.stdout.splitlines()) == 20


def test_interactive_translates_raw_input_without_reorder_files(data_bin, checkpoints):
    out = run("fairseq_cli.interactive", data_bin, "--user-dir", USER_DIR, "--task",
              "translation_reorder", "--path", checkpoints / "checkpoint_last.pt", "--beam", "2",
              "--source-lang", "xx", "--target-lang", "yy",
              stdin="s1 s2 s4\ns8 s3\n")
    assert sum(line.startswith("H-") for line in out.stdout.splitlines()) == 2


@pytest.mark.parametrize("family", POSITION_FAMILIES)
def test_position_baselines_train_decode_ensemble_score_and_run_interactively(
        data_bin, tmp_path, family):
    save_dir = tmp_path / "ckpt"
    log = run("fairseq_cli.train", *training_args(data_bin, family, save_dir, max_update=2))
    assert "num_updates 2" in log.stdout + log.stderr, f"{family} did not train"
    ensemble = f"{save_dir / 'checkpoint_last.pt'}:{save_dir / 'checkpoint_best.pt'}"
    out = generate(data_bin, ensemble, "--beam", "3", "--print-alignment")
    (tmp_path / "gen.out").write_text(out.stdout)
    assert len(read_hypotheses(tmp_path / "gen.out", 20)) == 20
    scored = generate(data_bin, save_dir / "checkpoint_last.pt", "--score-reference")
    assert sum(line.startswith("H-") for line in scored.stdout.splitlines()) == 20
    out = run("fairseq_cli.interactive", data_bin, "--user-dir", USER_DIR, "--task",
              "translation_reorder", "--path", save_dir / "checkpoint_last.pt", "--beam", "2",
              "--source-lang", "xx", "--target-lang", "yy", stdin="s1 s2 s4\ns8 s3\n")
    assert sum(line.startswith("H-") for line in out.stdout.splitlines()) == 2


def test_dpe_order_writes_the_network_s_permutation_of_each_sentence(data_bin, checkpoints,
                                                                     tmp_path):
    """``xlpe-dpe-order`` on the trained DPE checkpoint: a permutation of each test sentence's
    words, in corpus order, that ``xlpe-reorder-score`` scores against the test positions."""
    raw = data_bin.parent / "raw"
    output = tmp_path / "test.dpe.reorder"
    run("xlpe_fairseq.evaluation.dpe_order", "--checkpoint", checkpoints / "checkpoint_last.pt",
        "--data-bin", data_bin, "--split", "test", "--output", output)
    sources = (raw / "test.xx").read_text().splitlines()
    orders = [[int(p) for p in line.split()] for line in output.read_text().splitlines()]
    assert len(orders) == len(sources), "one line a sentence of the split"
    for n, (order, source) in enumerate(zip(orders, sources), 1):
        assert sorted(order) == list(range(len(source.split()))), \
            f"line {n}: a permutation of the sentence's {len(source.split())} words, got {order}"
    scored = run("xlpe_fairseq.preordering.metrics", "--hypothesis", output,
                 "--reference", raw / "test.reorder")
    assert "Kendall tau" in scored.stdout, scored.stdout

    # the network reads only the source: the train split needs no DPE positions either
    text_only = linked_data_bin(data_bin, tmp_path / "text-only", lambda name: "reorder" not in name)
    run("xlpe_fairseq.evaluation.dpe_order", "--checkpoint", checkpoints / "checkpoint_last.pt",
        "--data-bin", text_only, "--split", "train", "--output", tmp_path / "train.dpe.reorder")
    trains = (raw / "train.xx").read_text().splitlines()
    orders = [line.split() for line in (tmp_path / "train.dpe.reorder").read_text().splitlines()]
    assert [len(order) for order in orders] == [len(line.split()) for line in trains], \
        "one permutation a training sentence, read without the split's DPE positions"


def test_dpe_training_without_train_reorder_file_fails_clearly(data_bin, tmp_path):
    bare = linked_data_bin(data_bin, tmp_path / "bare", keep=lambda name: ".reorder." not in name)
    out = run("fairseq_cli.train", *training_args(bare, "dpe", tmp_path / "ckpt", max_update=1),
              expect_failure=True)
    assert_plugin_error(out, 1, "train.reorder.xx-yy.bin/.idx not found")


def test_positions_of_another_split_stop_training_in_one_line(data_bin, tmp_path):
    raw = data_bin.parent / "raw"
    swapped = linked_data_bin(data_bin, tmp_path / "swapped", keep=lambda name: ".reorder." not in name)
    binarize_positions((raw / "valid.reorder", raw / "valid.xx", swapped, "train"))
    out = run("fairseq_cli.train", *training_args(swapped, "dpe", tmp_path / "ckpt", max_update=1),
              expect_failure=True)
    assert_plugin_error(out, 1, "train.reorder.xx-yy.bin:", "20 lines", "300 sentences")


def test_a_plugin_option_out_of_range_is_a_command_line_error(data_bin, tmp_path):
    out = run("fairseq_cli.train", *training_args(data_bin, "dpe", tmp_path / "ckpt", max_update=1),
              "--order-lambda", "2", expect_failure=True)
    assert_plugin_error(out, 2, "--order-lambda", "at least 0 and at most 1", "2.0")


@pytest.fixture(scope="module")
def xlpe_run(data_bin):
    """transformer_xlpe trained on oracle positions (with the noise attack), a preorderer
    trained on the same positions, and test positions written by the preorderer."""
    raw, root = data_bin.parent / "raw", data_bin.parent
    preorderer = root / "preorderer.pt"
    run("xlpe_fairseq.preordering.train", "--source", raw / "train.xx", "--reorder",
        raw / "train.reorder", "--save", preorderer, "--embed-dim", "16", "--hidden-dim", "16",
        "--epochs", "2")
    run("xlpe_fairseq.preordering.predict", "--preorderer", preorderer, "--source",
        raw / "test.xx", "--output", root / "test.predicted.reorder")
    with_test_positions = linked_data_bin(data_bin, root / "data-bin-xlpe")
    binarize_positions((root / "test.predicted.reorder", raw / "test.xx", with_test_positions,
                        "test"))
    save_dir = root / "checkpoints-xlpe"
    log = run("fairseq_cli.train", *training_args(data_bin, "xlpe", save_dir, max_tokens=800),
              "--reorder-noise", "0.1", "--preorderer", preorderer)
    assert "valid on 'valid' subset" in log.stdout + log.stderr, "validation runs on predicted positions"
    return save_dir / "checkpoint_last.pt", preorderer, with_test_positions


def test_xlpe_generates_from_written_positions_and_from_the_preorderer_alike(data_bin, xlpe_run):
    checkpoint, preorderer, with_test_positions = xlpe_run
    from_files = generate(with_test_positions, checkpoint, "--beam", "2")
    on_the_fly = generate(data_bin, checkpoint, "--beam", "2", "--preorderer", preorderer)
    hypotheses = sorted(line for line in from_files.stdout.splitlines() if line.startswith("H-"))
    assert len(hypotheses) == 20
    assert hypotheses == sorted(
        line for line in on_the_fly.stdout.splitlines() if line.startswith("H-")
    ), "the preorderer inside fairseq-generate must give the positions xlpe-preorder wrote"


def test_a_reloaded_checkpoint_weights_pe_xl_as_at_the_update_it_was_saved(data_bin, xlpe_run,
                                                                            tmp_path):
    from fairseq import checkpoint_utils

    _, preorderer, _ = xlpe_run
    save_dir = tmp_path / "checkpoints"
    run("fairseq_cli.train", *training_args(data_bin, "xlpe", save_dir, max_update=2,
                                            max_tokens=800), "--xlpe-xl-warmup-updates", "8",
        "--preorderer", preorderer, "--disable-validation")
    models, _ = checkpoint_utils.load_model_ensemble([str(save_dir / "checkpoint_last.pt")],
                                                     arg_overrides={"data": str(data_bin)})
    assert models[0].encoder.pe_in.xl_weight == 0.25, \
        "saved at update 2 of an 8-update warm-up, the model must decode with PE_XL V at 1/4"


def test_xlpe_nbest_reorderings_decode_through_fairseq_generate_and_interactive(data_bin, xlpe_run):
    checkpoint, preorderer, with_test_positions = xlpe_run

    def hypotheses(out):
        return sorted(line for line in out.stdout.splitlines() if line.startswith("H-"))

    one_best = hypotheses(generate(with_test_positions, checkpoint, "--beam", "2"))
    chosen = hypotheses(generate(data_bin, checkpoint, "--beam", "2", "--preorderer", preorderer,
                                 "--preorderer-nbest", "4"))
    assert len(chosen) == 20, "one translation a sentence, whatever the number of reorderings"
    # a search score that outweighs any translation score keeps the preorderer's best order
    dominated = hypotheses(generate(data_bin, checkpoint, "--beam", "2", "--preorderer",
                                    preorderer, "--preorderer-nbest", "4",
                                    "--preorderer-nbest-weight", "1e6"))
    assert dominated == one_best, "weight 1e6 must give the 1-best reordering's translations"
    out = run("fairseq_cli.interactive", data_bin, "--user-dir", USER_DIR, "--task",
              "translation_reorder", "--path", checkpoint, "--beam", "2", "--source-lang", "xx",
              "--target-lang", "yy", "--preorderer", preorderer, "--preorderer-nbest", "3",
              stdin="s1 s2 s4\ns8 s3\n")
    assert sum(line.startswith("H-") for line in out.stdout.splitlines()) == 2


def test_xlpe_interactive_predicts_positions_for_raw_input(data_bin, xlpe_run):
    checkpoint, preorderer, _ = xlpe_run
    out = run("fairseq_cli.interactive", data_bin, "--user-dir", USER_DIR, "--task",
              "translation_reorder", "--path", checkpoint, "--beam", "2", "--source-lang", "xx",
              "--target-lang", "yy", "--preorderer", preorderer, stdin="s1 s2 s4\ns8 s3\n")
    assert sum(line.startswith("H-") for line in out.stdout.splitlines()) == 2


def test_xlpe_without_positions_or_preorderer_fails_clearly(data_bin, xlpe_run):
    checkpoint, _, _ = xlpe_run
    out = run("fairseq_cli.generate", data_bin, "--user-dir", USER_DIR, "--task",
              "translation_reorder", "--path", checkpoint, "--gen-subset", "test",
              expect_failure=True)
    assert_plugin_error(out, 1, "test.reorder.xx-yy.bin/.idx not found")
    assert "--preorderer" in out.stderr


requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def oracle_data_bin(data_bin):
    """The binarized corpus with oracle reorder positions for every split."""
    raw = data_bin.parent / "raw"
    oracle = linked_data_bin(data_bin, data_bin.parent / "data-bin-oracle")
    binarize_positions(*((raw / f"{split}.reorder", raw / f"{split}.xx", oracle, split)
                         for split in ("valid", "test")))
    return oracle


@pytest.mark.parametrize("family", FAMILIES)
def test_data_parallel_training_on_two_workers(oracle_data_bin, tmp_path, family):
    """Two fairseq-train workers under PyTorch's DDP (c10d) with gloo: on the GPU where there is
    one, else on the CPU through a launcher that leaves out the GPU-only ``device_ids``."""
    on_gpu = torch.cuda.is_available()
    trainer = (["-m", "fairseq_cli.train"] if on_gpu
               else [str(Path(__file__).parent / "cpu_data_parallel_train.py"), "--cpu"])
    distributed = ["--distributed-world-size", "2", "--distributed-init-method",
                   f"tcp://127.0.0.1:{free_port()}", "--distributed-no-spawn",
                   "--distributed-backend", "gloo", "--ddp-backend", "c10d"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    log_paths = [tmp_path / f"worker{rank}.log" for rank in (0, 1)]
    workers = []
    for rank, log_path in enumerate(log_paths):
        with open(log_path, "w") as log_file:
            workers.append(subprocess.Popen(
                [sys.executable, *trainer,
                 *map(str, training_args(oracle_data_bin, family, tmp_path / "ckpt")),
                 *distributed, "--distributed-rank", str(rank)],
                stdout=log_file, stderr=subprocess.STDOUT, text=True, env=env))
    # a worker that fails leaves the other waiting in a collective: stop both then
    deadline = time.monotonic() + 300
    while (any(worker.poll() is None for worker in workers) and time.monotonic() < deadline
           and not any(worker.poll() for worker in workers)):
        time.sleep(0.2)
    for worker in workers:
        if worker.poll() is None:
            worker.kill()
        worker.wait()
    logs = [log_path.read_text() for log_path in log_paths]
    failed = "".join(f"\n--- worker {rank} exited with {worker.returncode}:\n{log[-3000:]}"
                     for rank, (worker, log) in enumerate(zip(workers, logs)) if worker.returncode)
    assert not failed, f"{family}: a worker failed or timed out (the other is then killed):{failed}"
    assert "distributed init (rank 1)" in logs[1], f"{family}: no second worker:\n{logs[1][-2000:]}"
    assert "num_updates 4" in logs[0], f"{family}: rank 0 did not train 4 updates:\n{logs[0][-2000:]}"
    scored = generate(oracle_data_bin, tmp_path / "ckpt" / "checkpoint_last.pt", "--score-reference")
    assert sum(line.startswith("H-") for line in scored.stdout.splitlines()) == 20


@requires_cuda
@pytest.mark.parametrize("family", FAMILIES)
def test_fp16_training_and_generation_on_gpu(oracle_data_bin, tmp_path, family):
    log = run("fairseq_cli.train", *training_args(oracle_data_bin, family, tmp_path / "ckpt"),
              "--fp16")
    assert "num_updates 4" in log.stdout + log.stderr
    out = generate(oracle_data_bin, tmp_path / "ckpt" / "checkpoint_last.pt", "--beam", "3", "--fp16")
    assert sum(line.startswith("H-") for line in out.stdout.splitlines()) == 20
