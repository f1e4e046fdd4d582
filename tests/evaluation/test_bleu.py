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
