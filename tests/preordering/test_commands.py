"""Round trip through xlpe-preorder-train, xlpe-preorder and xlpe-reorder-score, and bad input."""
import pytest

from xlpe_fairseq.preordering import metrics, predict, train


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
