"""Round trip through xlpe-preorder-train, xlpe-preorder and xlpe-reorder-score, and bad input."""
import importlib
import os

import pytest
import torch

from xlpe_fairseq.preordering import ensemble, metrics, predict, train
from xlpe_fairseq.preordering.preorderer import Preorderer
from xlpe_fairseq.preordering.vocabulary import Vocabulary
from xlpe_fairseq.workflow.prepare_settings import settings_of


def write_lines(path, rows):
    path.write_text("".join(" ".join(map(str, row)) + "\n" for row in rows))
    return str(path)


@pytest.fixture
def files(tmp_path, synthetic_train, synthetic_test):
    sentences, positions = synthetic_train
    test_sentences, test_positions = synthetic_test
    return {
        "source": write_lines(tmp_path / "train.src", sentences[:300]),
        "reorder": write_lines(tmp_path / "train.reorder", positions[:300]),
        "valid_source": write_lines(tmp_path / "valid.src", test_sentences[:50]),
        "valid_reorder": write_lines(tmp_path / "valid.reorder", test_positions[:50]),
        "model": str(tmp_path / "preorderer.pt"),
        "output": str(tmp_path / "valid.predicted.reorder"),
    }


def test_round_trip(files, capsys):
    train.main(["--source", files["source"], "--reorder", files["reorder"],
                "--valid-source", files["valid_source"], "--valid-reorder", files["valid_reorder"],
                "--save", files["model"], "--epochs", "1", "--hidden-dim", "16",
                "--embed-dim", "8"])
    predict.main(["--preorderer", files["model"], "--source", files["valid_source"],
                  "--output", files["output"]])
    lines = open(files["output"]).read().splitlines()
    sources = open(files["valid_source"]).read().splitlines()
    assert len(lines) == len(sources)
    for line, source in zip(lines, sources):
        assert sorted(map(int, line.split())) == list(range(len(source.split())))
    capsys.readouterr()
    metrics.main(["--hypothesis", files["output"], "--reference", files["valid_reorder"]])
    report = capsys.readouterr().out
    assert "hypothesis" in report and "monotone" in report and "Kendall tau" in report


def test_the_structured_loss_is_an_option_of_the_training_command(files, capsys):
    train.main(["--source", files["source"], "--reorder", files["reorder"],
                "--save", files["model"], "--epochs", "1", "--hidden-dim", "16",
                "--embed-dim", "8", "--loss", "structured", "--margin", "0.5"])
    assert "epoch 1: loss" in capsys.readouterr().err
    sources = [line.split() for line in open(files["valid_source"]).read().splitlines()]
    for source, positions in zip(sources, Preorderer.load(files["model"]).predict(sources)):
        assert sorted(positions) == list(range(len(source)))
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--source", files["source"], "--reorder", files["reorder"],
                    "--save", files["model"], "--loss", "hinge"])
    assert exit_info.value.code == 2, "an unknown --loss is a usage error"
    assert "invalid choice: 'hinge'" in capsys.readouterr().err


@pytest.mark.parametrize("option, value, expected", [
    ("--epochs", "0", "expected a whole number from 1 to 9223372036854775807, got '0'"),
    ("--batch-tokens", "-5", "expected a whole number from 1 to 9223372036854775807, got '-5'"),
    ("--max-train-length", "1.5", "expected a whole number from 1 to 9223372036854775807, got '1.5'"),
    ("--layers", "0", "expected a whole number from 1 to 16, got '0'"),
    ("--embed-dim", "0", "expected a whole number from 1 to 4096, got '0'"),
    ("--embed-dim", "2000000000", "expected a whole number from 1 to 4096, got '2000000000'"),
    ("--max-vocab", "0", "expected a whole number from 1 to 9223372036854775807, got '0'"),
    ("--dropout", "1", "expected a finite number of at least 0 and below 1, got '1'"),
    ("--dropout", "x", "expected a finite number of at least 0 and below 1, got 'x'"),
    ("--lr", "0", "expected a finite number above 0, got '0'"),
    ("--lr", "nan", "expected a finite number above 0, got 'nan'"),
    ("--lr", "inf", "expected a finite number above 0, got 'inf'"),
    ("--margin", "-1", "expected a finite number of at least 0, got '-1'"),
    ("--max-seconds", "0", "expected a finite number above 0, got '0'"),
    ("--seed", "-1", "expected a whole number from 0 to 4294967295, got '-1'"),
    ("--threads", "100000", "(the cores this process may use), got '100000'"),
])
def test_a_training_size_out_of_range_is_a_usage_error(files, capsys, option, value, expected):
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--source", files["source"], "--reorder", files["reorder"],
                    "--save", files["model"], option, value])
    assert exit_info.value.code == 2, f"{option} {value} must stop before any training"
    assert expected in capsys.readouterr().err
    assert not os.path.exists(files["model"]), "no model is written"


