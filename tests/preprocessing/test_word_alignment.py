"""Word alignment: grow-diag-final-and, input checks, and a real eflomal run."""
import random

import pytest

from xlpe_fairseq.io import InputError
from xlpe_fairseq.preprocessing import word_alignment
from xlpe_fairseq.preprocessing.word_alignment import (
    align_files,
    grow_diag_final_and,
    main,
    parse_links,
)


def links(text):
    return sorted(parse_links(text))


def test_gdfa_agreeing_directions_give_the_intersection():
    assert grow_diag_final_and(links("0-0 1-1"), links("0-0 1-1")) == links("0-0 1-1")


def test_gdfa_grows_into_diagonal_neighbours_of_unaligned_words():
    # intersection {0-0}; 1-1 (diagonal neighbour, both words unaligned) is added
    assert grow_diag_final_and(links("0-0 1-1"), links("0-0")) == links("0-0 1-1")


def test_gdfa_does_not_grow_between_two_aligned_words():
    # 0-1 neighbours 0-0, but source 0 and target 1 are both aligned already
    forward = links("0-0 1-1 0-1")
    reverse = links("0-0 1-1")
    assert grow_diag_final_and(forward, reverse) == links("0-0 1-1")


def test_gdfa_grows_one_to_many_when_one_side_is_unaligned():
    # target 1 is unaligned in the intersection, so 0-1 (next to 0-0) is added
    assert grow_diag_final_and(links("0-0 0-1"), links("0-0")) == links("0-0 0-1")


def test_gdfa_final_and_adds_isolated_links_only_if_both_words_unaligned():
    # 3-3 is far from everything and both words are unaligned: added by final-and;
    # 0-3 is not adjacent and target 3 is then aligned: rejected
    forward = links("0-0 3-3")
    reverse = links("0-0 0-3")
    assert grow_diag_final_and(forward, reverse) == links("0-0 3-3")


def test_gdfa_grows_transitively():
    # a diagonal chain grows step by step from the intersection
    forward = links("0-0 1-1 2-2 3-3")
    assert grow_diag_final_and(forward, links("0-0")) == forward


def test_gdfa_empty():
    assert grow_diag_final_and(set(), set()) == []


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_mismatched_line_counts(tmp_path):
    src = write(tmp_path / "train.he", ["a b", "c"])
    tgt = write(tmp_path / "train.en", ["x"])
    with pytest.raises(InputError, match=r"train.he: 2 lines, .*train.en: 1 lines"):
        align_files(src, tgt, str(tmp_path / "out"))


def test_empty_line_names_file_and_line(tmp_path):
    src = write(tmp_path / "train.he", ["a b", "c", "d"])
    tgt = write(tmp_path / "train.en", ["x", "   ", "z"])
    with pytest.raises(InputError, match=r"train.en line 2: empty line"):
        align_files(src, tgt, str(tmp_path / "out"), chunk_size=1)
    assert not (tmp_path / "out").exists()


def test_missing_aligner_binary(tmp_path, monkeypatch, capsys):
    src = write(tmp_path / "s", ["a"])
    tgt = write(tmp_path / "t", ["x"])
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(word_alignment.sys, "executable", str(tmp_path / "python"))
    with pytest.raises(SystemExit) as exit_info:
        main(["--source", src, "--target", tgt, "--output", str(tmp_path / "out")])
    assert exit_info.value.code == 1
    assert "eflomal-align not found on PATH; pip install eflomal" in capsys.readouterr().err
    with pytest.raises(InputError, match=r"fast_align not found on PATH"):
        align_files(src, tgt, str(tmp_path / "out"), aligner="fast_align")


def synthetic_corpus(n_pairs, seed=0):
    """Source words s<k> translate to target words t<k>, with the target order reversed."""
    rng = random.Random(seed)
    sources, targets = [], []
    for _ in range(n_pairs):
        words = [rng.randrange(12) for _ in range(rng.randint(3, 8))]
        sources.append(" ".join(f"s{w}" for w in words))
        targets.append(" ".join(f"t{w}" for w in reversed(words)))
    return sources, targets


def eflomal_installed():
    try:
        word_alignment.find_tool("eflomal-align")
    except InputError:
        return False
    return True


@pytest.mark.skipif(not eflomal_installed(), reason="eflomal-align not installed")
@pytest.mark.parametrize("chunk_size,workers", [(1000, 1), (20, 2)])
def test_eflomal_on_synthetic_pairs(tmp_path, chunk_size, workers):
    sources, targets = synthetic_corpus(50)
    src = write(tmp_path / "train.s", sources)
    tgt = write(tmp_path / "train.t", targets)
    out, fwd = tmp_path / "train.align", tmp_path / "train.fwd"
    align_files(src, tgt, str(out), forward_output=str(fwd), workers=workers,
                chunk_size=chunk_size)
    lines = out.read_text().splitlines()
    assert len(lines) == 50 and len(fwd.read_text().splitlines()) == 50
    correct = total = 0
    for line, s, t in zip(lines, sources, targets):
        s_words, t_words = s.split(), t.split()
        for i, j in parse_links(line):
            assert i < len(s_words) and j < len(t_words), f"link {i}-{j} outside {s!r}/{t!r}"
            correct += s_words[i][1:] == t_words[j][1:]
            total += 1
    assert total > 0 and correct / total > 0.8, f"only {correct}/{total} links are translations"
    assert not list(tmp_path.glob(".xlpe-align.*")), "temporary chunk files left behind"


