"""PE_IN at initialisation, before any update: xlpe-inxl-diagnostics' measures on the valid
split for InXL models built as fairseq-train builds them, at several widths and both inits.

    python docs/results/inxl-at-scale/init_diagnostics.py DATA_BIN [SEEDS...]

DATA_BIN: the xlpe data-bin of data_prep/prepare-libreoffice.sh en-tr. Prints one JSON line a
model (width, layers, init, seed and the measures).
"""
import json
import os
import sys

import torch
from fairseq import options, tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf

from xlpe_fairseq.evaluation.attention_alignment import split_batches
from xlpe_fairseq.evaluation.inxl_diagnostics import input_diagnostics

USER_DIR = os.path.dirname(os.path.abspath(sys.modules["xlpe_fairseq"].__file__))


def build(data_bin, width, layers, init, seed):
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, [
        data_bin, "--user-dir", USER_DIR, "--task", "translation_reorder",
        "--source-lang", "en", "--target-lang", "tr", "--arch", "transformer_xlpe",
        "--xlpe-mode", "inxl", "--xlpe-init", init, "--share-decoder-input-output-embed",
        "--encoder-embed-dim", str(width), "--decoder-embed-dim", str(width),
        "--encoder-ffn-embed-dim", str(2 * width), "--decoder-ffn-embed-dim", str(2 * width),
        "--encoder-layers", str(layers), "--decoder-layers", str(layers),
        "--encoder-attention-heads", "4", "--decoder-attention-heads", "4", "--cpu"])
    cfg = convert_namespace_to_omegaconf(args)
    task = tasks.setup_task(cfg.task)
    torch.manual_seed(seed)
    return task.build_model(cfg.model).eval(), task


def main():
    data_bin, seeds = sys.argv[1], [int(s) for s in sys.argv[2:]] or [1]
    for width, layers in ((128, 2), (512, 6)):
        for init in ("xavier", "identity"):
            for seed in seeds:
                model, task = build(data_bin, width, layers, init, seed)
                _, batches = split_batches(model, task, "valid", 4000)
                found = input_diagnostics(model, batches)
                print(json.dumps({"width": width, "layers": layers, "init": init, "seed": seed,
                                  **found}, sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
