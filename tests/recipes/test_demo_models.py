"""examples/demo.sh takes the model names xlpe-study uses; it checks them before preparing data; its
summary shows the range measured at its defaults."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_demo_knows_transformer_deep_and_its_old_name(tmp_path):
    result = subprocess.run(
        ["bash", "examples/demo.sh", "--models", "transformer-deep transformer-4e no-such-model",
         "--work", str(tmp_path / "demo")], cwd=REPO, capture_output=True, text=True)
    assert result.returncode != 0 and "unknown model no-such-model" in result.stderr, \
        result.stderr
    assert "unknown model transformer" not in result.stderr, \
        "transformer-deep (and its alias transformer-4e) must be demo models: " + result.stderr
    assert not (tmp_path / "demo" / "data").exists(), "no data is prepared for a wrong name"


def demo_summary(work, gpu):
    """The table demo.sh ends with, from its own summary code, for the runs in ``work``."""
    script = (REPO / "examples" / "demo.sh").read_text()
    code = script.rsplit("<<'PY'\n", 1)[1].split("\nPY\n", 1)[0]  # the last heredoc
    result = subprocess.run([sys.executable, "-", str(work), "", str(work / "data"), gpu],
                            input=code, capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("updates, gpu, shown", [("500", "0", True), ("2000", "0", False),
                                                 ("500", "1", False)])
def test_demo_prints_the_measured_range_beside_its_default_cpu_scores(tmp_path, updates, gpu,
                                                                      shown):
    (tmp_path / "data" / "bpe").mkdir(parents=True)
    for name in ("codes", "train.align", "train.dpe.reorder"):
        (tmp_path / "data" / "bpe" / name).write_text(name)
    for model, bleu in (("transformer", 5.6), ("dpe", 5.88)):
        (tmp_path / model).mkdir()
        (tmp_path / model / "bleu.json").write_text(json.dumps(
            {"bleu": bleu, "chrf": 20.4, "sentences": 1000, "bleu_signature": "sig",
             "chrf_signature": "chrf-sig"}))
        (tmp_path / model / "train_seconds").write_text("300\n")
        (tmp_path / model / "updates").write_text(updates + "\n")
    table = demo_summary(tmp_path, gpu)
    line = ("measured at 500 updates on a 2-core CPU: BLEU transformer 6.49, dpe 5.94; another "
            "CPU model moves one seed by a few tenths")
    assert (line in table) == shown, table
