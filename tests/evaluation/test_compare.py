"""xlpe-compare: paired bootstrap on constructed hypotheses, parameter counts, and the table
for a tiny checkpoint translated through fairseq-generate beside a given generate output."""
import json
import random

import pytest

from evaluation.tiny_checkpoints import session_checkpoints
from xlpe_fairseq.evaluation.attention_alignment import load_model
from xlpe_fairseq.evaluation.compare import compare, main, parameter_count

WORDS = [f"word{k}" for k in range(50)]


def corrupted(sentences, rate, seed):
    """Each word replaced by a wrong one with probability ``rate``."""
    rng = random.Random(seed)
    return [" ".join("oops" if rng.random() < rate else w for w in s.split()) for s in sentences]


@pytest.fixture(scope="module")
def references():
    rng = random.Random(0)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 15))) for _ in range(200)]


def test_system_against_itself_is_not_significant(references):
    system = corrupted(references, 0.3, seed=1)
    result = compare({"a": system, "copy": list(system)}, references, "a", samples=200)
    copy = result["systems"][1]
    assert copy["bleu_p"] == 1.0 and copy["chrf_p"] == 1.0
    assert copy["bleu_delta"] == 0.0


def test_clearly_better_system_is_significant_either_way_round(references):
    good, bad = corrupted(references, 0.1, seed=1), corrupted(references, 0.5, seed=2)
    better = compare({"bad": bad, "good": good}, references, "bad", samples=200)["systems"][1]
    assert better["bleu_delta"] > 0 and better["bleu_p"] < 0.01 and better["chrf_p"] < 0.01
    worse = compare({"good": good, "bad": bad}, references, "good", samples=200)["systems"][1]
    assert worse["bleu_delta"] < 0 and worse["bleu_p"] < 0.01


def test_similar_systems_are_not_significant(references):
    first, second = corrupted(references, 0.3, seed=1), corrupted(references, 0.3, seed=2)
    result = compare({"a": first, "b": second}, references, "a", samples=200)
    assert result["systems"][1]["bleu_p"] > 0.05


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return session_checkpoints(tmp_path_factory)


def test_parameter_count_equals_the_model_counting_tied_weights_once(tiny):
    corpus, checkpoints = tiny
    for checkpoint in checkpoints.values():
        model, _ = load_model(str(checkpoint), str(corpus["data_bin"]))
        assert parameter_count(checkpoint) == sum(p.numel() for p in model.parameters())
    assert parameter_count(checkpoints["tied"]) < parameter_count(checkpoints["untied"])


def test_table_of_a_checkpoint_and_a_generate_output(tiny, tmp_path):
    corpus, checkpoints = tiny
    checkpoint = checkpoints["tied"]
    references = (corpus["raw"] / "test.yy").read_text().splitlines()
    # fairseq-generate's format, out of order, for a system that translates perfectly
    perfect = tmp_path / "perfect.out"
    perfect.write_text("".join(f"S-{i}\tx\nH-{i}\t-0.1\t{line}\n"
                               for i, line in reversed(list(enumerate(references)))))
    main(["--checkpoint", f"model={checkpoint}", "--generated", f"perfect={perfect}",
          "--params", f"perfect={checkpoint}", "--data-bin", str(corpus["data_bin"]),
          "--generate-args", "--beam 2 --batch-size 5", "--output-dir", str(tmp_path),
          "--reference", str(corpus["raw"] / "test.yy"), "--target-lang", "en",
          "--bootstrap-samples", "100", "--markdown", str(tmp_path / "table.md"),
          "--json", str(tmp_path / "table.json")])
    result = json.loads((tmp_path / "table.json").read_text())
    model, perfect_row = result["systems"]
    assert result["baseline"] == "model" and model["baseline"] and model["bleu_p"] == 1.0
    assert model["sentences"] == perfect_row["sentences"] == 12
    assert model["parameters"] == perfect_row["parameters"] == parameter_count(checkpoint)
    assert perfect_row["bleu"] == 100.0 and perfect_row["bleu_delta"] > 0
    table = (tmp_path / "table.md").read_text()
    assert "| model (baseline) |" in table and "| perfect |" in table and "BLEU: nrefs:1" in table
    assert (tmp_path / "model.gen").exists()


def compare_checkpoint(tmp_path, capsys, split):
    """xlpe-compare decoding a checkpoint that is none on a data-bin of empty files; returns
    (exit status, stderr)."""
    data_bin = tmp_path / "data-bin"
    data_bin.mkdir()
    for name in ("dict.xx.txt", "dict.yy.txt", "test.xx-yy.xx.idx", "valid.xx-yy.xx.idx"):
        (data_bin / name).write_text("")
    checkpoint = tmp_path / "checkpoint.pt"
    checkpoint.write_text("")
    reference = tmp_path / "ref.yy"
    reference.write_text("a house\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["--checkpoint", f"a={checkpoint}", "--data-bin", str(data_bin), "--gen-subset",
              split, "--reference", str(reference), "--target-lang", "en", "--output-dir",
              str(tmp_path / "out")])
    return exit_info.value.code, capsys.readouterr().err


def test_a_split_the_data_bin_lacks_is_one_line_before_any_decoding(tmp_path, capsys):
    status, err = compare_checkpoint(tmp_path, capsys, "bogus")
    assert status == 1, err
    assert err == (f"xlpe-compare: error: {tmp_path / 'data-bin'}: no 'bogus' split (no "
                   "bogus.*.idx); --gen-subset takes one of its splits: test, valid\n")


def test_fairseq_generate_failing_is_one_line_naming_its_log(tmp_path, capsys):
    status, err = compare_checkpoint(tmp_path, capsys, "test")
    log = tmp_path / "out" / "a.gen.log"
    assert status == 1, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"xlpe-compare: error: fairseq-generate failed on "
                          f"{tmp_path / 'checkpoint.pt'} (exit 1): ") and f"(its log: {log})" in err
    assert "Traceback" in log.read_text(), "the log keeps fairseq's whole report"
    assert not (tmp_path / "out" / "a.gen").exists()
