"""Reporters: pure functions Result -> str. Only the CLI (validator/cli/) writes them out."""

from __future__ import annotations

from collections.abc import Callable

from validator.diagnostics import Result
from validator.report import github, json_report, sarif, text

Renderer = Callable[[Result], str]

REPORTER_BY_NAME: dict[str, Renderer] = {
    "text": text.render,
    "json": json_report.render,
    "github": github.render,
    "sarif": sarif.render,
}
