"""xlpe-translate's options: what --corpus supplies, what wins over it, what is refused.
(tests/test_own_corpus.py translates with trained models.)"""
import subprocess
import sys

import pytest

from xlpe_fairseq.evaluation.translate import build_parser, read_recipe_env, resolve_arguments
from xlpe_fairseq.io import InputError
from xlpe_fairseq.io.digests import file_digest
from xlpe_fairseq.io.provenance import write_record


def corpus(tmp_path, preorderer=True):
    out = tmp_path / "fr-en"
    (out / "data-bin" / "text").mkdir(parents=True)
    (out / "bpe").mkdir()
    (out / "recipe.env").write_text("SRC=fr\nTGT=en\nLOWERCASE=1\nRAW=/data/my\\ raw\n"
                                    "TOKENIZATION=reversible\n")
    for name in ("data-bin/text/dict.fr.txt", "data-bin/text/dict.en.txt", "bpe/codes"):
        (out / name).write_text("")
    if preorderer:
        (out / "preorderer.pt").write_text("")
    checkpoint = tmp_path / "checkpoint_best.pt"
    checkpoint.write_text("")
    return out, checkpoint


def resolved(*argv):
    args = build_parser().parse_args([str(a) for a in argv])
    return args, resolve_arguments(args)


def scored_folder(tmp_path, checkpoint_name="checkpoint_avg3.pt"):
    """A checkpoint folder with the test record evaluate.sh writes, naming the one it scored."""
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "checkpoint_best.pt").write_text("best")
    scored = folder / checkpoint_name
    scored.write_text("averaged")
    write_record(folder / "provenance-test.json", "evaluation", ["evaluate.sh"], subset="test",
                 checkpoint={"path": str(scored), "sha256": file_digest(scored)})
    return folder, scored


def test_a_checkpoint_folder_translates_with_the_checkpoint_evaluation_scored(tmp_path):
    out, _ = corpus(tmp_path)
    folder, scored = scored_folder(tmp_path)
    _, checkpoints = resolved("--corpus", out, "--checkpoint", folder)
    assert checkpoints == [str(scored)], "the folder must give the checkpoint its record names"


def test_a_folder_without_an_evaluation_or_with_a_changed_checkpoint_is_refused(tmp_path):
    out, _ = corpus(tmp_path)
    folder, scored = scored_folder(tmp_path)
    scored.write_text("trained further since")
    with pytest.raises(InputError, match="not the checkpoint .* scored"):
        resolved("--corpus", out, "--checkpoint", folder)
    (folder / "provenance-test.json").unlink()
    with pytest.raises(InputError, match="without provenance-test.json: run xlpe-evaluate"):
        resolved("--corpus", out, "--checkpoint", folder)


def test_recipe_env_gives_languages_and_lowercasing(tmp_path):
    out, _ = corpus(tmp_path)
    assert read_recipe_env(out / "recipe.env") == {"SRC": "fr", "TGT": "en", "LOWERCASE": "1",
                                                   "TOKENIZATION": "reversible"}


def test_a_corpus_tokenized_before_tokens_recorded_spacing_is_refused_in_one_line(tmp_path):
    """Its model writes tokens without joiners, which detokenization cannot join as written:
    the message says to prepare it again."""
    out, checkpoint = corpus(tmp_path)
    (out / "recipe.env").write_text("SRC=fr\nTGT=en\nLOWERCASE=1\nRAW=/raw\n")
    with pytest.raises(InputError, match=r"recipe.env: .*earlier .*rerun xlpe-prepare"):
        resolved("--corpus", out, "--checkpoint", checkpoint)


@pytest.mark.parametrize("tokenized, taken_as_tokenized", [("fr,en", True), ("en", False),
                                                          (None, False)])
def test_a_source_the_corpus_had_tokenized_already_is_taken_as_tokenized(
        tmp_path, tokenized, taken_as_tokenized):
    """xlpe-prepare --tokenized fr: new French input gets what the corpus got, its spaces
    normalized, not Moses' rules."""
    out, checkpoint = corpus(tmp_path)
    if tokenized:
        with open(out / "recipe.env", "a") as recipe:
            recipe.write(f"TOKENIZED={tokenized}\n")
    args, _ = resolved("--corpus", out, "--checkpoint", checkpoint)
    assert args.tokenized is taken_as_tokenized


