"""Running the check in tests: pull-request mode compared with checking everything, findings as `CODE path:line`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from validator.engine.evaluate import Config, Evaluation, evaluate


def check(repo: Path, base: str | None = "main", **options: Any) -> Evaluation:
    """The check as the CLI runs it; with a base, also checked whole, which must decide the same."""
    evaluation = evaluate(Config(root=str(repo), base=base, skip_boards=True, **options))
    if base is not None and "neighbourhood" not in options:
        whole = evaluate(Config(root=str(repo), base=base, skip_boards=True, neighbourhood=False, **options))
        assert not whole.partial
        assert evaluation.result.diagnostics == whole.result.diagnostics
    return evaluation


def found(evaluation: Evaluation) -> list[str]:
    return sorted(f"{d.code} {d.path}:{d.line}" for d in evaluation.result.diagnostics)


def line_of(repo: Path, rel: str, needle: str) -> int:
    lines = (repo / rel).read_text(encoding="utf-8").splitlines()
    return next(i for i, text in enumerate(lines, 1) if needle in text)
