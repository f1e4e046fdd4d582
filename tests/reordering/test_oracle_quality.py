"""Oracle quality measures (xlpe_fairseq.reordering.oracle_quality) on hand-made alignments."""
import pytest

from xlpe_fairseq.reordering.btg_rules import btg_positions
from xlpe_fairseq.reordering.oracle_quality import (
    implied_inversions,
    main,
    mean_sort_positions,
    split_words,
)


def links(text):
    return [tuple(map(int, link.split("-"))) for link in text.split()]


@pytest.mark.parametrize("positions, split", [
    ([1, 2, 0], 0),  # the word moves as a block
    ([2, 0, 1], 1),  # its pieces are torn apart
    ([2, 1, 0], 1),  # its pieces are swapped
])
def test_split_words(positions, split):
    assert split_words(["a@@", "b", "c"], positions) == (1, split)


def test_wide_one_to_many_link_implies_the_inversions_inside_its_span():
    # A B C D E with A on target 0 and 4: B C D are inverted among themselves (3 pairs)
    tokens, alignment = list("ABCDE"), links("0-0 0-4 1-3 2-2 3-1 4-5")
    assert implied_inversions(tokens, alignment, [0, 1, 2, 3, 4]) == (3, 0)
    assert implied_inversions(tokens, alignment, btg_positions(tokens, alignment)) == (3, 3)
    assert implied_inversions(tokens, alignment, mean_sort_positions(5, alignment)) == (3, 3)


def test_a_split_word_does_not_realize_its_inversion():
    # "wor@@ d" goes before "a"; leaving the unaligned wor@@ behind with "a" realizes nothing
    tokens, alignment = ["a", "wor@@", "d"], links("0-1 2-0")
    assert implied_inversions(tokens, alignment, [1, 2, 0]) == (1, 0)
    assert implied_inversions(tokens, alignment, [2, 0, 1]) == (1, 1)
    assert split_words(tokens, mean_sort_positions(3, alignment)) == (1, 1)
    assert split_words(tokens, btg_positions(tokens, alignment)) == (1, 0)


def test_command_reports_both_methods(tmp_path, capsys):
    paths = []
    for name, lines in [("s", ["a wor@@ d", "x y"]), ("t", ["u v", "u v"]),
                        ("a", ["0-1 2-0", "0-1 1-0"])]:
        paths.append(tmp_path / name)
        paths[-1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    main(["--source", str(paths[0]), "--target", str(paths[1]), "--alignment", str(paths[2])])
    btg, mean_sort = capsys.readouterr().out.splitlines()
    assert btg.startswith("btg: 2 pairs; split words 0 of 1 (0.0%); realized inversions 2 of 2")
    assert mean_sort.startswith("mean-sort: 2 pairs; split words 1 of 1 (100.0%); "
                                "realized inversions 1 of 2")
