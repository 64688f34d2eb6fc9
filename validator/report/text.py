"""Human-readable findings, one block per finding, as compilers print them."""

from __future__ import annotations

from validator.diagnostics import Result


def render(result: Result) -> str:
    lines = []
    for d in result.diagnostics:
        lines.append(f"{d.path}:{d.line}:{d.col}: {d.code} {d.severity.value}: {d.message}")
        if d.hint:
            lines.append(f"    hint: {d.hint}")
    lines.extend(f"note: {note}" for note in result.notes)
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def summary_line(result: Result) -> str:
    if not result.diagnostics:
        return f"orv: {result.files_checked} files checked, no findings"
    return (f"orv: {result.files_checked} files checked, {result.errors} error(s), "
            f"{result.warnings} warning(s)")
