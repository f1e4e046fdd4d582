"""The docs' tables of models hold to the model registry: docs/models.md's is written from it
(scripts/model_table.py), and README's table of methods names each model's architecture with
the data-bin it reads."""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

from xlpe_fairseq.model_registry import MODELS, flags

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "model_table.py"


def load_script():
    spec = importlib.util.spec_from_file_location("model_table", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_models_page_has_the_registrys_table():
    result = subprocess.run([sys.executable, SCRIPT, "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_a_page_whose_table_differs_is_found(tmp_path):
    script = load_script()
    page = tmp_path / "models.md"
    page.write_text(f"# Models\n\n{script.table()}\n\nmore\n", encoding="utf-8")
    assert script.main(["--check", "--page", str(page)]) == 0
    page.write_text(page.read_text().replace("`dpe` | dpe |", "`text` | dpe |"))
    assert script.main(["--check", "--page", str(page)]) == 1
    assert script.main(["--page", str(page)]) == 0
    assert script.main(["--check", "--page", str(page)]) == 0, "rewritten from the registry"
    assert page.read_text().endswith("\n\nmore\n"), "the rest of the page is kept"


def readme_methods():
    """``[(architectures named, the data-bin's first word)]`` of README's table of methods."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    table = text.split("| method | `--arch` |", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in table.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows.append((set(re.findall(r"`([a-z0-9_]+)`", cells[1])),
                     re.match(r"`(\w+)`", cells[-1]).group(1)))
    return rows


def test_the_readme_names_each_models_architecture_with_its_data_bin():
    rows = readme_methods()
    for name, model in MODELS.items():
        archs = {words[words.index("--arch") + 1] for words in
                 (flags(name, size) for size in ("small", "base"))}
        found = [data_bin for named, data_bin in rows if archs & named]
        assert found, f"README's table of methods names no architecture of {name} ({archs})"
        assert found[0] == model.variant, \
            f"README says {name} ({archs}) reads {found[0]}, the registry {model.variant}"
