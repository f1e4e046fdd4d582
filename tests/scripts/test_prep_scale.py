"""scripts/prep_scale.py: the repeated corpus it prepares, and how it projects each step."""
import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "prep_scale.py"
spec = importlib.util.spec_from_file_location("prep_scale", SCRIPT)
prep_scale = importlib.util.module_from_spec(spec)
spec.loader.exec_module(prep_scale)


def step(wall, cpu=None, peak=50.0):
    return {"wall_s": wall, "cpu_s": wall if cpu is None else cpu, "max_rss_mib": peak,
            "tree_peak_mib": peak}


def test_the_corpus_is_the_real_one_repeated_and_shuffled(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "train.en").write_text("".join(f"e{k}\n" for k in range(7)))
    (raw / "train.de").write_text("".join(f"d{k}\n" for k in range(7)))
    for split in ("valid", "test"):
        for lang in ("en", "de"):
            (raw / f"{split}.{lang}").write_text(f"{split} {lang}\n")
    prep_scale.repeated_corpus(raw, tmp_path / "out", "en", "de", 30, seed=1)
    sources = (tmp_path / "out" / "train.en").read_text().splitlines()
    targets = (tmp_path / "out" / "train.de").read_text().splitlines()
    assert len(sources) == 30 and [s[1:] for s in sources] == [t[1:] for t in targets], \
        "the pairs stay pairs"
    assert sorted(set(sources)) == [f"e{k}" for k in range(7)]
    assert sources != sorted(sources), "shuffled, not 7 blocks of the same lines"
    assert (tmp_path / "out" / "test.de").read_text() == "test de\n"


def test_linear_steps_are_projected_linearly_and_constant_ones_kept():
    runs = {100000: {"align": step(100.0), "preorder valid/test": step(30.0),
                     "superlinear": step(10.0, peak=200.0)},
            1000000: {"align": step(1000.0), "preorder valid/test": step(31.0),
                      "superlinear": step(1000.0, peak=2000.0)}}
    text = prep_scale.report(runs, [4000000])
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in text.splitlines()}
    assert rows["align"][7] == "1.00" and rows["align"][8] == "66.7 min", rows["align"]
    assert rows["preorder valid/test"][8] == "0.5 min", "a step that did not grow stays"
    # 10 s to 1000 s over ten times the pairs: exponent 2, 16 times at four times the size
    assert rows["superlinear"][7] == "2.00" and rows["superlinear"][8] == "266.7 min", \
        rows["superlinear"]
    assert rows["superlinear"][9].strip(" |") == "8000", "memory grows linearly with it"
    assert "**all steps**" in text and "5.56 h" in text, text
