"""Imports point down (docs/pipeline.md, "Where the code lives"): the research core (models,
modules, criterion, task, data, the preorderer's inference) reaches only itself and the ground
floor (io, text), so that it lifts out of the tooling around it; the ground imports nothing
above it. Read from the source, every ``import`` and ``from ... import`` of the package,
wherever it stands in a module (a function's own import counts too)."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "xlpe_fairseq"
GROUND = {"io", "text", "help_format"}
CORE = {"models", "modules", "criterions", "tasks", "data", "plugin_errors", "tokenizer",
        "fairseq_support", "user_dir"}
# the preorderer the task runs on raw input, and what it is built from
PREORDERER = {"preordering.preorderer", "preordering.btg_kbest", "preordering.btg_search",
              "preordering.model", "preordering.vocabulary"}


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path):
    """The xlpe_fairseq modules ``path`` imports (a package's names as the package)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [target]
            if not node.module or node.level:  # from . import models: the submodules
                targets += [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t.startswith("xlpe_fairseq."))
    return found


def graph():
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {target for target in imports(path) if target in modules}
            for name, path in modules.items()}


def inside(name, parts):
    relative = name.removeprefix("xlpe_fairseq.")
    return any(relative == part or relative.startswith(part + ".") for part in parts)


def reached(edges, start):
    seen, todo = set(), [start]
    while todo:
        for target in edges.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_ground_imports_nothing_above_it():
    edges = graph()
    above = {(name, target) for name, targets in edges.items() if inside(name, GROUND)
             for target in targets if not inside(target, GROUND)}
    assert not above, f"io and text must not import from above them: {sorted(above)}"


def test_the_research_core_reaches_only_itself_and_the_ground():
    edges = graph()
    allowed = GROUND | CORE | PREORDERER
    outside = {}
    for name in edges:
        if inside(name, CORE):
            leaks = sorted(t for t in reached(edges, name) if not inside(t, allowed))
            if leaks:
                outside[name] = leaks
    assert not outside, ("the core must lift out with io and text alone; these modules reach "
                         f"the tooling: {outside}")
