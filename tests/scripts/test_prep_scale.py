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


def test_members_side_by_side_are_one_step_of_their_span():
    """Four members, two at a time: the step took from the first start to the last end, and
    the CPU time of all four."""
    members = [{"step": f"train preorderer (seed {k}, at most 9 epochs, 3600s)",
                "started": 100.0 + 50.0 * ((k - 1) // 2), "wall_s": 50.0, "cpu_s": 49.0,
                "max_rss_mib": 500.0, "tree_peak_mib": 480.0} for k in (1, 2, 3, 4)]
    row = prep_scale.by_step(members, cores=2)["train preorderer (all members)"]
    assert row["wall_s"] == 100.0 and row["cpu_s"] == 196.0, row
    assert row["tree_peak_mib"] == 960.0 and row["max_rss_mib"] == 1000.0, (
        f"two members at a time hold twice one member's memory: {row}")
    unstamped = [{key: value for key, value in m.items() if key != "started"} for m in members]
    row = prep_scale.by_step(unstamped, cores=2)["train preorderer (all members)"]
    assert row["wall_s"] == 100.0 and row["tree_peak_mib"] == 960.0, (
        f"without start times, the members are taken two at a time: {row}")


def test_steps_one_after_another_peak_alone():
    steps = [{"step": "tokenize train.en", "started": 0.0, "wall_s": 10.0, "cpu_s": 10.0,
              "max_rss_mib": 100.0, "tree_peak_mib": 90.0},
             {"step": "tokenize train.en", "started": 10.0, "wall_s": 5.0, "cpu_s": 5.0,
              "max_rss_mib": 120.0, "tree_peak_mib": 80.0}]
    row = prep_scale.by_step(steps, cores=2)["tokenize train.en"]
    assert (row["max_rss_mib"], row["tree_peak_mib"]) == (120.0, 90.0), (
        f"a step that starts as another ends does not add to its memory: {row}")


def test_a_step_has_one_name_at_every_size():
    assert prep_scale.step_name("learn BPE (5000 joint merges)") == "learn BPE"
    assert prep_scale.step_name(
        "clean train (1..175 tokens, ratio within 1.5 of the corpus ratio)") == "clean train"
    assert prep_scale.step_name("reorder train (dpe)") == "reorder train (dpe)"