def expect_input_error(main, argv, capsys, *fragments):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 1
    message = capsys.readouterr().err
    for fragment in fragments:
        assert fragment in message
    return message


def test_mismatched_line_counts(files, tmp_path, capsys):
    short = write_lines(tmp_path / "short.reorder", [[0]])
    expect_input_error(train.main, ["--source", files["source"], "--reorder", short,
                                    "--save", files["model"]],
                       capsys, "short.reorder", "differ in length")


def test_a_save_name_too_long_to_write_is_refused_before_training(files, tmp_path, capsys):
    name = tmp_path / ("p" * 250 + ".pt")
    expect_input_error(train.main, ["--source", files["source"], "--reorder", files["reorder"],
                                    "--save", str(name), "--epochs", "1"],
                       capsys, "a file name of 253 bytes, longer than")
    assert not any(path.name.startswith(".ppp") for path in tmp_path.iterdir())


def test_bad_reorder_line_names_file_and_line(files, tmp_path, capsys):
    lines = open(files["reorder"]).read().splitlines()
    lines[4] = " ".join(["0"] * len(lines[4].split()))
    (tmp_path / "bad.reorder").write_text("\n".join(lines) + "\n")
    expect_input_error(train.main, ["--source", files["source"],
                                    "--reorder", str(tmp_path / "bad.reorder"),
                                    "--save", files["model"]],
                       capsys, "bad.reorder line 5", "permutation")


def test_score_rejects_a_hypothesis_of_the_wrong_length(files, tmp_path, capsys):
    references = [line.split() for line in open(files["valid_reorder"])]
    hypotheses = [list(range(len(r))) for r in references]
    hypotheses[2].append(len(hypotheses[2]))
    bad = write_lines(tmp_path / "hyp.reorder", hypotheses)
    expect_input_error(metrics.main, ["--hypothesis", bad, "--reference", files["valid_reorder"]],
                       capsys, "hyp.reorder line 3")


def test_predict_refuses_to_overwrite_its_input(files, capsys):
    train.main(["--source", files["source"], "--reorder", files["reorder"],
                "--save", files["model"], "--epochs", "1", "--hidden-dim", "8",
                "--embed-dim", "8"])
    expect_input_error(predict.main, ["--preorderer", files["model"],
                                      "--source", files["source"], "--output", files["source"]],
                       capsys, "overwrite")


def test_predict_rejects_a_file_that_is_not_a_checkpoint(files, capsys):
    expect_input_error(predict.main, ["--preorderer", files["source"],
                                      "--source", files["source"], "--output", files["output"]],
                       capsys, "train.src", "not a preorderer checkpoint")


def test_training_without_a_sentence_of_two_tokens_is_refused(tmp_path, capsys):
    source = write_lines(tmp_path / "train.src", [["a"], ["b"]])
    positions = write_lines(tmp_path / "train.reorder", [[0], [0]])
    expect_input_error(train.main, ["--source", source, "--reorder", positions, "--save",
                                    str(tmp_path / "p.pt")],
                       capsys, f"{source}: no sentence of 2 to --max-train-length (200) tokens")
    assert not (tmp_path / "p.pt").exists()


