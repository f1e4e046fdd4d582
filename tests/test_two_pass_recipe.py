"""examples/two_pass.sh (DPE paper §3.1): both Transformers train on the right data and the
test split goes through both passes, with tiny models on the synthetic corpus."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from synthetic_corpus import write_corpus
from test_cli_end_to_end import run

RECIPE = Path(__file__).resolve().parents[1] / "examples" / "two_pass.sh"
TINY = ("--encoder-embed-dim 16 --decoder-embed-dim 16 --encoder-ffn-embed-dim 32 "
        "--decoder-ffn-embed-dim 32 --encoder-layers 1 --decoder-layers 1 --max-tokens 600 "
        "--warmup-updates 1")


def test_two_pass_trains_on_oracle_reordered_source_and_translates_every_sentence(tmp_path):
    data = tmp_path / "data"
    bpe = write_corpus(data / "bpe", sizes={"train": 60, "test": 5})
    run("fairseq_cli.preprocess", "--source-lang", "xx", "--target-lang", "yy",
        "--trainpref", bpe / "train", "--destdir", data / "data-bin", "--workers", "1")
    (data / "corpus").mkdir()
    shutil.copy(bpe / "test.yy", data / "corpus" / "test.yy")
    work = tmp_path / "work"
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    result = subprocess.run(
        ["bash", str(RECIPE), "--data", str(data), "--work", str(work), "--src", "xx",
         "--tgt", "yy", "--updates", "2", "--model-args", TINY],
        capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]

    # the synthetic corpus translates word by word (sN -> tN) after reordering, so the
    # target-ordered source is the target with s for t
    reordered = (work / "text" / "train.xxord").read_text()
    assert reordered == (bpe / "train.yy").read_text().replace("t", "s"), (
        "the reordering Transformer must learn source -> source in target order")
    first_pass = (work / "reordered.test.xx").read_text().splitlines()
    assert len(first_pass) == 5, "the first pass must reorder every test sentence"
    assert json.loads((work / "bleu.json").read_text())["sentences"] == 5
    for name, source, target in [("reordering", "xx", "xxord"), ("translation", "xxord", "yy")]:
        log = (work / f"{name}.train.log").read_text()
        assert f"'source_lang': '{source}', 'target_lang': '{target}'" in log, (
            f"the {name} Transformer must translate {source} -> {target}")
