"""Hostile input and environments through the console commands, in-process.

The rule (docs/input-rules.md): bad input or a bad environment gives one line
``PROG: error: FILE ...: what was expected`` and exit status 1, no output, no hidden partial
file, no input touched; a bad command line gives exit status 2. Here: lone carriage returns,
outputs that are inputs, devices, FIFOs, directories or in unwritable places, non-positive
counts, long sentences, SIGTERM in the middle of a run. Each command's own findings are
tested beside its module (tests/preprocessing/test_bpe.py etc.).
"""
import importlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.console_scripts import console_scripts
from support.interrupted_runs import assert_processes_end, default_sigint
from support.text_files import generate_output, text_file
from xlpe_fairseq.io import child_processes
from xlpe_fairseq.preordering.preorderer import Preorderer
from xlpe_fairseq.preordering.vocabulary import Vocabulary


def run_main(command, argv, capsys):
    """``(exit status, stderr)`` of a console command run in-process."""
    module, function = console_scripts()[command].split(":")
    main = getattr(importlib.import_module(module), function)
    try:
        status = main(argv) or 0
    except SystemExit as exit_info:
        status = exit_info.code or 0
    return status, capsys.readouterr().err


def snapshot(folder):
    """Every file under ``folder`` (hidden ones too) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def assert_refused(command, status, stderr, before, folder, expected=None):
    """Exit 1, one error line (no traceback), and ``folder`` exactly as it was."""
    assert status == 1, f"{command} exited {status}:\n{stderr}"
    assert "Traceback" not in stderr, stderr
    last = stderr.splitlines()[-1] if stderr else ""
    assert last.startswith(f"{command}: error: "), f"no error line from {command}:\n{stderr}"
    if expected is not None:
        assert expected in last, f"{expected!r} not in {last!r}"
    assert snapshot(folder) == before, f"{command} wrote or changed files in {folder}"


def preorderer_checkpoint(tmp):
    path = tmp / "preorderer.pt"
    Preorderer.create(Vocabulary.build([["a", "b"]])).save(str(path))
    return str(path)


# Commands that write files, each: (tmp, output path) -> argv of a valid run writing there.

def tokenize(tmp, out):
    source = text_file(tmp / "in.en", ["Hello, world.", "A b."])
    return ["--lang", "en", "--input", source, "--output", out, "--workers", "1"]


def bpe_learn(tmp, out):
    source = text_file(tmp / "tok.en", ["a b a b", "a b"])
    return ["learn", "--input", source, "--codes", out, "--merges", "5", "--workers", "1"]


def bpe_apply(tmp, out):
    codes = text_file(tmp / "codes", ["a b 2"])
    source = text_file(tmp / "tok.en", ["a b", "ab"])
    return ["apply", "--codes", codes, "--input", source, "--output", out, "--workers", "1"]


def align(tmp, out):
    source = text_file(tmp / "s.he", ["a b", "c"])
    target = text_file(tmp / "t.en", ["x y", "z"])
    return ["--source", source, "--target", target, "--output", out, "--workers", "1"]


def reorder(tmp, out):
    alignment = text_file(tmp / "a.align", ["0-1 1-0", "0-0"])
    return align(tmp, out) + ["--alignment", alignment]


def source_and_positions(tmp, stem, sentences, positions):
    """``--source STEM.he --reorder STEM.reorder`` holding the given lines."""
    return ["--source", text_file(tmp / f"{stem}.he", sentences),
            "--reorder", text_file(tmp / f"{stem}.reorder", positions)]


def reorder_text(tmp, out):
    return source_and_positions(tmp, "s", ["a b", "c"], ["1 0", "0"]) + [
        "--output", out, "--workers", "1"]


def preorder_train(tmp, out):
    return source_and_positions(tmp, "train", ["a b", "b a"], ["1 0", "0 1"]) + [
        "--save", out, "--epochs", "1"]


def preorder(tmp, out):
    source = text_file(tmp / "test.he", ["a b", "b"])
    return ["--preorderer", preorderer_checkpoint(tmp), "--source", source, "--output", out]


def preorder_crossfit(tmp, out):
    return source_and_positions(tmp, "train", ["a b", "b a", "a b"], ["1 0", "0 1", "1 0"]) + [
        "--output", out, "--epochs", "1"]


def bleu(tmp, out):
    generated = generate_output(tmp / "gen.out", ["a house", "a dog"])
    reference = text_file(tmp / "ref.en", ["a house", "a dog"])
    return ["--generate-output", generated, "--reference", reference, "--target-lang", "en",
            "--json", out]


def compare(tmp, out):
    generated = generate_output(tmp / "gen.out", ["a house", "a dog"])
    reference = text_file(tmp / "ref.en", ["a house", "a dog"])
    return ["--generated", f"base={generated}", "--reference", reference, "--target-lang", "en",
            "--bootstrap-samples", "10", "--json", out]


def aer(tmp, out):
    gold = text_file(tmp / "test.align", ["0-0", "0-0"])
    links = text_file(tmp / "eflomal.align", ["0-0", "0-0"])
    return ["--gold", gold, "--links", f"eflomal={links}", "--json", out]


def average_checkpoints(tmp, out):
    (tmp / "ckpt").mkdir(exist_ok=True)
    (tmp / "ckpt" / "checkpoint1.pt").write_bytes(b"not read before the output check")
    return ["--checkpoint-dir", str(tmp / "ckpt"), "--num", "1", "--output", out]


def attention_heatmap(tmp, out):
    checkpoint = tmp / "checkpoint.pt"
    checkpoint.write_bytes(b"not read before the output check")
    return ["--checkpoint", f"a={checkpoint}", f"b={checkpoint}", "--data-bin", str(tmp),
            "--output", out]


def dpe_order(tmp, out):
    checkpoint = tmp / "checkpoint.pt"
    checkpoint.write_bytes(b"not read before the output check")
    return ["--checkpoint", str(checkpoint), "--data-bin", str(tmp), "--output", out]


FILE_WRITERS = {
    "xlpe-tokenize": [tokenize],
    "xlpe-bpe": [bpe_learn, bpe_apply],
    "xlpe-align": [align],
    "xlpe-reorder": [reorder],
    "xlpe-reorder-text": [reorder_text],
    "xlpe-preorder-train": [preorder_train],
    "xlpe-preorder": [preorder],
    "xlpe-preorder-crossfit": [preorder_crossfit],
    "xlpe-bleu": [bleu],
    "xlpe-compare": [compare],
    "xlpe-aer": [aer],
    "xlpe-average-checkpoints": [average_checkpoints],
    "xlpe-attention-heatmap": [attention_heatmap],
    "xlpe-dpe-order": [dpe_order],
}


# Commands that write into a folder: (tmp, folder) -> argv.

def binarize(tmp, folder):
    positions = text_file(tmp / "train.reorder", ["1 0", "0"])
    source = text_file(tmp / "train.he", ["a b", "c"])
    return ["--reorder", positions, "--source", source, "--destdir", folder, "--split", "train",
            "--source-lang", "he", "--target-lang", "en"]


def noise_curve(tmp, folder):
    results = text_file(tmp / "xlpe.tsv", ["noise BLEU", "0 30.1", "0.1 29.5"])
    return ["--results", f"xlpe={results}", "--output-dir", folder]


def aer_links(tmp, folder):
    return aer(tmp, str(tmp / "aer.json"))[:-2] + ["--write-links", folder]


def libreoffice_corpus(tmp, folder):
    page = ['<p id="par_id1">Open</p>']
    text_file(tmp / "en-US" / "text" / "page.html", page)
    text_file(tmp / "de" / "text" / "page.html", page)
    return ["--source-help", str(tmp / "en-US"), "--target-help", str(tmp / "de"),
            "--source-lang", "en", "--target-lang", "de", "--out", folder,
            "--valid-size", "0", "--test-size", "0"]


def study(tmp, folder):
    reference = text_file(tmp / "test.en", ["a house", "a dog"])
    return ["--data-bin", str(tmp / "data-bin"), "--source-lang", "he", "--target-lang", "en",
            "--reference", reference, "--models", "transformer", "--work", folder]


FOLDER_WRITERS = {
    "xlpe-binarize": [binarize],
    "xlpe-noise-curve": [noise_curve],
    "xlpe-aer": [aer_links],
    "xlpe-libreoffice-corpus": [libreoffice_corpus],
    "xlpe-study": [study],
}


def cases(writers):
    return [pytest.param(command, case, id=f"{command}-{case.__name__}")
            for command, builders in writers.items() for case in builders]


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory nothing can be created in: chmod 555, or /sys for root, who ignores modes."""
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    try:
        os.close(os.open("/sys/xlpe-probe", os.O_CREAT | os.O_WRONLY, 0o644))
    except OSError:
        yield Path("/sys")
    else:
        os.unlink("/sys/xlpe-probe")
        pytest.skip("no read-only directory on this machine")


