"""The package's shape: dependencies point one way (no import cycle, function-local imports included),
and no module reaches into another's private names."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "validator"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(name: str) -> list[tuple[str, list[str]]]:
    """(imported module, names taken from it) for every import statement, at any depth."""
    path = MODULES[name]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.startswith("validator")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("validator"):
            names = [a.name for a in node.names]
            submodules = [f"{node.module}.{n}" for n in names if f"{node.module}.{n}" in MODULES]
            rest = [n for n in names if f"{node.module}.{n}" not in MODULES]
            if rest or not submodules:  # `from validator.x import submodule` depends on the submodule only
                out.append((node.module, rest))
            out += [(m, []) for m in submodules]
    return out


def graph() -> dict[str, set[str]]:
    return {name: {m for m, _ in imports_of(name) if m in MODULES and m != name} for name in MODULES}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_cycle() -> None:
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    # guards the guard: a test that cannot fail proves nothing
    edges = graph()
    edges["validator.diagnostics"] = edges["validator.diagnostics"] | {"validator.engine.evaluate"}
    assert any("validator.engine.evaluate" in c and "validator.diagnostics" in c for c in cycles(edges))


def test_no_module_imports_another_modules_private_names() -> None:
    offenders = [(name, module, n) for name in MODULES for module, names in imports_of(name)
                 for n in names if n.startswith("_") and not n.endswith("__") and module != name]
    assert offenders == []


def test_checks_are_rules_only_and_never_reach_up_the_pipeline() -> None:
    # a check sees the snapshot; it never loads files, evaluates, builds boards or renders reports
    higher = ("validator.engine.evaluate", "validator.engine.evaluation", "validator.load.pipeline", "validator.pr.incremental",
              "validator.pr.base", "validator.report", "validator.cli", "validator.adapters", "validator.importers")
    for name in MODULES:
        if name.startswith("validator.checks.") and name != "validator.checks.collect":
            reached = [m for m in graph()[name] if m.startswith(higher)]
            assert reached == [], name


def test_no_function_local_imports_outside_the_cli() -> None:
    """A function-local import hides a dependency (often one pointing the wrong way); only cli.py imports
    lazily, so that `orv --help` does not load the whole validator."""
    local = []
    for name, path in MODULES.items():
        if name == "validator.cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and node.col_offset > 0:
                module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                if module and module.startswith("validator"):
                    local.append(f"{name}:{node.lineno}")
    assert local == []
