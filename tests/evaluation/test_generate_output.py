"""The one reader of fairseq-generate output: two outputs joined, or sentences missing, are
refused whatever lines fairseq printed around the hypotheses (S-, T-, H-, D-, P-, A-)."""
import json

import pytest

from xlpe_fairseq.evaluation import bleu, compare, noise_attack
from xlpe_fairseq.evaluation.generate_output import (
    IncompleteGenerationError,
    read_generate_output,
    read_hypotheses,
)

REFERENCES = ["the cat sat on the mat .", "a dog barked loudly today ."]


def fairseq_generate_output(hypotheses, order=None, targets=None):
    """What fairseq-generate prints: each sentence's S-, T-, H-, D-, P- and A- lines together,
    sentences in batch order, a score line at the end. The T- lines hold ``targets``, or
    ``reference K``."""
    lines = []
    for k in order or range(len(hypotheses)):
        text = hypotheses[k]
        target = targets[k] if targets else f"reference {k}"
        scores = " ".join("-0.1" for _ in text.split())
        lines += [f"S-{k}\tsource {k}", f"T-{k}\t{target}", f"H-{k}\t-0.1\t{text}",
                  f"D-{k}\t-0.1\t{text}", f"P-{k}\t{scores}", f"A-{k}\t0-0 1-1"]
    lines.append("Generate test with beam=5: BLEU4 = 100.00, 100.0/100.0/100.0/100.0")
    return "".join(line + "\n" for line in lines)


@pytest.fixture
def joined(tmp_path):
    """Two runs of fairseq-generate on the same test set, one output after the other."""
    path = tmp_path / "joined.out"
    path.write_text(fairseq_generate_output(REFERENCES, order=[1, 0])
                    + fairseq_generate_output(["oops", "oops"]))
    reference = tmp_path / "ref.en"
    reference.write_text("".join(line + "\n" for line in REFERENCES))
    return path, reference


def test_one_output_is_read_in_corpus_order(tmp_path):
    path = tmp_path / "gen.out"
    path.write_text(fairseq_generate_output(REFERENCES, order=[1, 0]))
    assert read_hypotheses(path, 2) == REFERENCES


def test_joined_outputs_are_refused_naming_the_line_where_the_second_begins(joined):
    path, _ = joined
    with pytest.raises(IncompleteGenerationError) as error:
        read_hypotheses(path, 2)
    # the second output's S-0 (line 14: two sentences of six lines and a score line before
    # it), though the first output ended with sentence 0 too
    assert str(error.value).startswith(f"{path} line 14: sentence 0 again (first at line 7)")


def test_joined_outputs_in_the_same_order_are_refused(tmp_path):
    path = tmp_path / "joined.out"
    path.write_text(fairseq_generate_output(REFERENCES) * 2)
    with pytest.raises(IncompleteGenerationError, match=r"line 14: sentence 0 again \(first at line 1\)"):
        read_hypotheses(path, 2)


def test_the_nbest_hypotheses_of_one_sentence_are_read_as_one(tmp_path):
    path = tmp_path / "gen.out"
    path.write_text("S-0\tx\nT-0\ty\nH-0\t-0.1\tbest\nD-0\t-0.1\tbest\nP-0\t-0.1\n"
                    "H-0\t-0.9\tsecond\nD-0\t-0.9\tsecond\nP-0\t-0.9\n")
    assert read_hypotheses(path, 1) == ["best"]


@pytest.mark.parametrize("tag", ["S", "T", "D", "P", "A"])
def test_an_id_met_again_on_any_kind_of_line_is_refused(tmp_path, tag):
    path = tmp_path / "gen.out"
    path.write_text(fairseq_generate_output(REFERENCES) + f"{tag}-0\tsomething\n")
    with pytest.raises(IncompleteGenerationError, match=r"line 14: sentence 0 again"):
        read_hypotheses(path, 2)


def test_a_sentence_without_its_hypothesis_is_named(tmp_path):
    path = tmp_path / "gen.out"
    path.write_text(fairseq_generate_output(REFERENCES).replace("H-1\t", "X-1\t"))
    with pytest.raises(IncompleteGenerationError, match=r"line 7: sentence 1 has no hypothesis"):
        read_hypotheses(path, 2)