def test_corpus_supplies_dictionaries_codes_preorderer_and_languages(tmp_path):
    out, checkpoint = corpus(tmp_path)
    args, checkpoints = resolved("--corpus", out, "--checkpoint", checkpoint)
    assert checkpoints == [str(checkpoint)]
    assert args.data_bin == str(out / "data-bin" / "text")
    assert args.bpe_codes == str(out / "bpe" / "codes")
    assert args.preorderer == str(out / "preorderer.pt")
    assert (args.source_lang, args.target_lang, args.lowercase) == ("fr", "en", True)


def test_explicit_options_win_over_the_corpus(tmp_path):
    out, checkpoint = corpus(tmp_path)
    codes = tmp_path / "other.codes"
    codes.write_text("")
    args, _ = resolved("--corpus", out, "--checkpoint", checkpoint, "--bpe-codes", codes,
                       "--source-lang", "en", "--target-lang", "fr")
    assert args.bpe_codes == str(codes)
    assert (args.source_lang, args.target_lang) == ("en", "fr")


def test_a_corpus_without_preorderer_leaves_it_unset(tmp_path):
    out, checkpoint = corpus(tmp_path, preorderer=False)
    args, _ = resolved("--corpus", out, "--checkpoint", checkpoint)
    assert args.preorderer is None


def test_an_ensemble_is_several_checkpoints(tmp_path):
    out, checkpoint = corpus(tmp_path)
    other = tmp_path / "checkpoint_last.pt"
    other.write_text("")
    _, checkpoints = resolved("--corpus", out, "--checkpoint", f"{checkpoint}:{other}")
    assert checkpoints == [str(checkpoint), str(other)]


@pytest.mark.parametrize("argv, message", [
    (["--checkpoint", "{checkpoint}"], "give --bpe-codes"),
    (["--corpus", "{out}", "--checkpoint", "{tmp}/missing.pt"], "missing.pt: no such file"),
    (["--corpus", "{tmp}", "--checkpoint", "{checkpoint}"], "recipe.env: no such file"),
    (["--corpus", "{out}", "--checkpoint", "{checkpoint}", "--source-lang", "de"],
     "dict.de.txt: no such file"),
    (["--corpus", "{out}", "--checkpoint", "{checkpoint}", "--input", "{tmp}/none.fr"],
     "none.fr: no such file"),
])
def test_missing_files_are_named(tmp_path, argv, message):
    out, checkpoint = corpus(tmp_path)
    argv = [a.format(out=out, checkpoint=checkpoint, tmp=tmp_path) for a in argv]
    with pytest.raises(InputError, match=message):
        resolved(*argv)


def test_command_line_errors(tmp_path):
    out, checkpoint = corpus(tmp_path)
    command = [sys.executable, "-m", "xlpe_fairseq.evaluation.translate"]
    usage = subprocess.run([*command, "--corpus", str(out), "--checkpoint", str(checkpoint),
                            "--beam", "0"], capture_output=True, text=True)
    assert usage.returncode == 2 and "--beam" in usage.stderr
    usage = subprocess.run([*command, "--corpus", str(out), "--checkpoint", str(checkpoint),
                            "--preorderer-nbest", "0"], capture_output=True, text=True)
    assert usage.returncode == 2 and "--preorderer-nbest: expected a whole number from 1 " \
        "to 9223372036854775807, got '0'" in usage.stderr, usage.stderr
    missing = subprocess.run([*command, "--checkpoint", str(checkpoint)], capture_output=True,
                             text=True)
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines()[-1].startswith("xlpe-translate: error: give")


def test_nbest_defaults_decode_the_best_reordering_with_the_tasks_weight():
    """xlpe-translate decodes the preorderer's best reordering, as fairseq's own commands do
    (the 4 best took 2.7 times as long for a gain that held out pairs did not keep); it does
    not import fairseq to parse its options, so it repeats the task's defaults, which must stay
    the task's."""
    from xlpe_fairseq.tasks.translation_reorder import TranslationReorderConfig

    args = build_parser().parse_args(["--checkpoint", "c.pt"])
    task = TranslationReorderConfig()
    assert (args.preorderer_nbest, args.preorderer_nbest_weight) == \
        (task.preorderer_nbest, task.preorderer_nbest_weight) == (1, 0.1)


