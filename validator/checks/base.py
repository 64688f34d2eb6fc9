"""What a check is: a stable code, a severity, a scope, its own documentation and how it relates files.

A check is a small function decorated with `@check(...)`; its docstring is what `orv explain`
prints. It yields `Finding`s and never raises for bad input: a raise is a bug in orv and is
reported as ORV900. Codes raised by the loader or the schema translation (no function of their
own) are declared with `declare(...)` so that they are documented all the same.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from validator.diagnostics import Severity

# scope -> what the function receives
#   "load"      raised while reading/parsing files (no function)
#   "run-file"  fn(run: RunFile, catalog: Catalog): one run file while its bytes are in memory
#   "registry"  fn(snapshot: Snapshot): the whole repository, indexed once
#   "pr"        fn(change: Change): the snapshot plus what changed since --base
#   "boards"    fn(analysis: registry.Analysis): committed boards vs regeneration (tiers need the findings)
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
    # How a registry check relates files (pull-request mode checks only a change's neighbourhood,
    # validator/pr/neighbourhood.py): `related_by` names the relation key joining the files it
    # compares; `per_file` says it judges each file alone (with the catalog). Every registry check
    # says one or the other (a test fails otherwise).
    related_by: str | None = None
    per_file: bool = False
    # Tree codes a pull-request rule replaces at the same path, so a contributor reads one finding
    # worded for what the pull request did.
    supersedes: tuple[str, ...] = ()


REGISTRY: dict[str, Check] = {}


def _register(entry: Check) -> None:
    if entry.code in REGISTRY:
        raise RuntimeError(f"check code {entry.code} registered twice")
    if entry.scope not in SCOPES:
        raise RuntimeError(f"{entry.code}: unknown scope {entry.scope}")
    REGISTRY[entry.code] = entry


def check(
    code: str,
    severity: Severity,
    title: str,
    scope: str = "registry",
    *,
    related_by: str | None = None,
    per_file: bool = False,
    supersedes: tuple[str, ...] = (),
) -> Callable[[Callable[..., Iterator[Finding]]], Callable[..., Iterator[Finding]]]:
    def decorate(func: Callable[..., Iterator[Finding]]) -> Callable[..., Iterator[Finding]]:
        _register(
            Check(
                code,
                severity,
                title,
                scope,
                inspect.cleandoc(func.__doc__ or ""),
                func,
                related_by,
                per_file,
                supersedes,
            )
        )
        return func

    return decorate


def declare(code: str, severity: Severity, title: str, doc: str, scope: str = "load") -> None:
    _register(Check(code, severity, title, scope, inspect.cleandoc(doc)))
