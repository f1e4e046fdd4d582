"""demo.sh, two_pass.sh, noise_attack.sh, position_sets.sh and prepare-bible-he-en.sh check
every option and setting before any work: a bad value is one line naming it, exit 2, and
nothing is written (the demo no longer prepares its corpus before refusing --updates abc)."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO, TWO_PASS, NOISE, POSITIONS, BIBLE = (
    "examples/demo.sh", "examples/two_pass.sh", "examples/noise_attack.sh",
    "examples/position_sets.sh", "data_prep/prepare-bible-he-en.sh")
CORES = len(os.sched_getaffinity(0))


@pytest.mark.parametrize("script, args, env, message", [
    (DEMO, ["--updates", "abc"], {}, "--updates must be a whole number of at least 1, not 'abc'"),
    (DEMO, ["--updates"], {}, "--updates needs a value"),
    (DEMO, ["--updates", ""], {}, "--updates must be a whole number of at least 1, not ''"),
    (DEMO, ["--models", "transformer", "--work"], {}, "--work needs a value"),
    (DEMO, ["--work", ""], {}, "--work must name a folder, not ''"),
    (DEMO, ["--models", " "], {}, "--models must name at least one model, not ' '"),
    (DEMO, ["--models", "bogus"], {}, "unknown model bogus"),
    (DEMO, ["--models", "two-pass", "--updates", "3"], {},
     "--updates must be at least 5 for two-pass (it averages 5 checkpoints), not '3'"),
    (DEMO, ["--bogus"], {}, f"unknown option --bogus (see {ROOT / DEMO} --help)"),
    (TWO_PASS, ["--updates", "abc"], {}, "--updates must be a whole number of at least 1, not 'abc'"),
    (TWO_PASS, ["--average"], {}, "--average needs a value"),
    (TWO_PASS, ["--src", "../x"], {}, "--src must be a language code such as en or pt-BR, not '../x'"),
    (TWO_PASS, ["--work", ""], {}, "--work must name a file or folder, not ''"),
    (NOISE, ["--noises", "0 2"], {}, "--noises must be ratios from 0 to 1, not '2'"),
    (NOISE, ["--noises", "0 nan"], {}, "--noises must be ratios from 0 to 1, not 'nan'"),
    (NOISE, ["--updates", "0"], {}, "--updates must be a whole number of at least 1, not '0'"),
    (NOISE, ["--data"], {}, "--data needs a value"),
    (NOISE, ["--data", ""], {}, "--data must name a folder, not ''"),
    (POSITIONS, ["bin", "bpe", "e n", "de", "out"], {},
     "SRC must be a language code such as en or pt-BR, not 'e n'"),
    (POSITIONS, ["bin", "bpe", "en", "de", ""], {}, "OUT must name a folder, not ''"),
    (BIBLE, ["--bogus", "out"], {}, f"unknown option --bogus (see {ROOT / BIBLE} --help)"),
    (BIBLE, [""], {}, f"usage: {ROOT / BIBLE} [--xlpe] OUTDIR"),
    (BIBLE, ["out"], {"WORKERS": "abc"}, f"WORKERS must be a whole number from 1 to {CORES}, not 'abc'"),
    (BIBLE, ["out"], {"MERGES": "0"}, "MERGES must be a whole number of at least 1, not '0'"),
    (BIBLE, ["out"], {"XLPE": "yes"}, "XLPE must be one of: 0 1, not 'yes'"),
    (BIBLE, ["out"], {"PREORDER_FOLDS": "1"},
     "PREORDER_FOLDS must be a whole number of at least 2, not '1'"),
])
def test_a_bad_option_is_one_usage_error_before_any_work(tmp_path, script, args, env, message):
    result = subprocess.run([str(ROOT / script), *args], cwd=tmp_path, capture_output=True,
                            text=True, stdin=subprocess.DEVNULL, env={**os.environ, **env},
                            timeout=60)
    assert result.returncode == 2, result.stderr
    # (the Bible recipe and two_pass.sh are Python's, whose errors say the program; the others
    # are bash)
    prefix = f"{Path(script).name}: error: " if script in (BIBLE, TWO_PASS) else ""
    assert result.stderr == prefix + message + "\n", result.stderr
    assert not any(tmp_path.iterdir()), f"{script} wrote {sorted(os.listdir(tmp_path))}"