def test_input_file_follows_the_line_rule_of_every_command(tmp_path, monkeypatch, capsys):
    from xlpe_fairseq.evaluation import translate

    out, checkpoint = corpus(tmp_path)
    source = tmp_path / "in.de"
    source.write_bytes(b"ein haus\nein\rhund\nkatze\n")
    read = []
    monkeypatch.setattr(translate, "load_translator", lambda args, checkpoints: None)
    monkeypatch.setattr(translate, "translate",
                        lambda translator, lines, args, out, name: read.extend(lines))
    with pytest.raises(SystemExit) as exit_info:
        translate.main(["--corpus", str(out), "--checkpoint", str(checkpoint),
                        "--input", str(source)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1, err
    assert f"{source} line 2: carriage return" in err and len(err.splitlines()) == 1, err


def stdin_translated(tmp_path, monkeypatch, capsys, data):
    """xlpe-translate on ``data`` as stdin, the model left out: (exit status, stderr, lines
    that reached the translation)."""
    import io

    from xlpe_fairseq.evaluation import translate

    codes = tmp_path / "codes"
    codes.write_text("a b 5\n")
    checkpoint = tmp_path / "checkpoint.pt"
    checkpoint.write_text("")
    read = []
    monkeypatch.setattr(translate, "load_translator", lambda args, checkpoints: None)
    monkeypatch.setattr(translate, "translate",
                        lambda translator, lines, args, out, name: read.extend(lines))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    with pytest.raises(SystemExit) as exit_info:
        translate.main(["--checkpoint", str(checkpoint), "--bpe-codes", str(codes)])
        sys.exit(0)
    return exit_info.value.code, capsys.readouterr().err, read


@pytest.mark.parametrize("data, message", [
    (b"ein haus\nein \xff hund\n", "<stdin> line 2: not UTF-8 (byte 0xff at column 5)"),
    (b"ein haus\nein\rhund\nkatze\n", "<stdin> line 2: carriage return (\\r) inside the line"),
])
def test_stdin_follows_the_line_rule_of_every_input(tmp_path, monkeypatch, capsys, data,
                                                     message):
    status, err, _ = stdin_translated(tmp_path, monkeypatch, capsys, data)
    assert status == 1 and err.startswith(f"xlpe-translate: error: {message}"), err
    assert len(err.splitlines()) == 1, err


def test_stdin_lines_lose_their_line_ends_and_byte_order_mark(tmp_path, monkeypatch, capsys):
    status, err, read = stdin_translated(tmp_path, monkeypatch, capsys,
                                         b"\xef\xbb\xbfein haus\r\nkatze")
    assert status == 0, err
    assert read == ["ein haus", "katze"]


def test_a_line_too_long_for_the_model_names_the_input(tmp_path):
    from types import SimpleNamespace

    from xlpe_fairseq.evaluation.translate import translate

    translator = SimpleNamespace(max_positions=(3, 3), encode=lambda line: line.split())
    args = SimpleNamespace(buffer_size=10, beam=1, lenpen=1.0)
    with pytest.raises(InputError, match=r"^in\.de line 2: 4 tokens after BPE, more than the "
                       r"model's 3$"):
        translate(translator, ["a b", "a b c d"], args, None, "in.de")


@pytest.mark.parametrize("option", ["--source-lang", "--target-lang"])
@pytest.mark.parametrize("value", ["zh ", "", "../x"])
def test_a_language_that_is_no_language_code_is_a_usage_error(option, value):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["--checkpoint", "c.pt", option, value])
    assert exit_info.value.code == 2


def test_a_model_without_positions_translates_with_the_defaults(tmp_path):
    """A Transformer needs no preorderer: it translates with the defaults."""
    from evaluation.tiny_checkpoints import TWO_DECODER_LAYERS, make_corpus, train

    corpus = make_corpus(tmp_path)
    checkpoint = train(corpus, "untied", "--arch", "transformer", *TWO_DECODER_LAYERS)
    (tmp_path / "codes").write_text("s1 0 5\n")
    result = subprocess.run(
        [sys.executable, "-m", "xlpe_fairseq.evaluation.translate", "--checkpoint",
         str(checkpoint), "--data-bin", str(corpus["data_bin"]), "--bpe-codes",
         str(tmp_path / "codes"), "--source-lang", "xx", "--target-lang", "yy", "--cpu"],
        input="s10 s11\ns3\n", capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.stdout.splitlines()) == 2, result.stdout
