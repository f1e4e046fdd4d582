"""scripts/benchmark.py runs every model and every data-preparation step and writes its table.

Smoke tests at tiny sizes: they check that each row is produced with sane fields, never how
fast anything is (speed is the script's output, not a test's assertion)."""
import json
import os
import subprocess
import sys
from pathlib import Path

from synthetic_corpus import write_corpus

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "benchmark.py"
TINY = ["--size", "tiny", "--device", "cpu", "--tokens", "64", "--length", "8", "--vocab", "50",
        "--steps", "1", "--warmup", "0", "--rounds", "1", "--decode-sentences", "2"]


def benchmark(tmp_path, *args):
    output = tmp_path / "benchmark.json"
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore",
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([sys.executable, SCRIPT, *TINY, *map(str, args), "--json", output],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, f"benchmark failed:\n{result.stderr[-3000:]}"
    return json.loads(output.read_text())


def test_every_model_and_preparation_step_gets_a_row(tmp_path):
    corpus = tmp_path / "corpus"
    write_corpus(corpus, sizes={"train": 50})
    results = benchmark(tmp_path, "--no-memory", "--prep", "--prep-corpus", corpus,
                        "--prep-files", "train.xx", "train.yy", "train.align",
                        "--prep-pairs", "120", "--align-pairs", "60", "--prep-tmp", tmp_path)
    models = {row["model"]: row for row in results["models"]}
    assert set(models) == {"transformer", "dpe", "xlpe-inxl", "xlpe-headxl", "xlpe-combination",
                           "re-encoder", "re-decoder", "re-both", "relpe", "rope", "alibi",
                           "t5-bias", "lstm"}, f"models measured: {set(models)}"
    for name, row in models.items():
        assert row["train_ratio"] > 0 and row["decode_ratio"] > 0, f"{name}: {row}"
        assert row["train_ratio_spread"] >= 0 and row["decode_ratio_spread"] >= 0, f"{name}: {row}"
        # only the LSTM, another architecture, may need less arithmetic than the Transformer
        assert 0 < row["ceiling"] <= (2 if name == "lstm" else 1), f"{name}: {row['ceiling']}"
    assert models["transformer"]["train_ratio_spread"] == 0, "transformer against itself"
    assert results["device"] == "cpu" and results["device_name"], "the report names the device"
    steps = [row["step"] for row in results["preparation"]]
    assert steps == ["reorder --method dpe", "reorder --method btg",
                     "align (eflomal, both directions + gdfa)"], steps
    pairs = [row["pairs"] for row in results["preparation"]]
    assert pairs == [150, 150, 100], f"the corpus is repeated to at least the pairs asked: {pairs}"


def test_peak_memory_is_measured_against_transformer(tmp_path):
    results = benchmark(tmp_path, "--models", "re-both")
    rows = {row["model"]: row for row in results["models"]}
    assert set(rows) == {"transformer", "re-both"}, "transformer is always the reference row"
    assert rows["transformer"]["mem_ratio"] == 1.0
    assert rows["re-both"]["peak_mem_mb"] > 0 and rows["re-both"]["mem_ratio"] > 0, rows["re-both"]


def test_ratio_spread_is_the_range_of_the_rounds_ratios_over_their_median():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from benchmark import ratio_spread
    finally:
        sys.path.remove(str(SCRIPT.parent))
    # per-round ratios 1.0, 0.9, 1.1: range 0.2 over median 1.0
    spread = ratio_spread([1.0, 0.9, 1.1], [1.0, 1.0, 1.0])
    assert abs(spread - 0.2) < 1e-9, f"spread of rounds 1.0/0.9/1.1: {spread}"
    assert ratio_spread([2.0, 4.0], [1.0, 2.0]) == 0, "equal per-round ratios agree exactly"