def bad_output_places(tmp, read_only):
    """``{what: path}`` of outputs that cannot be written."""
    (tmp / "a-directory").mkdir()
    (tmp / "a-file").write_text("keep me\n")
    fifo = tmp / "a-fifo"
    os.mkfifo(fifo)
    return {
        "is a directory": str(tmp / "a-directory"),
        "parent is a file": str(tmp / "a-file" / "out"),
        "read-only directory": str(read_only / "out"),
        "FIFO": str(fifo),
        "device": "/dev/null",
    }


@pytest.mark.parametrize("command, case", cases(FILE_WRITERS))
def test_unwritable_outputs_are_refused_before_any_work(command, case, tmp_path, capsys,
                                                        read_only_dir):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    places = bad_output_places(tmp_path, read_only_dir)
    for what, output in places.items():
        argv = case(inputs, output)
        before = snapshot(tmp_path)
        status, stderr = run_main(command, argv, capsys)
        assert_refused(command, status, stderr, before, tmp_path, expected=output)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null was replaced"
    assert stat.S_ISFIFO(os.stat(tmp_path / "a-fifo").st_mode), "the FIFO was replaced"


@pytest.mark.parametrize("command, case", cases(FOLDER_WRITERS))
def test_unwritable_output_folders_are_refused(command, case, tmp_path, capsys, read_only_dir):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (tmp_path / "a-file").write_text("keep me\n")
    for output in (str(tmp_path / "a-file"), str(tmp_path / "a-file" / "out"),
                   str(read_only_dir / "out")):
        argv = case(inputs, output)
        before = snapshot(tmp_path)
        status, stderr = run_main(command, argv, capsys)
        assert_refused(command, status, stderr, before, tmp_path, expected=output)


