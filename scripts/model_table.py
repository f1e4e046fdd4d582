#!/usr/bin/env python3
"""Write the table of models in docs/models.md from the model registry
(xlpe_fairseq/model_registry.py): each model's name, what it is, the fairseq-train flags it
takes at the base and small sizes, the data-bin it reads and its paper's schedule, then the
sizes. ``--check`` (what the test runs) exits 1 when the page's table differs.

    scripts/model_table.py [--check] [--page FILE]
"""
import argparse
import sys
from pathlib import Path

from xlpe_fairseq.model_registry import MODELS, SIZES, TRAIN_SIZES, flags

PAGE = Path(__file__).resolve().parents[1] / "docs" / "models.md"
BEGIN = "<!-- the models' table: written by scripts/model_table.py from the registry -->"
END = "<!-- end of the models' table -->"


def own_flags(name, size):
    """The flags model ``name`` adds to the size's dims at ``size``."""
    words = flags(name, size)
    if MODELS[name].sized:
        words = words[len(SIZES[size].dims):]
    return f"`{' '.join(words)}`"


def table():
    lines = ["| model | what it is | fairseq-train flags at base (at small, after its dims) "
             "| data-bin | schedule at base, big |", "|---|---|---|---|---|"]
    for name, model in MODELS.items():
        schedules = model.schedule + (f", {model.big_schedule}" if model.big_schedule else "")
        lines.append(f"| `{name}` | {model.description} | {own_flags(name, 'base')} "
                     f"({own_flags(name, 'small')}) | `{model.variant}` | {schedules} |")
    lines += ["", "| size (`xlpe-train --size`) | what it is | schedule |", "|---|---|---|"]
    for name in TRAIN_SIZES:
        size = SIZES[name]
        schedule = size.schedule or "the model's paper's"
        lines.append(f"| `{name}` | {size.description} | {schedule} |")
    return "\n".join([BEGIN, *lines, END])


def with_table(page):
    """``page`` with its table replaced by the registry's."""
    before, _, rest = page.partition(BEGIN)
    _, found, after = rest.partition(END)
    if not found:
        raise SystemExit(f"{PAGE}: no table between {BEGIN!r} and {END!r}")
    return before + table() + after


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when the page's table differs from the registry's")
    parser.add_argument("--page", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    page = args.page.read_text(encoding="utf-8")
    written = with_table(page)
    if args.check:
        if written != page:
            print(f"{args.page}: its table of models differs from the registry's; run "
                  "scripts/model_table.py", file=sys.stderr)
            return 1
        return 0
    args.page.write_text(written, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
