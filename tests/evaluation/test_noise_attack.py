"""xlpe-noise-curve (Ding et al. 2020, Fig. 4): reading results, scoring generate outputs,
the table and plot, and examples/noise_attack.sh run with one tiny model."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from synthetic_corpus import write_prepared_corpus
from xlpe_fairseq.evaluation.noise_attack import main, read_results
from xlpe_fairseq.io import InputError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
RECIPE = Path(__file__).resolve().parents[2] / "examples" / "noise_attack.sh"


def test_results_from_tsv_with_header_and_comments_and_from_json(tmp_path):
    tsv = tmp_path / "xlpe.tsv"
    tsv.write_text("noise\tBLEU\n0\t28.4\n0.05 28.1  # a comment\n\n0.2\t27.0\n")
    assert read_results(str(tsv)) == {0.0: 28.4, 0.05: 28.1, 0.2: 27.0}
    js = tmp_path / "xlpe.json"
    js.write_text('{"0": 28.4, "0.1": 27.9}')
    assert read_results(str(js)) == {0.0: 28.4, 0.1: 27.9}


def test_bad_results_line_names_file_and_line(tmp_path):
    tsv = tmp_path / "bad.tsv"
    tsv.write_text("0\t28.4\n0.05\n")
    with pytest.raises(InputError, match=r"bad.tsv:2: expected two fields"):
        read_results(str(tsv))


def test_table_json_and_png_for_two_models(tmp_path, capsys):
    (tmp_path / "a.tsv").write_text("0 28.4\n0.1 27.9\n0.2 26.5\n")
    (tmp_path / "b.json").write_text('{"0": 27.0, "0.2": 26.0}')
    out = tmp_path / "out"
    main(["--results", f"XL PE={tmp_path / 'a.tsv'}", f"other={tmp_path / 'b.json'}",
          "--output-dir", str(out)])
    table = (out / "noise_curve.md").read_text()
    assert "| reorder noise | XL PE | other |" in table
    assert "| 0.1 | 27.90 |  |" in table, "a missing point stays blank"
    assert table in capsys.readouterr().out
    assert json.loads((out / "noise_curve.json").read_text())["other"] == {"0": 27.0, "0.2": 26.0}
    assert (out / "noise_curve.png").read_bytes().startswith(PNG_MAGIC)


def test_generate_outputs_are_scored_against_the_reference(tmp_path):
    reference = tmp_path / "ref.en"
    reference.write_text("the cat sat on the mat .\na dog barked loudly today .\n")
    perfect, half = tmp_path / "perfect.out", tmp_path / "half.out"
    perfect.write_text("H-1\t-0.1\ta dog barked loudly today .\n"
                       "H-0\t-0.1\tthe cat sat on the mat .\n")
    half.write_text("H-0\t-0.1\tthe cat sat on the mat .\nH-1\t-0.1\tsomething else entirely\n")
    main(["--generate-outputs", f"0={perfect}", f"0.2={half}", "--name", "xlpe",
          "--reference", str(reference), "--target-lang", "en", "--output-dir", str(tmp_path)])
    scores = json.loads((tmp_path / "noise_curve.json").read_text())["xlpe"]
    assert scores["0"] == 100.0 and scores["0.2"] < 100.0


def test_incomplete_generate_output_is_an_error_naming_the_file(tmp_path, capsys):
    (tmp_path / "ref.en").write_text("one\ntwo\n")
    (tmp_path / "gen.out").write_text("H-0\t-0.1\tone\n")
    with pytest.raises(SystemExit):
        main(["--generate-outputs", f"0={tmp_path / 'gen.out'}", "--reference",
              str(tmp_path / "ref.en"), "--target-lang", "en", "--output-dir", str(tmp_path)])
    assert "gen.out" in capsys.readouterr().err


def test_recipe_trains_decodes_and_plots_one_tiny_model(tmp_path):
    """examples/noise_attack.sh trains through xlpe-train and scores through xlpe-evaluate,
    on a prepared OUT."""
    data = write_prepared_corpus(tmp_path / "data", {"train": 100, "valid": 4, "test": 4})
    tiny = ("--encoder-embed-dim 16 --decoder-embed-dim 16 --encoder-ffn-embed-dim 32 "
            "--decoder-ffn-embed-dim 32 --encoder-layers 1 --decoder-layers 1 --max-tokens 600 "
            "--warmup-updates 1")
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    result = subprocess.run(
        ["bash", str(RECIPE), "--data", str(data), "--updates", "1", "--noises", "0.1",
         "--model-args", tiny, "--work", str(tmp_path / "work")],
        capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    checkpoints = tmp_path / "work" / "noise-0.1" / "checkpoints"
    assert "'reorder_noise': 0.1" in (checkpoints / "train.log").read_text()
    assert (checkpoints / "schedule.env").read_text() == \
        "SCHEDULE=demo\nTRAINED_MODEL=xlpe-combination\n", "trained by xlpe-train"
    assert (checkpoints / "bleu-test.json").is_file(), "scored by xlpe-evaluate"
    assert (tmp_path / "work" / "noise_curve.png").read_bytes().startswith(PNG_MAGIC)
    assert "| 0.1 |" in (tmp_path / "work" / "noise_curve.md").read_text()
