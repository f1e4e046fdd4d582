"""xlpe-bleu (and xlpe-compare) on files that are missing, empty or of the wrong length."""
import pytest

from xlpe_fairseq.evaluation import bleu, compare


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def generate_output(path, hypotheses):
    return write(path, [f"H-{k}\t-0.5\t{text}" for k, text in enumerate(hypotheses)])


def expect_error(main, argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 1, err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_a_missing_file_is_bad_input_not_a_bad_command_line(tmp_path, capsys):
    reference = write(tmp_path / "ref.en", ["a house"])
    err = expect_error(bleu.main, ["--generate-output", str(tmp_path / "nope.out"), "--reference",
                                   reference, "--target-lang", "en"], capsys)
    assert f"{tmp_path / 'nope.out'}: no such file" in err


def test_a_directory_as_generate_output_is_refused(tmp_path, capsys):
    reference = write(tmp_path / "ref.en", ["a house"])
    err = expect_error(bleu.main, ["--generate-output", str(tmp_path), "--reference", reference,
                                   "--target-lang", "en"], capsys)
    assert f"{tmp_path}: is a directory" in err


@pytest.mark.parametrize("main", [bleu.main, compare.main], ids=["bleu", "compare"])
def test_empty_files_are_refused(tmp_path, capsys, main):
    empty_reference = write(tmp_path / "ref.en", [])
    empty_output = write(tmp_path / "gen.out", [])
    option = "--generate-output" if main is bleu.main else "--generated"
    err = expect_error(main, [option, empty_output, "--reference", empty_reference,
                              "--target-lang", "en"], capsys)
    assert f"{empty_reference}: no lines" in err
    reference = write(tmp_path / "ref.en", ["a house"])
    err = expect_error(main, [option, empty_output, "--reference", reference,
                              "--target-lang", "en"], capsys)
    assert f"{empty_output}: no hypotheses" in err


def test_a_short_reference_is_blamed_on_the_reference(tmp_path, capsys):
    generated = generate_output(tmp_path / "gen.out", ["a house", "a dog", "a cat"])
    reference = write(tmp_path / "ref.en", ["a house", "a dog"])
    err = expect_error(bleu.main, ["--generate-output", generated, "--reference", reference,
                                   "--target-lang", "en"], capsys)
    assert f"{reference} has 2 lines but {generated} holds hypotheses for 3 sentences" in err


@pytest.mark.parametrize("main", [bleu.main, compare.main], ids=["bleu", "compare"])
def test_two_generate_outputs_joined_are_refused(tmp_path, capsys, main):
    first = generate_output(tmp_path / "a.out", ["a house", "a dog"])
    second = generate_output(tmp_path / "b.out", ["the cat", "the mouse"])
    joined = tmp_path / "joined.out"
    joined.write_text(open(second).read() + open(first).read())
    reference = write(tmp_path / "ref.en", ["a house", "a dog"])
    option = "--generate-output" if main is bleu.main else "--generated"
    err = expect_error(main, [option, str(joined), "--reference", reference,
                              "--target-lang", "en"], capsys)
    assert f"{joined} line 3: sentence 0 again (first at line 1)" in err


def test_the_nbest_hypotheses_of_one_sentence_are_one_sentence(tmp_path, capsys):
    generated = write(tmp_path / "gen.out", [
        "S-0\ta dog", "H-0\t-0.1\ta dog", "D-0\t-0.1\ta dog", "P-0\t-0.1 -0.1 -0.1",
        "H-0\t-0.9\tthe dog", "D-0\t-0.9\tthe dog", "P-0\t-0.9 -0.9 -0.9",
        "S-1\ta cat", "H-1\t-0.1\ta cat", "H-1\t-0.8\tthe cat"])
    reference = write(tmp_path / "ref.en", ["a dog", "a cat"])
    bleu.main(["--generate-output", generated, "--reference", reference, "--target-lang", "en"])
    assert "chrF 100.00" in capsys.readouterr().out


@pytest.mark.parametrize("line", ["H-0 -0.5 a house", "H-x\t-0.5\ta house", "H-0\ta house"])
def test_a_malformed_hypothesis_line_is_named_not_blamed_on_fairseq(tmp_path, capsys, line):
    generated = write(tmp_path / "gen.out", [line])
    reference = write(tmp_path / "ref.en", ["a house"])
    err = expect_error(bleu.main, ["--generate-output", generated, "--reference", reference,
                                   "--target-lang", "en"], capsys)
    assert f"{generated} line 1: not a hypothesis line" in err
    assert "required-batch-size-multiple" not in err


def test_a_long_reference_is_blamed_on_the_reference(tmp_path, capsys):
    generated = generate_output(tmp_path / "gen.out", ["a house", "a dog"])
    reference = write(tmp_path / "ref.en", ["a house", "a dog", "a cat"])
    err = expect_error(bleu.main, ["--generate-output", generated, "--reference", reference,
                                   "--target-lang", "en"], capsys)
    assert f"{reference} has 3 lines but {generated} holds hypotheses for 2 sentences" in err
    assert "required-batch-size-multiple" not in err


@pytest.mark.parametrize("option, value", [
    ("--bootstrap-samples", "0"), ("--bootstrap-samples", "-5"),
    ("--bootstrap-samples", "1000000000000"), ("--seed", "-1"),
    ("--generate-args", "--beam '5"),
])
def test_compare_option_values_out_of_range_are_usage_errors(tmp_path, capsys, option, value):
    generated = generate_output(tmp_path / "gen.out", ["a house"])
    reference = write(tmp_path / "ref.en", ["a house"])
    with pytest.raises(SystemExit) as exit_info:
        compare.main(["--generated", f"a={generated}", "--generated", f"b={generated}",
                      "--reference", reference, "--target-lang", "en", f"{option}={value}"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    assert err.splitlines()[-1].startswith(f"xlpe-compare: error: argument {option}: expected")


@pytest.mark.parametrize("value", ["zh ", "", "../x", "e n"])
@pytest.mark.parametrize("command", ["bleu", "compare", "noise_attack", "swap_robustness"])
def test_a_target_language_that_is_no_language_code_is_a_usage_error(capsys, command, value):
    """'zh ' used to score silently with 13a instead of sacreBLEU's zh tokenizer."""
    import importlib

    main = importlib.import_module(f"xlpe_fairseq.evaluation.{command}").main
    with pytest.raises(SystemExit) as exit_info:
        main(["--target-lang", value])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    assert err.splitlines()[-1].endswith(
        f"error: argument --target-lang: expected a language code such as en or pt-BR, got "
        f"{value!r}"), err


def test_the_console_shows_both_signatures_as_the_json_holds_them(tmp_path, capsys):
    import json

    generated = generate_output(tmp_path / "gen.out", ["a house", "a dog"])
    reference = write(tmp_path / "ref.en", ["a house", "a dog"])
    bleu.main(["--generate-output", generated, "--reference", reference, "--target-lang", "en",
               "--name", "tiny", "--json", str(tmp_path / "bleu.json")])
    result = json.loads((tmp_path / "bleu.json").read_text())
    assert capsys.readouterr().out.splitlines() == [
        f"tiny: BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}  (2 sentences)",
        f"BLEU: {result['bleu_signature']}", f"chrF: {result['chrf_signature']}"]
    assert result["chrf_signature"].startswith("nrefs:1|") and "nc:6" in result["chrf_signature"]


def generate_output_with_targets(path, targets, hypotheses):
    lines = []
    for k, (target, hypothesis) in enumerate(zip(targets, hypotheses)):
        lines += [f"S-{k}\tsource {k}", f"T-{k}\t{target}", f"H-{k}\t-0.5\t{hypothesis}"]
    return write(path, lines)


@pytest.mark.parametrize("main", [bleu.main, compare.main], ids=["bleu", "compare"])
def test_another_test_sets_reference_of_the_same_length_is_refused(tmp_path, capsys, main):
    generated = generate_output_with_targets(
        tmp_path / "gen.out", ["a house .", "a dog ."], ["a house .", "a dog ."])
    other = write(tmp_path / "other.en", ["a house .", "the mouse ."])
    system = ["--generate-output", generated] if main is bleu.main else [
        "--generated", f"good={generate_output(tmp_path / 'good.out', ['a house .', 'a dog .'])}",
        "--generated", f"checked={generated}"]
    err = expect_error(main, [*system, "--reference", other, "--target-lang", "en",
                              "--json", str(tmp_path / "b.json")], capsys)
    assert f"{other} line 2: 'the mouse .' is not the target {generated} translated" in err
    assert not (tmp_path / "b.json").exists()


@pytest.mark.parametrize("main", [bleu.main, compare.main], ids=["bleu", "compare"])
@pytest.mark.parametrize("tokenized", [False, True], ids=["raw", "tokenized"])
def test_the_raw_or_tokenized_reference_of_tokenized_unknown_targets_is_scored(
        tmp_path, capsys, tokenized, main):
    """As evaluate.sh calls it: T- lines tokenized, lowercased or not, a word unknown; the
    reference raw, or the lowercased tokenized text with --tokenized-reference."""
    targets = ["the house 's door ( red ) .", "a <<unk>> dog !"]
    raw = ["The house's door (red).", "A Ελληνικός dog!"]
    reference = ["the house 's door ( red ) .", "a ελληνικός dog !"] if tokenized else raw
    generated = generate_output_with_targets(tmp_path / "gen.out", targets, reference)
    reference_file = write(tmp_path / "ref.en", reference)
    option = "--generate-output" if main is bleu.main else "--generated"
    main([option, generated, "--reference", reference_file,
          "--target-lang", "en"] + (["--tokenized-reference"] if tokenized else []))
    out = capsys.readouterr().out
    assert ("BLEU 100.00" if main is bleu.main else "| 100.00 |") in out, out


@pytest.mark.parametrize("main", [bleu.main, compare.main], ids=["bleu", "compare"])
def test_two_runs_merged_by_id_are_not_an_nbest_list(tmp_path, capsys, main):
    generated = write(tmp_path / "merged.out", [
        "H-0\t-0.9\tnothing", "H-0\t-0.3\ta house", "H-1\t-0.2\ta dog", "H-1\t-0.8\tnothing"])
    reference = write(tmp_path / "ref.en", ["a house", "a dog"])
    option = "--generate-output" if main is bleu.main else "--generated"
    err = expect_error(main, [option, generated, "--reference", reference,
                              "--target-lang", "en"], capsys)
    assert f"{generated} line 2: sentence 0's hypothesis scores -0.3, above the one before" in err


def test_text_tokenized_as_given_scores_the_same_without_sacrebleus_warning(caplog):
    """A corpus prepared from tokenized text (the demo's Bible) is scored as given: sacreBLEU's
    "forgot to detokenize" warning would print on every evaluation, and the score is the same."""
    hypotheses = references = ["a b ."] * 120
    caplog.set_level("WARNING", logger="sacrebleu")
    warned = bleu.score(hypotheses, references, "13a")
    assert "detokenize" in caplog.text, "sacreBLEU no longer warns: this test tests nothing"
    caplog.clear()
    quiet = bleu.score(hypotheses, references, "13a", tokenized=True)
    assert "detokenize" not in caplog.text, caplog.text
    assert quiet == warned, "forcing sacreBLEU changed the scores or the signature"
