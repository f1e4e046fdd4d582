"""A data-bin whose files fairseq cannot read (a truncated .idx or .bin, a split binarized with
another dictionary, dictionaries that do not fit the checkpoint) is one line naming the file
in fairseq-generate and the xlpe-* commands, not fairseq's traceback or numpy's
"Exception ignored in MMapIndexedDataset.__del__"; a run prints no hydra DEBUG lines."""
import os
import shutil
import subprocess
import sys

import pytest
import torch

from evaluation.tiny_checkpoints import TWO_DECODER_LAYERS, make_corpus, train
from support.errors import assert_plugin_error
from xlpe_fairseq.data.indexed_files import check_indexed_file
from xlpe_fairseq.io import InputError

USER_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "xlpe_fairseq")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    corpus = make_corpus(tmp_path_factory.mktemp("data-bin-files"))
    return corpus["data_bin"], train(corpus, "untied", "--arch", "transformer",
                                     *TWO_DECODER_LAYERS)


def damaged_copy(data_bin, tmp_path, name, keep_bytes=None, text=None):
    copy = tmp_path / "data-bin"
    shutil.copytree(data_bin, copy)
    if keep_bytes is not None:
        (copy / name).write_bytes((data_bin / name).read_bytes()[:keep_bytes])
    if text is not None:
        (copy / name).write_text(text)
    return copy


@pytest.mark.parametrize("name, keep_bytes, message", [
    ("test.xx-yy.xx.idx", 30, "test.xx-yy.xx.idx: truncated (30 bytes, 170 for the 12 sentences "
     "its header counts); binarize the split again"),
    ("test.xx-yy.xx.idx", 0, "test.xx-yy.xx.idx: truncated (0 bytes, not even its header)"),
    ("test.xx-yy.yy.bin", 40, "test.xx-yy.yy.bin: truncated (40 bytes, "),
])
def test_a_truncated_file_is_named(tiny, tmp_path, name, keep_bytes, message):
    data_bin, _ = tiny
    copy = damaged_copy(data_bin, tmp_path, name, keep_bytes=keep_bytes)
    with pytest.raises(InputError) as error:
        check_indexed_file(str(copy / name.rsplit(".", 1)[0]), 40, "dict")
    assert str(error.value).startswith(f"{copy / name}{message[len(name):]}"), str(error.value)


def test_token_ids_beyond_the_dictionary_are_named(tiny):
    data_bin, _ = tiny
    prefix = str(data_bin / "test.xx-yy.xx")
    check_indexed_file(prefix, 40, "dict.xx.txt")
    with pytest.raises(InputError, match=r"test\.xx-yy\.xx\.bin: token id \d+, beyond the 10 "
                       r"entries of dict\.xx\.txt: the split was binarized with another "
                       "dictionary"):
        check_indexed_file(prefix, 10, "dict.xx.txt")


def fairseq_generate(data_bin, checkpoint, launcher=False):
    """fairseq-generate of the test split, as installed or (``launcher``) as the xlpe-*
    commands run it."""
    program = ([sys.executable, "-m", "xlpe_fairseq_cli.fairseq", "fairseq-generate"] if launcher
               else [os.path.join(os.path.dirname(sys.executable), "fairseq-generate")])
    command = [*program, str(data_bin),
               "--user-dir", USER_DIR, "--task", "translation_reorder", "--path", str(checkpoint),
               "--gen-subset", "test", "--required-batch-size-multiple", "1", "--num-workers",
               "0", "--cpu"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def one_error_line(result):
    output = result.stdout + result.stderr
    assert result.returncode == 1, output[-3000:]
    assert "Traceback" not in output and "Exception ignored" not in output, output[-3000:]
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, result.stderr[-3000:]
    return errors[0]


def test_fairseq_generate_names_a_truncated_index(tiny, tmp_path):
    data_bin, checkpoint = tiny
    copy = damaged_copy(data_bin, tmp_path, "test.xx-yy.xx.idx", keep_bytes=30)
    # fairseq reports the plugin's error as it reports any exception
    assert_plugin_error(fairseq_generate(copy, checkpoint), 1,
                        f"{copy / 'test.xx-yy.xx.idx'}: truncated")


def xlpe(command, *args):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), command),
                           *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.mark.parametrize("command", ["fairseq-generate", "xlpe-translate", "xlpe-dpe-order"])
def test_dictionaries_that_do_not_fit_the_checkpoint_are_named(tiny, tmp_path, command):
    data_bin, checkpoint = tiny
    # a checkpoint that records nothing of its data (DataProvenance refuses those that do)
    state = torch.load(checkpoint, weights_only=False)
    state.pop("task_state", None)
    unrecorded = tmp_path / "unrecorded.pt"
    torch.save(state, unrecorded)
    words = (data_bin / "dict.xx.txt").read_text()
    copy = damaged_copy(data_bin, tmp_path, "dict.xx.txt", text=words + "extra1 1\nextra2 1\n")
    if command == "fairseq-generate":
        result = fairseq_generate(copy, unrecorded)
    elif command == "xlpe-translate":
        (tmp_path / "codes").write_text("s1 0 5\n")
        result = xlpe(command, "--checkpoint", unrecorded, "--data-bin", copy, "--bpe-codes",
                      tmp_path / "codes", "--source-lang", "xx", "--target-lang", "yy",
                      "--preorderer-nbest", "1", "--input", copy / "dict.xx.txt")
    else:
        result = xlpe(command, "--checkpoint", unrecorded, "--data-bin", copy, "--split",
                      "test", "--output", tmp_path / "order.txt")
    entries = len(words.splitlines()) + 2 + 4  # and fairseq's 4 special symbols
    expected = f"{copy / 'dict.xx.txt'}: {entries} entries, but the checkpoint's encoder embeddings hold "
    if command == "fairseq-generate":
        assert_plugin_error(result, 1, expected)
        return
    error = one_error_line(result)
    assert error.startswith(f"{command}: error: {expected}"), error


def test_a_run_with_the_plugin_prints_no_hydra_debug_lines(tiny):
    """As the xlpe-* commands run fairseq's (their launcher sets hydra's logger to INFO; the
    plugin's import changes no logger)."""
    data_bin, checkpoint = tiny
    result = fairseq_generate(data_bin, checkpoint, launcher=True)
    assert result.returncode == 0, result.stderr[-3000:]
    debug = [line for line in (result.stdout + result.stderr).splitlines() if "DEBUG" in line]
    assert not debug, debug
