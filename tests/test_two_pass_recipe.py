"""examples/two_pass.sh (DPE paper §3.1, Table 2): the reordering, translation and baseline
Transformers train on the right data, are decoded from averaged checkpoints, and the four rows
of Table 2 are reported, with tiny models on an OUT of the synthetic corpus."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from synthetic_corpus import write_prepared_corpus

RECIPE = Path(__file__).resolve().parents[1] / "examples" / "two_pass.sh"
TINY = ("--encoder-embed-dim 16 --decoder-embed-dim 16 --encoder-ffn-embed-dim 32 "
        "--decoder-ffn-embed-dim 32 --encoder-layers 1 --decoder-layers 1 --max-tokens 100 "
        "--warmup-updates 1")


def test_two_pass_reports_the_four_rows_of_dpe_table_2_from_averaged_checkpoints(tmp_path):
    data = write_prepared_corpus(tmp_path / "data", {"train": 60, "valid": 4, "test": 5},
                                 joined=False)
    bpe = data / "bpe"
    work = tmp_path / "work"
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    result = subprocess.run(
        ["bash", str(RECIPE), "--data", str(data), "--work", str(work), "--src", "xx",
         "--tgt", "yy", "--updates", "8", "--model-args", TINY],
        capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]

    # the synthetic corpus translates word by word (sN -> tN) after reordering, so the
    # target-ordered source is the target with s for t
    reordered = (work / "text" / "train.xxord").read_text()
    assert reordered == (bpe / "train.yy").read_text().replace("t", "s"), (
        "the reordering Transformer must learn source -> source in target order")
    reference = (work / "reference.test.xxord").read_text()
    assert reference == (bpe / "test.yy").read_text().replace("t", "s"), (
        "rows 1 and 4 need the test source reordered from bpe/test.align by DPE's rules")
    first_pass = (work / "reordered.test.xx").read_text().splitlines()
    assert len(first_pass) == 5, "the first pass must reorder every test sentence"
    for name, source, target in [("reordering", "xx", "xxord"), ("translation", "xxord", "yy"),
                                 ("baseline", "xx", "yy")]:
        log = (work / name / "train.log").read_text()
        assert f"'source_lang': '{source}', 'target_lang': '{target}'" in log, (
            f"the {name} Transformer must translate {source} -> {target}")
        # fairseq saves no update checkpoint at an epoch's end: checkpoint_last.pt stands in
        # for the last update where it ended one
        averaged = log.split("= mean of ")[-1].splitlines()[0].strip().split(", ")
        updates = [8 if name == "checkpoint_last.pt"
                   else int(re.fullmatch(r"checkpoint_\d+_(\d+)\.pt", name)[1])
                   for name in averaged]
        assert len(updates) == 5 and updates == sorted(updates, reverse=True) and updates[0] >= 7, (
            f"the {name} Transformer is decoded from its last 5 checkpoints averaged: {averaged}")

    # row 4 feeds the translation Transformer the alignment-reordered source itself
    oracle_sources = sorted(
        (int(line.split("\t")[0][2:]), line.split("\t")[1])
        for line in (work / "oracle.generate.out").read_text().splitlines()
        if line.startswith("S-"))
    assert [s for _, s in oracle_sources] == reference.splitlines()

    rows = json.loads((work / "results.json").read_text())
    assert [(r["row"], r["sentences"]) for r in rows] == [(1, 5), (2, 5), (3, 5), (4, 5)]
    assert "tok:none" in rows[0]["bleu_signature"], "row 1 scores the BPE pieces as they are"
    assert json.loads((work / "bleu.json").read_text())["bleu"] == rows[2]["bleu"], (
        "bleu.json stays the two-pass system's score (the demo's row)")
    table = (work / "results.md").read_text()
    assert "| 4 | + fed with the alignment-reordered source (oracle) |" in table
