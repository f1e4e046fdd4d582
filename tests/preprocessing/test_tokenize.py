"""Moses tokenization, in one process and in parallel chunks."""
import pytest

from xlpe_fairseq.preprocessing.tokenize import main, tokenize_file, tokenize_line


def test_moses_splits_punctuation_without_escaping():
    assert tokenize_line("Hello, world & <b>!", "en") == "Hello , world & < b > !"


def test_lowercase():
    assert tokenize_line("The LORD said.", "en", lowercase=True) == "the lord said ."


def test_no_tokenize_only_normalizes_spaces():
    assert tokenize_line("  בְּ  רֵאשִׁית,x ", "he", tokenize=False) == "בְּ רֵאשִׁית,x"


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