@pytest.mark.skipif(not eflomal_installed(), reason="eflomal-align not installed")
def test_aligner_failure_reports_the_command(tmp_path, capsys):
    src = write(tmp_path / "s", ["a b"])
    tgt = write(tmp_path / "t", ["x y"])
    with pytest.raises(SystemExit) as exit_info:
        main(["--source", src, "--target", tgt, "--output", str(tmp_path / "out"),
              "--aligner-args=--no-such-option"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "eflomal-align" in err and "failed with status" in err, err
    assert not (tmp_path / "out").exists()


def unrelated_corpus(n_pairs, seed=0):
    """Random words on both sides: every alignment is a guess, so eflomal's sampling decides."""
    rng = random.Random(seed)
    return [[" ".join(f"{side}{rng.randrange(30)}" for _ in range(rng.randint(3, 9)))
             for _ in range(n_pairs)] for side in ("s", "t")]


@pytest.mark.skipif(not eflomal_installed(), reason="eflomal-align not installed")
def test_eflomal_seed_fixes_the_alignment_whatever_the_workers(tmp_path):
    sources, targets = unrelated_corpus(200)
    src = write(tmp_path / "train.s", sources)
    tgt = write(tmp_path / "train.t", targets)

    def align(name, **options):
        align_files(src, tgt, str(tmp_path / name), **options)
        return (tmp_path / name).read_text()

    first = align("seed1", seed=1, workers=1)
    assert align("seed1-again", seed=1, workers=2) == first, \
        "the same seed gave another alignment (with 2 workers instead of 1)"
    assert align("seed2", seed=2, workers=2) != first, "the seed does not reach eflomal"
    assert not list(tmp_path.glob(".xlpe-align.*")), "temporary chunk files left behind"


def test_seed_option_takes_an_integer_or_none():
    parser = word_alignment.build_parser()
    required = ["--source", "s", "--target", "t", "--output", "o"]
    assert parser.parse_args(required).seed == 1
    assert parser.parse_args(required + ["--seed", "7"]).seed == 7
    assert parser.parse_args(required + ["--seed", "none"]).seed is None
    with pytest.raises(SystemExit):
        parser.parse_args(required + ["--seed", "random"])


@pytest.mark.parametrize("producer,expected", [
    (b"GNU C99 12.2.0 -march=x86-64-v3 -mtune=generic -g -Ofast -std=gnu99 -fopenmp",
     ("GCC 12.2.0 -march=x86-64-v3 -mtune=generic", True)),
    # what -march=native records on an AMD EPYC (Zen 4)
    (b"GNU C99 12.2.0 -march=znver3 -mmmx -mavx512f --param=l1-cache-size=32 -mtune=znver3 -g",
     ("GCC 12.2.0 -march=znver3 -mtune=znver3", False)),
    (b"GNU C99 12.2.0 -march=x86-64-v3 -mtune=znver3 -g", ("GCC 12.2.0 -march=x86-64-v3 "
                                                         "-mtune=znver3", False)),
    (b"GNU C17 13.1.0 -g -O2", ("GCC 13.1.0 -march=x86-64 -mtune=generic", True)),
])
def test_eflomal_build_reads_the_compiler_options_recorded_in_the_binary(tmp_path, producer,
                                                                         expected):
    binary = tmp_path / "eflomal"
    binary.write_bytes(b"\x7fELF\0code\0" + producer + b"\0/dev/urandom\0")
    assert word_alignment.eflomal_build(str(binary)) == expected


def test_eflomal_build_of_a_binary_without_debug_information(tmp_path):
    binary = tmp_path / "eflomal"
    binary.write_bytes(b"\x7fELF\0stripped\0")
    assert word_alignment.eflomal_build(str(binary)) is None


@pytest.mark.skipif(not eflomal_installed(), reason="eflomal-align not installed")
def test_installed_eflomal_is_built_for_any_cpu():
    """`make setup` builds eflomal for x86-64-v3 (xlpe-install-eflomal): a build for the
    CPU at hand (pip's, -march=native) aligns the demo's corpus differently on another model."""
    build = word_alignment.eflomal_build()
    assert build is not None and build[1], (
        f"eflomal was built for this CPU ({build and build[0]}); rebuild it with "
        "xlpe-install-eflomal (make setup does)")