@pytest.mark.parametrize("command, case", cases(FILE_WRITERS))
def test_an_input_given_as_output_is_refused_and_untouched(command, case, tmp_path, capsys):
    argv = case(tmp_path, str(tmp_path / "out"))
    inputs = [arg.partition("=")[2] or arg for arg in argv
              if os.path.isfile(arg.partition("=")[2] or arg)]
    # (xlpe-average-checkpoints names a folder of inputs)
    inputs = inputs or [str(p) for p in tmp_path.rglob("*") if p.is_file()]
    output_at = argv.index(str(tmp_path / "out"))
    for path in inputs:
        before = snapshot(tmp_path)
        status, stderr = run_main(command, argv[:output_at] + [path] + argv[output_at + 1:],
                                  capsys)
        assert_refused(command, status, stderr, before, tmp_path,
                       expected="would overwrite an input file")


def test_compare_writes_neither_table_when_one_output_fails(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    argv = compare(tmp_path, str(tmp_path / "a-file" / "out.json"))
    before = snapshot(tmp_path)
    status, stderr = run_main("xlpe-compare", argv + ["--markdown", str(tmp_path / "out.md")],
                              capsys)
    assert_refused("xlpe-compare", status, stderr, before, tmp_path)


def test_markdown_and_json_on_one_path_are_refused(tmp_path, capsys):
    argv = compare(tmp_path, str(tmp_path / "out"))
    before = snapshot(tmp_path)
    status, stderr = run_main("xlpe-compare", argv + ["--markdown", str(tmp_path / "out")],
                              capsys)
    assert_refused("xlpe-compare", status, stderr, before, tmp_path, "given as two outputs")


def test_a_symlinked_output_is_written_through(tmp_path, capsys):
    target = tmp_path / "data" / "tok.en"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "tok.en"
    link.symlink_to(target)
    status, stderr = run_main("xlpe-tokenize", tokenize(tmp_path, str(link)), capsys)
    assert status == 0, stderr
    assert link.is_symlink(), "the symlink was replaced by a regular file"
    assert target.read_text() == "Hello ￭, world ￭.\nA b ￭.\n", "the tokens written through the link"


# --- lone carriage returns: one rule for counting and reading -------------------------------

def lone_cr(path, lines, line):
    """``lines`` one a line; line ``line`` (1-based) gets a carriage return in the middle."""
    path.parent.mkdir(parents=True, exist_ok=True)
    encoded = [text.encode() for text in lines]
    encoded[line - 1] = encoded[line - 1].replace(b" ", b"\r", 1)
    path.write_bytes(b"".join(text + b"\n" for text in encoded))
    return str(path)


CR_CASES = {
    "xlpe-tokenize": lambda tmp: ["--lang", "en", "--input",
                                  lone_cr(tmp / "in.en", ["a b", "c d", "e f"], 2),
                                  "--output", str(tmp / "out"), "--workers", "2",
                                  "--chunk-size", "1"],
    "xlpe-bpe": lambda tmp: ["apply", "--codes", text_file(tmp / "codes", ["a b 2"]), "--input",
                             lone_cr(tmp / "in.en", ["a b", "c d", "e f"], 2),
                             "--output", str(tmp / "out"), "--workers", "1"],
    "xlpe-align": lambda tmp: ["--source", lone_cr(tmp / "s.he", ["a b", "c d", "e f"], 2),
                               "--target", text_file(tmp / "t.en", ["x", "y", "z"]),
                               "--output", str(tmp / "out"), "--workers", "1"],
    "xlpe-reorder": lambda tmp: ["--source", text_file(tmp / "s.he", ["a b", "c d", "e f"]),
                                 "--target", text_file(tmp / "t.en", ["x", "y", "z"]),
                                 "--alignment", lone_cr(tmp / "a.align",
                                                        ["0-0 1-0", "0-0 1-0", "0-0"], 2),
                                 "--output", str(tmp / "out"), "--workers", "1"],
    "xlpe-reorder-text": lambda tmp: ["--source",
                                      lone_cr(tmp / "s.he", ["a b", "c d", "e f"], 2),
                                      "--reorder", text_file(tmp / "r", ["1 0", "1 0", "1 0"]),
                                      "--output", str(tmp / "out")],
    "xlpe-preorder": lambda tmp: ["--preorderer", preorderer_checkpoint(tmp), "--source",
                                  lone_cr(tmp / "s.he", ["a b", "b a", "a b"], 2),
                                  "--output", str(tmp / "out")],
    "xlpe-binarize": lambda tmp: ["--reorder", text_file(tmp / "r", ["1 0", "1 0", "0"]),
                                  "--source", lone_cr(tmp / "s.he", ["a b", "c d", "e"], 2),
                                  "--destdir", str(tmp / "out"), "--split", "train",
                                  "--source-lang", "he", "--target-lang", "en"],
    "xlpe-reorder-score": lambda tmp: ["--hypothesis",
                                       lone_cr(tmp / "h", ["1 0", "1 0", "0 1"], 2),
                                       "--reference", text_file(tmp / "r", ["1 0", "1 0", "0 1"])],
    "xlpe-bleu": lambda tmp: ["--generate-output", generate_output(tmp / "gen", ["a", "b", "c"]),
                              "--reference", lone_cr(tmp / "ref", ["a x", "b y", "c z"], 2),
                              "--target-lang", "en"],
}


@pytest.mark.parametrize("command", sorted(CR_CASES))
def test_a_lone_carriage_return_is_refused_naming_file_and_line(command, tmp_path, capsys):
    argv = CR_CASES[command](tmp_path)
    before = snapshot(tmp_path)
    status, stderr = run_main(command, argv, capsys)
    assert_refused(command, status, stderr, before, tmp_path,
                   expected="line 2: carriage return (\\r) inside the line (byte column")


def test_crlf_line_ends_are_line_ends(tmp_path, capsys):
    source = tmp_path / "in.en"
    source.write_bytes(b"a b\r\nc d\r\n")
    status, stderr = run_main("xlpe-tokenize", ["--lang", "en", "--input", str(source),
                                                "--output", str(tmp_path / "out")], capsys)
    assert status == 0, stderr
    assert (tmp_path / "out").read_bytes() == b"a b\nc d\n"


def test_a_byte_order_mark_is_dropped(tmp_path, capsys):
    source = tmp_path / "in.en"
    source.write_bytes("\ufeffhello world\n".encode())
    status, stderr = run_main("xlpe-tokenize", ["--lang", "en", "--input", str(source),
                                                "--output", str(tmp_path / "out")], capsys)
    assert status == 0, stderr
    assert (tmp_path / "out").read_text(encoding="utf-8") == "hello world\n"


# --- counts and sizes on the command line ---------------------------------------------------

OPTION_CASES = [
    ("xlpe-tokenize", tokenize, ["--chunk-size"]),
    ("xlpe-tokenize", tokenize, ["--workers"]),
    ("xlpe-bpe", bpe_apply, ["--chunk-size"]),
    ("xlpe-bpe", bpe_learn, ["--merges"]),
    ("xlpe-align", align, ["--chunk-size"]),
    ("xlpe-align", align, ["--workers"]),
    ("xlpe-reorder", reorder, ["--chunk-size"]),
    ("xlpe-reorder-text", reorder_text, ["--chunk-size"]),
    ("xlpe-preorder-train", preorder_train, ["--threads"]),
    ("xlpe-preorder", preorder, ["--max-tokens"]),
]


@pytest.mark.parametrize("command, case, option", [
    pytest.param(command, case, option, id=f"{command}-{option[0]}")
    for command, case, option in OPTION_CASES])
@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_a_count_that_is_not_positive_is_a_command_line_error(command, case, option, value,
                                                              tmp_path, capsys):
    argv = case(tmp_path, str(tmp_path / "out")) + [option[0], value]
    before = snapshot(tmp_path)
    status, stderr = run_main(command, argv, capsys)
    assert status == 2, f"{command} {option[0]} {value} exited {status}:\n{stderr}"
    assert "expected a whole number from 1 to" in stderr and f"got '{value}'" in stderr, stderr
    assert snapshot(tmp_path) == before


# --- long sentences -------------------------------------------------------------------------

def test_alignment_refuses_sentences_eflomal_would_leave_unaligned(tmp_path, capsys):
    long_line = " ".join(f"w{k}" for k in range(1024))
    argv = ["--source", text_file(tmp_path / "s.he", ["a b", long_line]),
            "--target", text_file(tmp_path / "t.en", ["x y", "z"]),
            "--output", str(tmp_path / "out"), "--workers", "1"]
    before = snapshot(tmp_path)
    status, stderr = run_main("xlpe-align", argv, capsys)
    assert_refused("xlpe-align", status, stderr, before, tmp_path,
                   expected="s.he line 2: 1024 tokens, more than the 1023 that eflomal handles")


def test_btg_extraction_refuses_overlong_sentences(tmp_path, capsys):
    def argv(n_tokens):
        return ["--method", "btg",
                "--source", text_file(tmp_path / "s.he", [" ".join(["a"] * n_tokens)]),
                "--target", text_file(tmp_path / "t.en", ["x"]),
                "--alignment", text_file(tmp_path / "a.align", ["0-0"]),
                "--output", str(tmp_path / "out" / "r")]

    status, stderr = run_main("xlpe-reorder", argv(1023), capsys)
    assert status == 0, stderr
    (tmp_path / "out" / "r").unlink()
    longest = argv(1024)
    before = snapshot(tmp_path)
    status, stderr = run_main("xlpe-reorder", longest, capsys)
    assert_refused("xlpe-reorder", status, stderr, before, tmp_path,
                   expected="s.he line 1: 1024 tokens, more than the 1023 that --method btg")


def test_the_preorderer_refuses_overlong_sentences_at_once(tmp_path, capsys):
    argv = ["--preorderer", preorderer_checkpoint(tmp_path),
            "--source", text_file(tmp_path / "s.he", ["a b", " ".join(["a"] * 5000)]),
            "--output", str(tmp_path / "out")]
    before = snapshot(tmp_path)
    start = time.monotonic()
    status, stderr = run_main("xlpe-preorder", argv, capsys)
    assert_refused("xlpe-preorder", status, stderr, before, tmp_path,
                   expected="s.he line 2: 5000 tokens, more than the 1023 that the preorderer")
    assert time.monotonic() - start < 30, "the length check came after the search"


# --- SIGTERM --------------------------------------------------------------------------------

def test_sigterm_removes_partial_outputs_and_temporary_folders(tmp_path):
    """A real command, killed while its workers tokenize: exit 143, nothing left behind."""
    command = tokenize_command(tmp_path)
    out = tmp_path / "out"
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not os.listdir(out) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    assert os.listdir(out), "the command never opened its temporary output"
    process.send_signal(signal.SIGTERM)
    stderr = stderr_of_ended(process, timeout=60)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr, stderr
    assert os.listdir(out) == [], f"left behind: {os.listdir(out)}"


def tokenize_command(tmp_path, prelude=""):
    """A tokenize run with two workers on a large file, optionally after some Python code."""
    source = tmp_path / "in.en"
    source.write_text("The quick brown fox jumps over the lazy dog.\n" * 200000)
    (tmp_path / "out").mkdir()
    code = prelude + "from xlpe_fairseq.preprocessing.tokenize import main; main()"
    return [sys.executable, "-c", code, "--lang", "en", "--input", str(source), "--output",
            str(tmp_path / "out" / "tok.en"), "--workers", "2", "--chunk-size", "1000"]


def stderr_of_ended(process, timeout):
    """``process``'s stderr once it ended; one still running after ``timeout`` seconds is
    killed, so that it cannot stay behind as a child of the test process, and fails the test."""
    try:
        return process.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        process.kill()
        stderr = process.communicate()[1]
        pytest.fail(f"the command still ran {timeout} s after the signal (killed); "
                    f"stderr: {stderr[-2000:]}")


def wait_for_workers(process, count=2):
    """The pids of ``process``'s workers once all ``count`` have started."""
    deadline = time.monotonic() + 60
    while len(child_processes(process.pid)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = child_processes(process.pid)
    assert len(workers) == count, f"expected {count} workers, found {workers}"
    return workers


def assert_stopped_cleanly(process, signum, out, workers):
    """Exit status 128 + ``signum``, no traceback, nothing left in ``out``, no worker left."""
    stderr = stderr_of_ended(process, timeout=60)
    assert process.returncode == 128 + signum, stderr
    for noise in ("Traceback", "Exception ignored", "KeyboardInterrupt"):
        assert noise not in stderr, stderr
    assert os.listdir(out) == [], f"left behind: {os.listdir(out)}"
    assert_processes_end(workers)


def test_sigterm_while_the_workers_fork_is_not_dropped(tmp_path):
    """The signal lands inside Python's at-fork hooks, where an exception is printed and
    dropped: the command must still end with 143, nothing written and no worker left."""
    prelude = ("import os, signal; os.register_at_fork(after_in_parent=lambda: "
               "os.kill(os.getpid(), signal.SIGTERM)); ")
    process = subprocess.Popen(tokenize_command(tmp_path, prelude), stderr=subprocess.PIPE,
                               text=True)
    workers = []
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline:
        workers = child_processes(process.pid) or workers
        time.sleep(0.05)
    assert_stopped_cleanly(process, signal.SIGTERM, tmp_path / "out", workers)


def test_ctrl_c_ends_the_command_and_its_workers_without_a_traceback(tmp_path):
    """Ctrl-C reaches every process of the terminal's job: exit 130, nothing left behind."""
    process = subprocess.Popen(tokenize_command(tmp_path), stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=default_sigint)
    workers = wait_for_workers(process)
    os.killpg(process.pid, signal.SIGINT)
    assert_stopped_cleanly(process, signal.SIGINT, tmp_path / "out", workers)


def test_an_ignored_hangup_stays_ignored(tmp_path):
    """Under nohup (SIGHUP ignored) a hangup must not end the command."""
    def ignore_hangup():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    process = subprocess.Popen(tokenize_command(tmp_path), stderr=subprocess.PIPE, text=True,
                               preexec_fn=ignore_hangup)
    deadline = time.monotonic() + 60
    while not os.listdir(tmp_path / "out") and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGHUP)
    stderr = stderr_of_ended(process, timeout=120)
    assert process.returncode == 0, stderr
    assert os.listdir(tmp_path / "out") == ["tok.en"], os.listdir(tmp_path / "out")


def test_workers_die_with_a_command_killed_by_sigkill(tmp_path):
    """SIGKILL cannot be handled, but the workers must not wait for work forever."""
    process = subprocess.Popen(tokenize_command(tmp_path), stderr=subprocess.DEVNULL)
    workers = wait_for_workers(process)
    process.kill()
    process.wait(timeout=60)
    assert_processes_end(workers)
