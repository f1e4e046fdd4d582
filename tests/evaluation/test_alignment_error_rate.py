import pytest

from xlpe_fairseq.evaluation.alignment_error_rate import (
    AlignmentCounts,
    corpus_scores,
    format_links,
    merge_bpe_links,
    parse_gold,
    parse_predicted,
    read_gold,
    word_count,
    word_index_of_pieces,
)
from xlpe_fairseq.io import InputError


def test_gold_sure_links_are_also_possible():
    sure, possible = parse_gold("0-0 1?2 2-1", "gold:1")
    assert sure == {(0, 0), (2, 1)}
    assert possible == {(0, 0), (1, 2), (2, 1)}


def test_aer_precision_recall_with_sure_and_possible_links():
    # S = {0-0, 1-1}, P = S + {1-2, 2-2}; A = {0-0, 1-2, 2-0}
    sure, possible = parse_gold("0-0 1-1 1?2 2?2", "gold:1")
    counts = AlignmentCounts()
    counts.add(parse_predicted("0-0 1-2 2-0", "pred:1"), sure, possible)
    assert counts.precision == pytest.approx(2 / 3)  # |A∩P| = 2 of |A| = 3
    assert counts.recall == pytest.approx(1 / 2)  # |A∩S| = 1 of |S| = 2
    assert counts.aer == pytest.approx(1 - (1 + 2) / (3 + 2))


def test_perfect_and_empty_predictions():
    sure, possible = parse_gold("0-0 1-1", "gold:1")
    perfect = AlignmentCounts()
    perfect.add({(0, 0), (1, 1)}, sure, possible)
    assert (perfect.aer, perfect.precision, perfect.recall) == (0.0, 1.0, 1.0)
    empty = AlignmentCounts()
    empty.add(set(), sure, possible)
    assert (empty.aer, empty.precision, empty.recall) == (1.0, 0.0, 0.0)


def test_scores_are_corpus_level_sums_not_sentence_averages():
    gold = [parse_gold("0-0", "g:1"), parse_gold("0-0 1-1 2-2 3-3", "g:2")]
    predicted = [{(0, 1)}, {(0, 0), (1, 1), (2, 2), (3, 3)}]
    counts = corpus_scores(predicted, gold)
    assert counts.precision == pytest.approx(4 / 5)
    assert counts.recall == pytest.approx(4 / 5)
    assert counts.aer == pytest.approx(1 - 8 / 10)  # sentence average would be 0.5


def test_bpe_pieces_map_to_words():
    pieces = "the wal@@ k@@ ed home@@".split()
    assert word_index_of_pieces(pieces) == [0, 1, 1, 1, 2]
    assert word_count(pieces) == 3
    assert word_count([]) == 0


def test_word_is_linked_if_any_of_its_pieces_is():
    source = "un@@ believ@@ able story".split()
    target = "incroy@@ able histoire".split()
    links = {(0, 0), (2, 1), (3, 2), (1, 0)}
    assert merge_bpe_links(links, source, target) == {(0, 0), (1, 1)}


def test_link_outside_the_bpe_sentence_names_where():
    with pytest.raises(InputError, match=r"links.bpe:7: link 3-0 is outside"):
        merge_bpe_links({(3, 0)}, ["a", "b"], ["c"], "links.bpe:7")


def test_malformed_link_names_file_and_line(tmp_path):
    gold = tmp_path / "gold.align"
    gold.write_text("0-0 1-1\n0-0 1:1\n")
    with pytest.raises(InputError, match=r"gold.align:2: '1:1' is not a link"):
        read_gold(gold)
    with pytest.raises(InputError, match="pred:3: predicted links are i-j"):
        parse_predicted("0?1", "pred:3")


def test_sentence_count_mismatch_is_an_error():
    with pytest.raises(InputError, match="has 1 sentences and gold 2"):
        corpus_scores([set()], [(set(), set()), (set(), set())])


def test_format_links_sorts():
    assert format_links({(2, 0), (0, 1), (0, 0)}) == "0-0 0-1 2-0"


@pytest.mark.parametrize("gold_lines", [[], ["", ""], ["0?0", ""]])
def test_xlpe_aer_refuses_gold_without_sure_links(tmp_path, capsys, gold_lines):
    from xlpe_fairseq.evaluation import attention_alignment

    gold = tmp_path / "gold.align"
    gold.write_text("".join(line + "\n" for line in gold_lines))
    links = tmp_path / "pred.align"
    links.write_text("".join("\n" for _ in gold_lines))
    with pytest.raises(SystemExit) as exit_info:
        attention_alignment.main(["--gold", str(gold), "--links", f"sys={links}"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1, err
    assert len(err.splitlines()) == 1 and "AER" not in capsys.readouterr().out, err
    assert f"{gold}: no" in err, err
