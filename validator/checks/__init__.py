"""The registry of checks: each has a stable code, a severity, a scope and its own documentation.

A check is a small function decorated with `@check(...)`; its docstring is what `orv explain`
prints. It yields `Finding`s and never raises for bad input: a raise is a bug in orv and is
reported as ORV900. Codes raised by the loader or the schema translation (no function of their
own) are declared with `declare(...)` so that they are documented all the same.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from validator.diagnostics import Severity

# scope -> what the function receives
#   "load"      raised while reading/parsing files (no function)
#   "run-file"  fn(run: RunFile, catalog: Catalog): one run file while its bytes are in memory
#   "registry"  fn(snapshot: Snapshot): the whole repository, indexed once
#   "pr"        fn(change: Change): the snapshot plus what changed since --base
#   "boards"    fn(analysis: engine.Analysis): committed boards vs regeneration (tiers need the findings)
SCOPES = ("load", "run-file", "registry", "pr", "boards")


@dataclass(frozen=True)
class Finding:
    """What a check yields; the engine adds code, severity and line/column."""

    path: str
    message: str
    hint: str
    at: tuple[Any, ...] = ()  # JSON path inside the file; located lazily
    key: bool = False  # point at the key (unknown field) rather than its value
    line: int | None = None
    col: int | None = None
    severity: Severity | None = None  # override, e.g. a legacy entry's warning


@dataclass(frozen=True)
class Check:
    code: str
    severity: Severity
    title: str
    scope: str
    doc: str
    func: Callable[..., Iterable[Finding]] | None = None


REGISTRY: dict[str, Check] = {}

# One module per family; importing them fills REGISTRY.
FAMILY_MODULES = (
    "validator.checks.parse",
    "validator.checks.paths",
    "validator.checks.yaml11",
    "validator.checks.integrity",
    "validator.checks.convergence",
    "validator.checks.duplicates",
    "validator.checks.pinning",
    "validator.checks.physics",
    "validator.checks.pr",
    "validator.checks.boards",
    "validator.checks.internal",
)


def _register(entry: Check) -> None:
    if entry.code in REGISTRY:
        raise RuntimeError(f"check code {entry.code} registered twice")
    if entry.scope not in SCOPES:
        raise RuntimeError(f"{entry.code}: unknown scope {entry.scope}")
    REGISTRY[entry.code] = entry


def check(code: str, severity: Severity, title: str, scope: str = "registry"
          ) -> Callable[[Callable[..., Iterator[Finding]]], Callable[..., Iterator[Finding]]]:
    def decorate(func: Callable[..., Iterator[Finding]]) -> Callable[..., Iterator[Finding]]:
        _register(Check(code, severity, title, scope, inspect.cleandoc(func.__doc__ or ""), func))
        return func

    return decorate


def declare(code: str, severity: Severity, title: str, doc: str, scope: str = "load") -> None:
    _register(Check(code, severity, title, scope, inspect.cleandoc(doc)))


def all_checks() -> dict[str, Check]:
    for name in FAMILY_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a family module that exists but fails to import is a bug
                raise
    return dict(sorted(REGISTRY.items()))


def by_scope(scope: str) -> list[Check]:
    return [c for c in all_checks().values() if c.scope == scope and c.func is not None]
