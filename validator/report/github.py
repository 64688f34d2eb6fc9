"""GitHub Actions workflow commands: one annotation per finding on the PR's file and line."""

from __future__ import annotations

from validator.diagnostics import Result, Severity

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "notice"}


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render(result: Result) -> str:
    lines = []
    for d in result.diagnostics:
        props = (f"file={_escape_property(d.path)},line={d.line},col={d.col},"
                 f"title={_escape_property(d.code)}")
        body = d.message + (f"\nhint: {d.hint}" if d.hint else "")
        lines.append(f"::{_LEVEL[d.severity]} {props}::{_escape_data(body)}")
    from validator.report.text import summary_line

    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"