def test_a_sentence_left_out_is_missing(tmp_path):
    path = tmp_path / "gen.out"
    path.write_text(fairseq_generate_output(REFERENCES + ["x"], order=[0, 2]))
    with pytest.raises(IncompleteGenerationError, match=r"first missing ids: \[1\]"):
        read_hypotheses(path, 3)


def run_failing(main, argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 1, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_xlpe_bleu_refuses_joined_outputs(joined, capsys):
    path, reference = joined
    err = run_failing(bleu.main, ["--generate-output", str(path), "--reference", str(reference),
                                  "--target-lang", "en"], capsys)
    assert f"{path} line 14: sentence 0 again" in err


def test_xlpe_compare_refuses_joined_outputs(joined, capsys, tmp_path):
    path, reference = joined
    single = tmp_path / "single.out"
    # its T- lines hold the reference: xlpe-compare checks them before reading the next output
    single.write_text(fairseq_generate_output(REFERENCES, targets=REFERENCES))
    err = run_failing(compare.main, [
        "--generated", f"a={single}", "--generated", f"b={path}", "--reference", str(reference),
        "--target-lang", "en", "--output-dir", str(tmp_path / "cmp")], capsys)
    assert f"{path} line 14: sentence 0 again" in err
    assert not (tmp_path / "cmp").exists()


def test_xlpe_noise_curve_refuses_joined_outputs(joined, capsys, tmp_path):
    path, reference = joined
    out = tmp_path / "curve"
    err = run_failing(noise_attack.main, [
        "--generate-outputs", f"0={path}", "--reference", str(reference), "--target-lang", "en",
        "--output-dir", str(out)], capsys)
    assert f"{path} line 14: sentence 0 again" in err
    assert not (out / "noise_curve.json").exists()


def test_xlpe_noise_curve_scores_one_output(tmp_path):
    path = tmp_path / "gen.out"
    path.write_text(fairseq_generate_output(REFERENCES, order=[1, 0]))
    reference = tmp_path / "ref.en"
    reference.write_text("".join(line + "\n" for line in REFERENCES))
    noise_attack.main(["--generate-outputs", f"0={path}", "--reference", str(reference),
                       "--target-lang", "en", "--output-dir", str(tmp_path)])
    assert json.loads((tmp_path / "noise_curve.json").read_text())["XL PE"] == {"0": 100.0}


def test_two_runs_merged_by_id_are_refused_where_a_hypothesis_outscores_the_one_before(tmp_path):
    """`sort` of two runs' H- lines keeps each id's lines together: only the scores, which
    fairseq prints best first, tell the merge from an n-best list."""
    path = tmp_path / "merged.out"
    path.write_text("H-0\t-0.9\toops\nH-0\t-0.2\tthe cat sat on the mat .\n"
                    "H-1\t-0.9\toops\nH-1\t-0.3\ta dog barked loudly today .\n")
    with pytest.raises(IncompleteGenerationError) as error:
        read_hypotheses(path, 2)
    assert str(error.value).startswith(
        f"{path} line 2: sentence 0's hypothesis scores -0.2, above the one before it (-0.9, "
        "line 1); expected the output of one fairseq-generate run"), str(error.value)


def test_equal_scores_and_a_new_sentence_start_no_comparison(tmp_path):
    path = tmp_path / "gen.out"
    path.write_text("H-0\t-0.5\ta\nH-0\t-0.5\tb\nH-1\t-0.1\tc\nH-1\t-0.7\td\n")
    assert read_hypotheses(path, 2) == ["a", "c"]


def test_a_hypothesis_score_that_is_no_number_is_a_malformed_line(tmp_path):
    path = tmp_path / "gen.out"
    path.write_text("H-0\tbest\ta house\n")
    with pytest.raises(IncompleteGenerationError,
                       match=r"line 1: not a hypothesis line .*numeric SCORE"):
        read_hypotheses(path, 1)


def test_the_targets_come_back_in_corpus_order_with_their_lines(tmp_path):
    path = tmp_path / "gen.out"
    path.write_text(fairseq_generate_output(REFERENCES, order=[1, 0]))
    generated = read_generate_output(path, 2)
    assert generated.hypotheses == REFERENCES
    assert generated.targets == [(8, "reference 0"), (2, "reference 1")]
    path.write_text("H-0\t-0.1\ta\n")
    assert read_generate_output(path, 1).targets is None, "no T- lines: nothing to check"
