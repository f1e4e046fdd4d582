"""The share of saturated tanh units in InXL's input (and its norm) during sizes.sh's runs, as
a markdown table: one row a width, depth and init, one column every 80 updates.

    python docs/results/inxl-at-scale/cpu-512/sizes_table.py LOG_DIR [LOG_DIR...]

Logs are named inxl-INIT-WIDTH-LAYERS+LAYERS.log (sizes.sh) or inxl-ROW-s1.log (run.sh, seed 1,
512 wide, 6+6).
"""
import re
import sys
from pathlib import Path

from xlpe_fairseq.evaluation.study.logs import TRAIN_LINES, log_fields

COLUMNS = (80, 160, 240, 320, 400, 480)


def main(log_dirs):
    rows = []
    for log in sorted(path for folder in log_dirs for path in Path(folder).glob("inxl-*.log")):
        sized = re.fullmatch(r"inxl-(\w+)-(\d+)-(\d)\+\d", log.stem)
        full = re.fullmatch(r"inxl-([\w.-]+)-s1", log.stem)
        if not (sized or full):
            continue
        init, width, layers = sized.groups() if sized else (full.group(1), "512", "6")
        logged = {int(f["num_updates"]): f for f in log_fields(log, TRAIN_LINES[0])
                  if "xlpe_saturated" in f}
        cells = [f"{100 * float(logged[u]['xlpe_saturated']):.1f}% "
                 f"({float(logged[u]['xlpe_in_norm']):.1f})" if u in logged else ""
                 for u in COLUMNS]
        rows.append(((int(width), int(layers), init), cells))
    print("| width | layers | init | " + " | ".join(f"update {u}" for u in COLUMNS) + " |")
    print("|---|---|---|" + "---|" * len(COLUMNS))
    for (width, layers, init), cells in sorted(rows):
        print(f"| {width} | {layers}+{layers} | {init} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
