"""Reading input text: UTF-8 errors located, one line rule, line counts, parallel chunks."""
import os

import pytest

from xlpe_fairseq.io.errors import InputError
from xlpe_fairseq.io.lines import (
    check_same_line_count,
    count_lines,
    open_text,
    read_lines,
    read_parallel_chunks,
    require_files,
    text_lines,
)


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_count_lines_counts_unterminated_last_line(tmp_path):
    assert count_lines(write(tmp_path / "a", "x\ny")) == 2
    assert count_lines(write(tmp_path / "b", "x\ny\n")) == 2
    assert count_lines(write(tmp_path / "c", "")) == 0


def test_mismatched_line_counts_name_both_files(tmp_path):
    a = write(tmp_path / "a.he", "1\n2\n3\n")
    b = write(tmp_path / "b.en", "1\n2\n")
    with pytest.raises(InputError, match=r"a.he: 3 lines, .*b.en: 2 lines"):
        check_same_line_count([a, b])


def test_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match=r"nope.txt: no such file"):
        require_files([str(tmp_path / "nope.txt")])


def test_parallel_chunks_carry_one_based_line_numbers(tmp_path):
    a = write(tmp_path / "a", "".join(f"a{k}\n" for k in range(5)))
    b = write(tmp_path / "b", "".join(f"b{k}\n" for k in range(5)))
    chunks = list(read_parallel_chunks([a, b], 2))
    assert [lineno for lineno, _ in chunks] == [1, 3, 5]
    assert chunks[1][1] == [("a2", "b2"), ("a3", "b3")]


@pytest.mark.parametrize("content, line, byte, column", [
    (b"\xff\xfeh\x00i\x00\n", 1, 0xFF, 1),  # a UTF-16 file with its byte-order mark
    (b"ok\nca\xe9t\xe9\n", 2, 0xE9, 3),  # Latin-1
    (b"ok\n\xc3\xa9t\xe9\n", 2, 0xE9, 4),  # the column counts bytes: \xc3\xa9 is one character
    (b"ok\nok\nab\xc3\n", 3, 0xC3, 3),  # a character cut off at the end of the line
])
def test_undecodable_byte_is_located_by_line_and_column(tmp_path, content, line, byte, column):
    path = tmp_path / "in.txt"
    path.write_bytes(content)
    expected = f"{path} line {line}: not UTF-8 (byte 0x{byte:02x} at column {column})"
    with pytest.raises(InputError) as error:
        read_lines(str(path))
    assert str(error.value) == expected
    with pytest.raises(InputError) as error, open_text(str(path)) as f:
        f.read()
    assert str(error.value) == expected


def test_undecodable_byte_in_a_later_chunk_has_its_file_line_number(tmp_path):
    good = write(tmp_path / "a", "".join(f"a{k}\n" for k in range(9)))
    bad = tmp_path / "b"
    bad.write_bytes(b"".join(b"b\xff\n" if k == 6 else b"b\n" for k in range(9)))
    with pytest.raises(InputError) as error:
        list(read_parallel_chunks([good, str(bad)], 2))
    assert str(error.value) == f"{bad} line 7: not UTF-8 (byte 0xff at column 2)"


def test_errors_of_the_chunk_consumer_are_not_renamed(tmp_path):
    path = write(tmp_path / "a", "x\n")
    with pytest.raises(UnicodeDecodeError):
        for _ in read_parallel_chunks([path], 2):
            b"\xff".decode("utf-8")


def test_a_lone_carriage_return_is_refused_where_counting_and_reading_would_disagree(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"a b\rc d\ne f\n")
    assert count_lines(str(path)) == 2
    with pytest.raises(InputError) as error:
        read_lines(str(path))
    assert str(error.value).startswith(
        f"{path} line 1: carriage return (\\r) inside the line (byte column 4)")
    with pytest.raises(InputError, match="line 1: carriage return"):
        list(read_parallel_chunks([str(path)], 10))


def test_crlf_and_a_leading_byte_order_mark_read_as_plain_lines(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes("\ufeffa\r\n\ufeffb\r\nc".encode())
    assert count_lines(str(path)) == 3
    assert read_lines(str(path)) == ["a", "\ufeffb", "c"], "only a leading mark is dropped"
    with text_lines(str(path)) as lines:
        assert list(lines) == ["a", "\ufeffb", "c"]


def test_a_pipe_as_input_is_named_as_such_not_missing(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="fifo: not a regular file .* save it to a file first"):
        require_files([str(fifo)])


def test_an_empty_input_name_is_refused_as_such():
    """not ': no such file', a message without a name"""
    with pytest.raises(InputError, match="^'': an empty name, expected an input file$"):
        require_files([""])
