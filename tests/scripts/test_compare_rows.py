"""scripts/compare_rows.py: a later row against published test outputs, by the study's test."""
import subprocess
import sys
from pathlib import Path

import numpy as np

from xlpe_fairseq.evaluation.bleu import metrics
from xlpe_fairseq.evaluation.compare import sentence_statistics
from xlpe_fairseq.evaluation.study import seed_bootstrap

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "compare_rows.py"
REFERENCES = [f"the cat number {i} sat on the mat today" for i in range(12)]


def write_row(folder, model, outputs):
    (folder / model).mkdir(parents=True)
    for seed, lines in enumerate(outputs, start=1):
        (folder / model / f"seed{seed}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def compare(tmp_path, *args):
    return subprocess.run([sys.executable, SCRIPT, "--reference", tmp_path / "ref.txt",
                           "--target-lang", "en", *map(str, args)], capture_output=True, text=True)


def test_the_row_is_tested_against_each_published_model_as_the_study_tests(tmp_path):
    (tmp_path / "ref.txt").write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    good = [REFERENCES, [line.replace("today", "") for line in REFERENCES], REFERENCES]
    bad = [[line.replace("cat", "dog") for line in REFERENCES]] * 3
    write_row(tmp_path / "published", "baseline", bad)
    write_row(tmp_path / "later", "variant", good)
    result = compare(tmp_path, "--row", f"variant={tmp_path / 'later'}",
                     "--against", tmp_path / "published")
    assert result.returncode == 0, result.stderr
    bleu = metrics()["bleu"]
    expected = seed_bootstrap(bleu, [sentence_statistics(bleu, run, REFERENCES) for run in bad],
                              [sentence_statistics(bleu, run, REFERENCES) for run in good], 1000,
                              np.random.default_rng(12345))
    row = result.stdout.splitlines()[2]
    assert row.startswith("| baseline | "), result.stdout
    assert f"{expected['delta']:+.2f} [{expected['low']:+.2f}, {expected['high']:+.2f}], " \
           f"{expected['p']:.3f}" in row, f"not the study's bootstrap: {row}"


def test_a_run_of_another_length_is_refused_in_one_line(tmp_path):
    (tmp_path / "ref.txt").write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    write_row(tmp_path / "published", "baseline", [REFERENCES] * 3)
    write_row(tmp_path / "later", "variant", [REFERENCES, REFERENCES[:-1], REFERENCES])
    result = compare(tmp_path, "--row", f"variant={tmp_path / 'later'}",
                     "--against", tmp_path / "published")
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0 and "seed2.txt: 11 lines, expected 12" in \
        result.stderr, result.stderr
