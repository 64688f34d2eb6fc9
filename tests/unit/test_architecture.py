"""The package's shape: dependencies point one way (no import cycle, function-local imports included),
and no module reaches into another's private names."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "validator"


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
        elif (
            isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("validator")
        ):
            names = [a.name for a in node.names]
            submodules = [f"{node.module}.{n}" for n in names if f"{node.module}.{n}" in MODULES]
            rest = [n for n in names if f"{node.module}.{n}" not in MODULES]
            if rest or not submodules:  # `from validator.x import submodule` depends on the submodule only
                out.append((node.module, rest))
            out += [(m, []) for m in submodules]
    return out


@functools.cache
def _parsed_graph() -> dict[str, frozenset[str]]:
    """Every module parsed once per session (the checks test asks for the graph once per checks module)."""
    return {name: frozenset(m for m, _ in imports_of(name) if m in MODULES and m != name) for name in MODULES}


def graph() -> dict[str, set[str]]:
    """A fresh copy each call: a caller may add edges (the cycle finder's own test does)."""
    return {name: set(deps) for name, deps in _parsed_graph().items()}


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
    offenders = [
        (name, module, n)
        for name in MODULES
        for module, names in imports_of(name)
        for n in names
        if n.startswith("_") and not n.endswith("__") and module != name
    ]
    assert offenders == []


def test_checks_are_rules_only_and_never_reach_up_the_pipeline() -> None:
    # a check sees the snapshot; it never loads files, evaluates, builds boards or renders reports
    higher = (
        "validator.engine.evaluate",
        "validator.engine.evaluation",
        "validator.load.pipeline",
        "validator.pr.incremental",
        "validator.pr.base",
        "validator.report",
        "validator.cli",
        "validator.adapters",
        "validator.importers",
    )
    for name in MODULES:
        if name.startswith("validator.checks.") and name != "validator.checks.collect":
            reached = [m for m in graph()[name] if m.startswith(higher)]
            assert reached == [], name


def test_no_function_local_imports_outside_the_cli() -> None:
    """A function-local import hides a dependency (often one pointing the wrong way); only the cli package
    imports lazily, so that `orv --help` does not load the whole validator."""
    local = []
    for name, path in MODULES.items():
        if name == "validator.cli" or name.startswith("validator.cli."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and node.col_offset > 0:
                module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                if module and module.startswith("validator"):
                    local.append(f"{name}:{node.lineno}")
    assert local == []


# --- one room per question (docs/architecture.md, "Where a change goes") ---------------------------------

# Top level = vocabulary: modules every layer imports and that import nothing above them.
VOCABULARY = {
    "validator",
    "validator.__main__",
    "validator.diagnostics",
    "validator.errors",
    "validator.models",
    "validator.hashing",
    "validator.dates",
}


def loose_top_level_modules(modules: dict[str, Path]) -> set[str]:
    return {name for name, path in modules.items() if name.count(".") == 1 and path.name != "__init__.py"} | (
        {"validator"} if "validator" in modules else set()
    )


def test_the_top_level_holds_only_the_vocabulary() -> None:
    assert loose_top_level_modules(MODULES) - VOCABULARY == set()


def test_the_vocabulary_imports_nothing_above_it() -> None:
    for name in VOCABULARY - {"validator", "validator.__main__"}:
        assert graph()[name] <= VOCABULARY, (name, graph()[name] - VOCABULARY)


def commands_imported_outside_the_cli(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted(
        (name, m)
        for name, targets in edges.items()
        for m in targets
        if m.startswith("validator.commands") and not name.startswith(("validator.cli", "validator.commands"))
    )


def test_only_the_cli_imports_commands() -> None:
    assert commands_imported_outside_the_cli(graph()) == []


def test_the_commands_rule_finds_a_seeded_violation() -> None:
    edges = graph()
    edges["validator.boards.build"] = edges["validator.boards.build"] | {"validator.commands.check"}
    assert commands_imported_outside_the_cli(edges) == [("validator.boards.build", "validator.commands.check")]


def click_importers(sources: dict[str, str]) -> list[str]:
    """Command modules whose source imports Click: the CLI parses, a command is called without it (tests call
    them directly). report/text.py may style text with click.style: colour, not parsing."""
    found = []
    for name, text in sources.items():
        if not name.startswith("validator.commands"):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "click" for a in node.names):
                found.append(name)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "click":
                found.append(name)
    return sorted(set(found))


SOURCES = {name: path.read_text(encoding="utf-8") for name, path in MODULES.items()}


def test_commands_never_import_click() -> None:
    assert click_importers(SOURCES) == []


def test_the_click_rule_finds_a_seeded_violation() -> None:
    seeded = dict(SOURCES, **{"validator.commands.check": SOURCES["validator.commands.check"] + "\nimport click\n"})
    assert click_importers(seeded) == ["validator.commands.check"]


def test_every_command_module_returns_an_outcome() -> None:
    """pre-commit's shape: a command is a plain function the CLI (and tests) call, returning what to print."""
    for name, text in SOURCES.items():
        if name.startswith("validator.commands.") and name != "validator.commands.outcome":
            assert "Outcome" in text, name


ARCHITECTURE_DOC = PACKAGE.parent / "docs" / "architecture.md"


def unnamed_modules(doc: str, modules: dict[str, Path]) -> list[str]:
    """Modules docs/architecture.md does not name: by their path under validator/ (`cli/app.py`), or by file
    name inside their package's paragraph (`adapters/` … `detect.py`), or, at the top level, by file name."""
    missing = []
    paragraphs = doc.split("\n\n")
    for path in modules.values():
        rel = path.relative_to(PACKAGE).as_posix()
        if f"`{rel}`" in doc or rel in doc:
            continue
        package, _, file = rel.rpartition("/")
        if not package and f"`{file}`" in doc:
            continue
        if file == "__init__.py" and f"`{package}/`" in doc:  # a package is named by its folder
            continue
        if package and any(f"{package}/" in p and f"`{file}`" in p for p in paragraphs):
            continue
        missing.append(rel)
    return sorted(missing)


def test_docs_architecture_names_every_module() -> None:
    assert unnamed_modules(ARCHITECTURE_DOC.read_text(encoding="utf-8"), MODULES) == []


def test_the_doc_rule_finds_an_unnamed_module() -> None:
    seeded = dict(MODULES, **{"validator.registry.unnamed": PACKAGE / "registry" / "unnamed_room.py"})
    assert unnamed_modules(ARCHITECTURE_DOC.read_text(encoding="utf-8"), seeded) == ["registry/unnamed_room.py"]


# Raised only when orv itself is wrong (an emitter that cannot write what it was given): reported as an
# internal error, so deliberately not an OrvError.
BUG_SIGNALS = {"validator.files.yamlwrite.WriteError", "validator.files.yamlout.YamlOutError"}


def exceptions_outside_the_base() -> list[str]:
    """Exception classes defined under validator/ that do not derive from errors.OrvError."""
    import importlib
    import inspect

    from validator.errors import OrvError

    outside = []
    for name in sorted(MODULES.keys() - {"validator.__main__"}):  # __main__ runs the CLI when imported
        module = importlib.import_module(name)
        for cls_name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == name and issubclass(cls, BaseException) and not issubclass(cls, OrvError):
                outside.append(f"{name}.{cls_name}")
    return sorted(set(outside) - BUG_SIGNALS)


def test_every_exception_orv_raises_on_purpose_derives_from_one_base() -> None:
    assert exceptions_outside_the_base() == []
