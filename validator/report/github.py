"""GitHub Actions workflow commands: one annotation per finding on the PR's file and line."""

from __future__ import annotations

from collections import Counter

from validator.diagnostics import Diagnostic, Result, Severity, printable
from validator.report.text import summary_line

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "notice"}


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


# GitHub shows at most 10 annotations of each level per step and drops the rest silently; past
# that, the tenth says how many more there are, and the log (and the job summary) lists them all.
ANNOTATIONS_PER_LEVEL = 10


def _annotation(d: Diagnostic) -> str:
    # a name with control characters cannot be annotated exactly (GitHub unescapes only %, CR, LF, : and ,):
    # it is shown escaped, never raw in the log
    props = f"file={_escape_property(printable(d.path))},line={d.line},col={d.col},title={_escape_property(d.code)}"
    body = d.message + (f"\nhint: {d.hint}" if d.hint else "")
    return f"::{_LEVEL[d.severity]} {props}::{_escape_data(body)}"


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


def render(result: Result) -> str:

    totals = Counter(d.severity for d in result.diagnostics)
    shown: Counter[Severity] = Counter()
    lines, overflow = [], []
    for d in result.diagnostics:
        room = ANNOTATIONS_PER_LEVEL if totals[d.severity] <= ANNOTATIONS_PER_LEVEL else ANNOTATIONS_PER_LEVEL - 1
        if shown[d.severity] < room:
            lines.append(_annotation(d))
            shown[d.severity] += 1
        else:
            overflow.append(d)
    for severity, level in _LEVEL.items():
        hidden = totals[severity] - shown[severity]
        if hidden:
            note = (
                f"{hidden} more {level}(s) not shown as annotations (GitHub shows {ANNOTATIONS_PER_LEVEL} "
                "per step); the job summary and the log below list them all"
            )
            lines.append(f"::{level} title=orv::{_escape_data(note)}")
    if overflow:
        lines.append("orv: findings beyond the annotation limit:")
        for d in overflow:  # plain log lines: one line each, so no text can start a workflow command
            lines.append(
                _one_line(
                    f"{printable(d.path)}:{d.line}:{d.col}: {d.code} {d.severity.value}: {d.message}"
                    + (f" (hint: {d.hint})" if d.hint else "")
                )
            )
    lines.extend(_one_line(f"orv: {note}") for note in result.notes)  # waivers, pre-existing findings
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"
