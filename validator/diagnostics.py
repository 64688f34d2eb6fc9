"""Findings: what a check reports, where, and how to fix it."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTICE = "notice"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "notice": 2}[self.value]


def printable(text: str) -> str:
    """`text` for a terminal or a log: every character that is not printable (controls, line breaks,
    escape sequences) written as its Python escape (`\\x1b`, `\\n`); the rest, non-ASCII letters
    included, as it is. For display only: a finding's `path` stays the file's real name."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


@dataclass(frozen=True, order=False)
class Diagnostic:
    """One finding. `path` is repository-relative with forward slashes; line/col are 1-based."""

    code: str
    severity: Severity
    path: str
    line: int
    col: int
    message: str
    hint: str = ""

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.col, self.code, self.message)

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "message": self.message,
            "hint": self.hint,
        }


@dataclass(frozen=True)
class Result:
    """Everything one `orv check` found, sorted; what the reporters render."""

    diagnostics: tuple[Diagnostic, ...] = ()
    files_checked: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.WARNING)

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0
