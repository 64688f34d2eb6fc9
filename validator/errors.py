"""Every exception orv raises on purpose: each carries what the user is told instead of a traceback.

Findings are data (diagnostics.py); these are the few outcomes that stop a command: bad
invocation, a file that cannot become data, git history that cannot be read, input a tool adapter
or an importer cannot use. The CLI maps each to an exit code (validator/cli.py).
"""

from __future__ import annotations

from typing import Iterable

from validator.diagnostics import Diagnostic, Result, Severity


class UsageError(Exception):
    """Bad invocation (exit 2), not a finding."""


class GitError(UsageError):
    """--base cannot be honoured (not a repository, unknown ref, no merge base): a usage error."""


class LoadError(Exception):
    """A file that cannot become data; carries the finding to report instead."""

    def __init__(self, code: str, message: str, hint: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.code, self.message, self.hint, self.line, self.col = code, message, hint, line, col


class HistoryError(Exception):
    """Git history cannot be read completely (unreadable repository, shallow clone): the boards stamp
    cannot be made deterministically, so commands that need it stop."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


class AddRunError(Exception):
    """A run document (or a tool's output) that cannot be stored; carries the findings."""

    def __init__(self, result: Result) -> None:
        super().__init__(f"{result.errors} error(s)")
        self.result = result


class AdapterError(AddRunError):
    """The tool's output (or the metadata around it) cannot become a run file; carries the findings."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__(Result(self.diagnostics))


class ImportInputError(Exception):
    """The source (or the catalog it is resolved against) cannot be read: a finding, not a traceback."""

    def __init__(self, code: str, path: str, message: str, hint: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.code, self.path, self.message, self.hint, self.line, self.col = code, path, message, hint, line, col


class InputFileError(Exception):
    """A contributor's file (tool output, config.json, a seed source) refused by the bounded reader
    (validator/load/contributor.py): a special file, a link inside a folder, over its size budget, JSON
    that cannot be read. Each command turns it into its own finding; it names the file and the place."""

    def __init__(self, code: str, path: str, message: str, hint: str, line: int = 1, col: int = 1) -> None:
        super().__init__(f"{path}: {message}")
        self.code, self.path, self.message, self.hint, self.line, self.col = code, path, message, hint, line, col

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.code, Severity.ERROR, self.path, self.line, self.col, self.message, self.hint)