def damaged_checkpoints(tmp_path):
    """``{what: path}`` of preorderer checkpoints that do not load."""
    vocabulary = Vocabulary.build([["a", "b"]])
    good = Preorderer.create(vocabulary)
    good.save(str(tmp_path / "good.pt"))
    checkpoint = torch.load(tmp_path / "good.pt", weights_only=True)
    damaged = {}
    for what, change in {
        "missing key": lambda c: c.pop("state_dict"),
        "mismatched shapes": lambda c: c["config"].update(hidden_dim=7),
        "unknown setting": lambda c: c["config"].update(colour="red"),
        "NaN weights": lambda c: c["state_dict"]["embed.weight"].fill_(float("nan")),
        "infinite penalty": lambda c: c.update(inversion_penalty=float("inf")),
        "cut-down vocabulary": lambda c: c.update(vocabulary=c["vocabulary"][:-1]),
        "<pad> twice": lambda c: c.update(vocabulary=c["vocabulary"][:-1] + ["<pad>"]),
        "padding index out of range": lambda c: c["config"].update(padding_idx=99),
    }.items():
        copy = {**checkpoint, "config": dict(checkpoint["config"]),
                "state_dict": {k: v.clone() for k, v in checkpoint["state_dict"].items()}}
        change(copy)
        torch.save(copy, tmp_path / f"{what}.pt")
        damaged[what] = tmp_path / f"{what}.pt"
    damaged["random bytes"] = tmp_path / "random.pt"
    damaged["random bytes"].write_bytes(bytes(range(256)) * 4)
    damaged["truncated"] = tmp_path / "truncated.pt"
    damaged["truncated"].write_bytes((tmp_path / "good.pt").read_bytes()[:700])
    return damaged


def test_a_damaged_checkpoint_is_named_in_one_line(tmp_path, capsys):
    source = write_lines(tmp_path / "test.src", [["a", "b"]])
    for what, path in damaged_checkpoints(tmp_path).items():
        message = expect_input_error(
            predict.main, ["--preorderer", str(path), "--source", source, "--output",
                           str(tmp_path / "out")], capsys, f"xlpe-preorder: error: {path}: ")
        assert len(message.splitlines()) == 1, f"{what}: {message}"
        assert "Traceback" not in message
        # torch's advice to load with weights_only=False must not reach the user
        assert "weights_only" not in message, f"{what}: {message}"


def test_a_vocabulary_with_a_token_twice_is_damaged(tmp_path, capsys):
    path = damaged_checkpoints(tmp_path)["<pad> twice"]
    source = write_lines(tmp_path / "test.src", [["a", "b"]])
    message = expect_input_error(
        predict.main, ["--preorderer", str(path), "--source", source, "--output",
                       str(tmp_path / "out")], capsys, f"xlpe-preorder: error: {path}: ")
    assert ("damaged preorderer checkpoint (ValueError: '<pad>' twice in the vocabulary "
            "(entries 0 and 3))") in message, message


def test_an_ensemble_refuses_a_damaged_member(tmp_path, capsys):
    paths = damaged_checkpoints(tmp_path)
    message = expect_input_error(
        ensemble.main, ["--preorderers", str(tmp_path / "good.pt"), str(paths["NaN weights"]),
                        "--save", str(tmp_path / "ensemble.pt")],
        capsys, f"xlpe-preorder-ensemble: error: {paths['NaN weights']}: damaged preorderer "
        "checkpoint (weights embed.weight hold NaN or infinite values)")
    assert len(message.splitlines()) == 1, message
    assert not (tmp_path / "ensemble.pt").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_a_missing_cuda_device_is_named_as_such(tmp_path, capsys):
    Preorderer.create(Vocabulary.build([["a", "b"]])).save(str(tmp_path / "p.pt"))
    source = write_lines(tmp_path / "test.src", [["a", "b"]])
    expect_input_error(predict.main, ["--preorderer", str(tmp_path / "p.pt"), "--source",
                                      source, "--output", str(tmp_path / "out"),
                                      "--device", "cuda"],
                       capsys, "--device cuda: no CUDA device on this machine")


