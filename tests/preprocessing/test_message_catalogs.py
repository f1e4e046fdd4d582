"""A parallel corpus from compiled gettext catalogs: each message beside its translation, one
line each (line by line where both sides have as many lines), spaces and tabs as written, in a
fixed order, the header, empty translations and repeats left out."""
import struct

import pytest

from xlpe_fairseq.preprocessing.message_catalogs import main, write_corpus


def write_mo(path, entries):
    """A compiled catalog (GNU .mo, little-endian) of ``{msgid: msgstr}``; bytes keys as
    written (a context is ``ctx\\x04msgid``, a plural ``singular\\0plural`` with forms joined
    by ``\\0``)."""
    entries = sorted((key.encode(), value.encode()) for key, value in entries.items())
    header = 7 * 4
    ids_table, strs_table = header, header + 8 * len(entries)
    data = header + 16 * len(entries)
    offsets, blob = [], b""
    for key, _ in entries:
        offsets.append((len(key), data + len(blob)))
        blob += key + b"\0"
    for _, value in entries:
        offsets.append((len(value), data + len(blob)))
        blob += value + b"\0"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<7I", 0x950412de, 0, len(entries), ids_table, strs_table, 0, 0)
                     + b"".join(struct.pack("<2I", *pair) for pair in offsets) + blob)


HEADER = {"": "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=1; plural=0;\n"}


def test_messages_and_translations_become_parallel_lines(tmp_path):
    root = tmp_path / "extracted"
    write_mo(root / "usr/share/locale/ja/LC_MESSAGES/tar.mo", {
        **HEADER, "Error: %s not found": "エラー: %s が見つかりません",
        "two\nlines": "二\n行", "untranslated": "",
        "%d file\0%d files": "%d 個のファイル",
        "MENU\x04&File": "ファイル(&F)"})
    write_mo(root / "usr/share/locale/ja/LC_MESSAGES/grep.mo", {
        **HEADER, "Error: %s not found": "エラー: %s が見つかりません", "Quit": "終了"})
    write_mo(root / "usr/share/locale/zh_CN/LC_MESSAGES/tar.mo", {**HEADER, "Quit": "退出"})
    count, _ = write_corpus([str(root)], "ja", str(tmp_path / "raw"))
    english = (tmp_path / "raw/train.en").read_text(encoding="utf-8").splitlines()
    japanese = (tmp_path / "raw/train.ja").read_text(encoding="utf-8").splitlines()
    assert count == len(english) == len(japanese) == 6
    # grep.mo before tar.mo, a catalog's messages in its order; the repeat left out
    assert list(zip(english, japanese)) == [
        ("Error: %s not found", "エラー: %s が見つかりません"), ("Quit", "終了"),
        ("%d file", "%d 個のファイル"), ("&File", "ファイル(&F)"), ("two", "二"), ("lines", "行")]


def test_spaces_and_tabs_stay_and_unmatched_lines_become_one(tmp_path):
    """A --help text keeps its columns; a message whose translation has another number of
    lines is one pair, its line breaks as spaces; whitespace-only lines are left out."""
    write_mo(tmp_path / "x/fi/LC_MESSAGES/ls.mo", {
        **HEADER,
        "  -a, --all     do not ignore\n\t-l\tlong\n": "  -a, --all     älä ohita\n\t-l\tpitkä\n",
        "one\ntwo\nthree": "yksi kaksi\nkolme",
        "\n \n": "\n \n"})
    write_corpus([str(tmp_path / "x")], "fi", str(tmp_path / "raw"))
    english = (tmp_path / "raw/train.en").read_text(encoding="utf-8").splitlines()
    finnish = (tmp_path / "raw/train.fi").read_text(encoding="utf-8").splitlines()
    assert list(zip(english, finnish)) == [
        ("  -a, --all     do not ignore", "  -a, --all     älä ohita"),
        ("\t-l\tlong", "\t-l\tpitkä"),
        ("one two three", "yksi kaksi kolme")]


def test_the_target_file_takes_the_suffix(tmp_path):
    write_mo(tmp_path / "x/zh_CN/LC_MESSAGES/tar.mo", {**HEADER, "Quit": "退出"})
    write_corpus([str(tmp_path / "x")], "zh_CN", str(tmp_path / "raw"), suffix="zh")
    assert (tmp_path / "raw/train.zh").read_text(encoding="utf-8") == "退出\n"


def test_no_catalog_is_one_line_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--lang", "ja", "--out", str(tmp_path / "raw"), str(tmp_path)])
    assert exit_info.value.code == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "no ja/LC_MESSAGES/*.mo catalog found" in error
    assert "dpkg-deb -x" in error, error
    assert not (tmp_path / "raw").exists()


def test_a_language_without_catalogs_names_the_languages_there(tmp_path, capsys):
    for lang in ("de", "pt_BR", "sr@latin"):
        write_mo(tmp_path / f"x/{lang}/LC_MESSAGES/tar.mo", {**HEADER, "Quit": "x"})
    with pytest.raises(SystemExit) as exit_info:
        main(["--lang", "pt-PT", "--out", str(tmp_path / "raw"), str(tmp_path / "x")])
    assert exit_info.value.code == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("xlpe-catalog-corpus: error:") and len(error.splitlines()) == 1
    assert error.endswith("the catalogs there are of: de pt_BR sr@latin"), error


@pytest.mark.parametrize("lang, folder", [("pt-BR", "pt_BR"), ("pt_br", "pt_BR"),
                                          ("zh-CN", "zh_CN"), ("sr-Latn", "sr@latin")])
def test_a_code_as_users_write_it_reads_its_catalogs_and_names_the_file(tmp_path, lang, folder):
    write_mo(tmp_path / f"x/{folder}/LC_MESSAGES/tar.mo", {**HEADER, "Quit": "Sair"})
    write_mo(tmp_path / "x/pt/LC_MESSAGES/tar.mo", {**HEADER, "Quit": "Saír"})
    write_mo(tmp_path / "x/sr/LC_MESSAGES/tar.mo", {**HEADER, "Quit": "Изађи"})
    main(["--lang", lang, "--out", str(tmp_path / "raw"), str(tmp_path / "x")])
    assert (tmp_path / f"raw/train.{lang}").read_text(encoding="utf-8") == "Sair\n"


def test_max_pairs_draws_a_seeded_sample_in_the_catalogs_order(tmp_path):
    messages = {f"message {i}": f"mensagem {i}" for i in range(50)}
    write_mo(tmp_path / "x/pt_BR/LC_MESSAGES/tar.mo", {**HEADER, **messages})
    every = [f"message {i}" for i in sorted(range(50), key=lambda i: f"message {i}")]
    corpora = []
    for run in ("a", "b"):
        main(["--lang", "pt-BR", "--max-pairs", "10", "--out", str(tmp_path / run),
              str(tmp_path / "x")])
        corpora.append((tmp_path / run / "train.en").read_text().splitlines())
    assert corpora[0] == corpora[1], "the same seed drew another sample"
    assert len(corpora[0]) == 10 and corpora[0] == [m for m in every if m in corpora[0]]
    main(["--lang", "pt-BR", "--max-pairs", "10", "--seed", "2", "--out", str(tmp_path / "c"),
          str(tmp_path / "x")])
    assert (tmp_path / "c" / "train.en").read_text().splitlines() != corpora[0]
