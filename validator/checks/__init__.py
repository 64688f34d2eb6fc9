"""The registry of checks, one module per family; importing this package registers every check.

A check is a small function decorated with `@check(...)` (validator/checks/base.py); its docstring
is what `orv explain` prints. It yields `Finding`s and never raises for bad input: a raise is a bug
in orv and is reported as ORV900. A new family is one module here and one line below.
"""

from __future__ import annotations

from collections.abc import Callable

from validator.checks import (  # noqa: F401
    calendar,
    consistency,
    convergence,
    duplicates,
    freshness,
    identity,
    independence,
    integrity,
    internal,
    launch,
    llamacpp,
    parse,
    paths,
    physics,
    pinning,
    pr,
    quality,
    signatures,
    workloads,
    yaml11,
)
from validator.checks.base import REGISTRY, Check, Finding, check, declare

__all__ = ["Check", "Finding", "Keep", "all_checks", "by_scope", "check", "declare"]


def all_checks() -> dict[str, Check]:
    """Every registered check by code, sorted."""
    return dict(sorted(REGISTRY.items()))


Keep = Callable[[Check], bool]  # which checks to run (all when None): tiers.tier_reads for `orv boards`


def by_scope(scope: str, keep: Keep | None = None) -> list[Check]:
    """The checks with a function in one scope, in code order (those `keep` accepts, when given)."""
    return [c for c in all_checks().values() if c.scope == scope and c.func is not None and (keep is None or keep(c))]