def test_scoring_no_sentence_of_two_tokens_is_refused(tmp_path, capsys):
    for name, rows in (("empty", []), ("short", [[0], [0]])):
        path = write_lines(tmp_path / f"{name}.reorder", rows)
        expect_input_error(metrics.main, ["--hypothesis", path, "--reference", path], capsys,
                           path)


def test_a_length_mismatch_names_hypothesis_and_reference(tmp_path, capsys):
    hypothesis = write_lines(tmp_path / "hyp.reorder", [[0, 1], [1, 0]])
    reference = write_lines(tmp_path / "ref.reorder", [[0, 1], [1, 0, 2]])
    expect_input_error(metrics.main, ["--hypothesis", hypothesis, "--reference", reference],
                       capsys, f"{hypothesis} line 2: 2 positions, but {reference} line 2 has 3")


def test_sentences_left_out_of_training_are_counted(tmp_path, capsys):
    source = write_lines(tmp_path / "train.src", [["a", "b"], ["b", "a", "c"], ["a"]])
    positions = write_lines(tmp_path / "train.reorder", [[1, 0], [0, 1, 2], [0]])
    train.main(["--source", source, "--reorder", positions, "--save", str(tmp_path / "p.pt"),
                "--epochs", "1", "--max-train-length", "2", "--hidden-dim", "8",
                "--embed-dim", "8"])
    assert "2 of 3 sentences left out of training: fewer than 2 or more than 2 tokens" in \
        capsys.readouterr().err


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_the_gpu_path_trains_predicts_and_agrees_with_the_cpu(files):
    """PREORDER_DEVICE=cuda: xlpe-preorder-train and xlpe-preorder on the GPU; the checkpoint
    loads on the CPU and predicts the same positions there, but for near ties."""
    train.main(["--source", files["source"], "--reorder", files["reorder"],
                "--valid-source", files["valid_source"], "--valid-reorder", files["valid_reorder"],
                "--save", files["model"], "--epochs", "2", "--hidden-dim", "16",
                "--embed-dim", "8", "--loss", "structured", "--device", "cuda",
                "--sample", "200"])
    predict.main(["--preorderer", files["model"], "--source", files["valid_source"],
                  "--output", files["output"], "--device", "cuda"])
    on_gpu = open(files["output"]).read().splitlines()
    sources = [line.split() for line in open(files["valid_source"]).read().splitlines()]
    on_cpu = [" ".join(map(str, p)) for p in Preorderer.load(files["model"]).predict(sources)]
    for line, source in zip(on_gpu, sources):
        assert sorted(map(int, line.split())) == list(range(len(source))), line
    # float sums differ between devices: a near tie in the search may fall the other way
    same = sum(g == c for g, c in zip(on_gpu, on_cpu))
    assert same >= 0.95 * len(sources), \
        f"the GPU's positions agree with the CPU's on {same} of {len(sources)} sentences"


@pytest.mark.parametrize("command, argv", [
    ("train", ["--source", "s", "--reorder", "r", "--save", "m"]),
    ("ensemble", ["--preorderers", "a", "b", "--save", "m"]),
    ("cross_fit", ["--source", "s", "--reorder", "r", "--output", "o"]),
])
def test_torch_threads_default_to_one_as_the_recipes_run_them(command, argv):
    """All cores' threads stall beside another process on the same cores (11 times as long
    by hand beside one busy process); one thread, the recipes' PREORDER_THREADS, does not."""
    args = importlib.import_module(f"xlpe_fairseq.preordering.{command}").build_parser() \
        .parse_args(argv)
    recipes = settings_of({"SRC": "en", "TGT": "de"}, {})["PREORDER_THREADS"]
    assert args.threads == int(recipes) == 1, \
        f"xlpe-preorder {command} --threads defaults to {args.threads}, the recipes to {recipes}"
