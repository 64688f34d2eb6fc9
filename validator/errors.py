"""The base of every exception orv raises on purpose, its two shapes, and the exit code each ends a command with.

Findings that do not stop anything are data (diagnostics.py). What does stop a command is an OrvError:
- a Refusal: a message and a hint (bad invocation, git history that cannot be read, a file orv cannot
  write where asked);
- a FindingError: located findings (a file that cannot become data, a tool's output an adapter cannot
  use, a source an importer cannot read).
The shared ones live here; an error only one package raises lives beside the code that raises it and
derives from a shape (boards/split.py's BoardsUnreadable is a Refusal, quality/lmeval.py's LmEvalError a
LocatedError). validator/cli/error_handler.py is the one place that turns them into exit codes and words on
stderr; a command that wants to say more catches its own error first. A bug in orv is not an OrvError: the
handler reports it as an internal error.
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from collections.abc import Iterable
from enum import IntEnum

from validator.diagnostics import Diagnostic, Result, Severity


class ExitCode(IntEnum):
    """How every `orv` command ends (`orv --help` lists them)."""

    OK = 0
    FINDINGS = 1  # errors found, or the command failed its task (a full disk, a read-only folder)
    USAGE = 2  # usage error, or an internal error of orv
    INTERRUPTED = 130  # Ctrl-C; every file orv writes is old or new


class OrvError(Exception):
    """The base of every exception orv raises on purpose."""

    exit_code: int = ExitCode.USAGE


class Refusal(OrvError):
    """A command cannot go on: `message` says why, `hint` what to do instead (exit 2 unless a subclass says)."""

    def __init__(self, message: str, hint: str = "", exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message

    def words(self) -> str:
        """How the user is told: `orv: <message>` and, when there is one, an indented hint line."""
        return f"orv: {self}" + (f"\n    hint: {self.hint}" if self.hint else "")


class FindingError(OrvError, metaclass=ABCMeta):
    """A command cannot go on because of its input: the located findings to report instead (exit 1)."""

    exit_code = ExitCode.FINDINGS

    @property
    @abstractmethod
    def result(self) -> Result:
        """The findings to report: one located finding (LocatedError) or several (AddRunError)."""


class LocatedError(FindingError):
    """One finding at a place in one file."""

    def __init__(self, code: str, path: str, message: str, hint: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.code, self.path, self.message, self.hint, self.line, self.col = code, path, message, hint, line, col

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.code, Severity.ERROR, self.path, self.line, self.col, self.message, self.hint)

    @property
    def result(self) -> Result:
        return Result((self.diagnostic(),))


class UsageError(Refusal):
    """Bad invocation (exit 2), not a finding."""


class BadOptions(UsageError):
    """Options that do not go together: the CLI shows the command's usage line with the message."""


class GitError(UsageError):
    """--base cannot be honoured (not a repository, unknown ref, no merge base): a usage error."""


class HistoryError(Refusal):
    """Git history cannot be read completely (unreadable repository, shallow clone): the boards stamp
    cannot be made deterministically, so commands that need it stop."""


class LoadError(LocatedError):
    """A file that cannot become data; carries the finding to report instead. The loader knows the file,
    so the path is filled in where the error becomes a diagnostic."""

    def __init__(self, code: str, message: str, hint: str, line: int = 1, col: int = 1) -> None:
        super().__init__(code, "", message, hint, line, col)


class AddRunError(FindingError):
    """A run document (or a tool's output) that cannot be stored; carries the findings."""

    def __init__(self, result: Result) -> None:
        super().__init__(f"{result.errors} error(s)")
        self._result = result

    @property
    def result(self) -> Result:
        return self._result


class AdapterError(AddRunError):
    """The tool's output (or the metadata around it) cannot become a run file; carries the findings."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__(Result(self.diagnostics))


class ImportInputError(LocatedError):
    """The source (or the catalog it is resolved against) cannot be read: a finding, not a traceback."""


class InputFileError(LocatedError):
    """A contributor's file (tool output, config.json, a seed source) refused by the bounded reader
    (validator/load/contributor.py): a special file, a link inside a folder, over its size budget, JSON
    that cannot be read. Each command turns it into its own finding; it names the file and the place."""

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"
