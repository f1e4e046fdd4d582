"""Reversible Moses tokenization, in one process and in parallel chunks."""
import pytest

from xlpe_fairseq.preprocessing.tokenize import main, tokenize_file
from xlpe_fairseq.text.tokenization import tokenize_line


def test_moses_splits_punctuation_without_escaping_and_joiners_mark_the_splits():
    assert tokenize_line("Hello, world & <b>!", "en") == "Hello \uffed, world & <b> \uffed!"


def test_lowercase():
    assert tokenize_line("The LORD said.", "en", lowercase=True) == "the lord said \uffed."


def test_no_tokenize_splits_at_whitespace_only():
    assert tokenize_line("בְּ רֵאשִׁית,x", "he", tokenize=False) == "בְּ רֵאשִׁית,x"


def test_parallel_chunks_equal_serial(tmp_path):
    source = tmp_path / "raw.en"
    source.write_text("".join(f"Line {k}, with (brackets) and 'quotes'.\n" for k in range(57)),
                      encoding="utf-8")
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    tokenize_file(str(source), str(serial), "en", workers=1, chunk_size=1000)
    tokenize_file(str(source), str(parallel), "en", workers=2, chunk_size=5)
    assert parallel.read_text() == serial.read_text()
    assert len(parallel.read_text().splitlines()) == 57


def test_missing_input_exits_with_message(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--lang", "en", "--input", str(tmp_path / "missing.en"),
              "--output", str(tmp_path / "out")])
    assert exit_info.value.code == 1
    assert "missing.en: no such file" in capsys.readouterr().err


def test_a_regional_code_takes_its_languages_rules():
    line = "Dr. Max l'homme"
    assert tokenize_line(line, "fr-CA") == tokenize_line(line, "fr") != tokenize_line(line, "en")


@pytest.mark.parametrize("lang", ["", "../x", "a b", "e", "en.txt"])
def test_a_language_code_that_is_no_code_is_a_usage_error(tmp_path, capsys, lang):
    (tmp_path / "in").write_text("a\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["--lang", lang, "--input", str(tmp_path / "in"), "--output", str(tmp_path / "o")])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"xlpe-tokenize: error: argument --lang: expected a language code such as en or pt-BR, "
        f"got {lang!r}")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("lang, warned", [("zz", True), ("en", False), ("zh-CN", False)])
def test_a_language_without_rules_of_its_own_is_said_in_one_line(tmp_path, capsys, lang,
                                                                 warned):
    (tmp_path / "in").write_text("Mr. X\n")
    main(["--lang", lang, "--input", str(tmp_path / "in"), "--output", str(tmp_path / "o"),
          "--workers", "1"])
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warnings == ([f"xlpe-tokenize: warning: Moses has no rules for '{lang}': the general "
                         "rules apply, with English's non-breaking prefixes (Mr., e.g.)"]
                        if warned else [])
    assert (tmp_path / "o").exists()
