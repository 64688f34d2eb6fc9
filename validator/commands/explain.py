"""`orv explain CODE`: a check's documentation, every code (`all`), or how tiers and the frontier are derived."""

from __future__ import annotations

import inspect

from validator.boards import frontier
from validator.checks import all_checks
from validator.commands.outcome import Outcome
from validator.errors import BadOptions
from validator.evidence import tiers


def explain(code: str) -> Outcome:
    outcome = Outcome()
    if code.lower() in ("tiers", "frontier"):
        outcome.out(inspect.cleandoc((tiers if code.lower() == "tiers" else frontier).__doc__ or ""))
        return outcome
    checks = all_checks()
    if code.lower() == "all":
        for c in checks.values():
            outcome.out(f"{c.code}  {c.severity.value:<7}  {c.title}")
        return outcome
    entry = checks.get(code.upper())
    if entry is None:
        raise BadOptions(f"unknown check code {code!r}; `orv explain all` lists them")
    outcome.out(f"{entry.code} ({entry.severity.value}): {entry.title}\n\n{entry.doc}")
    return outcome
