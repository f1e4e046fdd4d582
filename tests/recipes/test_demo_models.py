"""examples/demo.sh takes the model names xlpe-study uses; it checks them before preparing data."""
import subprocess
from pathlib import Path

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
