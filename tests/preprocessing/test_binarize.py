"""xlpe-binarize: validated reorder text -> fairseq mmap dataset, and back."""
import re

import pytest

from xlpe_fairseq.preprocessing.binarize import main


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def args(reorder, source, destdir):
    return ["--reorder", reorder, "--source", source, "--destdir", str(destdir),
            "--split", "train", "--source-lang", "he", "--target-lang", "en"]


def test_round_trip_through_fairseq_loader(tmp_path):
    from fairseq.data import data_utils

    source = write(tmp_path / "train.bpe.he", ["a b@@ c", "d", "e f g h"])
    reorder = write(tmp_path / "train.reorder", ["2 0 1", "0", "3 2 1 0"])
    main(args(reorder, source, tmp_path / "data-bin"))
    dataset = data_utils.load_indexed_dataset(str(tmp_path / "data-bin/train.reorder.he-en"),
                                              None)
    assert dataset is not None, "fairseq could not find the binarized reorder dataset"
    assert [dataset[k].tolist() for k in range(len(dataset))] == [[2, 0, 1], [0], [3, 2, 1, 0]]
    leftovers = [p.name for p in (tmp_path / "data-bin").iterdir()]
    assert sorted(leftovers) == ["train.reorder.he-en.bin", "train.reorder.he-en.idx"]


def test_tokens_without_order_target_survive_binarization(tmp_path):
    """-1 from `xlpe-reorder --unaligned skip` must come back as -1, not as 65535."""
    from fairseq.data import data_utils

    source = write(tmp_path / "train.bpe.he", ["a b c", "d e", "f"])
    reorder = write(tmp_path / "train.reorder", ["1 -1 0", "-1 0", "-1"])
    main(args(reorder, source, tmp_path / "data-bin"))
    dataset = data_utils.load_indexed_dataset(str(tmp_path / "data-bin/train.reorder.he-en"),
                                              None)
    assert [dataset[k].tolist() for k in range(len(dataset))] == [[1, -1, 0], [-1, 0], [-1]]


def test_long_sentences_keep_their_positions(tmp_path):
    from fairseq.data import data_utils

    n = 40000  # beyond int16
    source = write(tmp_path / "train.bpe.he", [" ".join(["w"] * n)])
    reorder = write(tmp_path / "train.reorder", [" ".join(map(str, reversed(range(n))))])
    main(args(reorder, source, tmp_path / "data-bin"))
    dataset = data_utils.load_indexed_dataset(str(tmp_path / "data-bin/train.reorder.he-en"),
                                              None)
    assert dataset[0][:2].tolist() == [n - 1, n - 2]


@pytest.mark.parametrize("bad_line,message", [
    ("1 0", r"train.reorder line 2: expected 3 positions .*found 2"),
    ("0 1 3", r"train.reorder line 2: position 3 .*out of range 0..2"),
    ("0 1 1", r"train.reorder line 2: position 1 occurs twice"),
    ("0 1 b", r"train.reorder line 2: 'b' is not an integer"),
    ("1 -1 1", r"train.reorder line 2: position 1 occurs twice"),
    ("2 -1 0", r"train.reorder line 2: position 2 .*out of range 0..1 \(2 tokens have an order target\)"),
])
def test_invalid_line_writes_nothing(tmp_path, capsys, bad_line, message):
    source = write(tmp_path / "train.bpe.he", ["a", "b c d"])
    reorder = write(tmp_path / "train.reorder", ["0", bad_line])
    with pytest.raises(SystemExit) as exit_info:
        main(args(reorder, source, tmp_path / "data-bin"))
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert not (tmp_path / "data-bin").exists(), \
        "nothing may be written on error, not even the destination folder"


def test_mismatched_line_counts(tmp_path, capsys):
    source = write(tmp_path / "train.bpe.he", ["a", "b"])
    reorder = write(tmp_path / "train.reorder", ["0"])
    with pytest.raises(SystemExit):
        main(args(reorder, source, tmp_path / "data-bin"))
    assert "train.reorder: 1 lines, " in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--split", "--source-lang", "--target-lang"])
@pytest.mark.parametrize("value", ["../x", "a/b", "..", ""])
def test_names_that_would_leave_the_destination_are_a_command_line_error(tmp_path, capsys,
                                                                         option, value):
    source = write(tmp_path / "train.bpe.he", ["a"])
    reorder = write(tmp_path / "train.reorder", ["0"])
    argv = args(reorder, source, tmp_path / "data-bin")
    argv[argv.index(option) + 1] = value
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert f"{option} must be a plain name" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.bpe.he", "train.reorder"]


def test_replacing_positions_already_in_the_destination_is_said(tmp_path, capsys):
    source = write(tmp_path / "train.bpe.he", ["a b"])
    for positions in ("0 1", "1 0"):
        reorder = write(tmp_path / "train.reorder", [positions])
        main(args(reorder, source, tmp_path / "data-bin"))
    first, second = capsys.readouterr().err.strip().splitlines()[-2:]
    prefix = tmp_path / "data-bin" / "train.reorder.he-en"
    assert first == f"xlpe-binarize: wrote {prefix}.bin/.idx (1 sentences)", first
    assert second == f"xlpe-binarize: replaced {prefix}.bin/.idx (1 sentences)", second
