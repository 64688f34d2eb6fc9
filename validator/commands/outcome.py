"""What a command tells the user, in order, and how it ends: the one value every command returns to the CLI."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from validator.diagnostics import Result
from validator.errors import ExitCode

Show = Callable[[int, int], None]  # reports (done, total) as the work goes
ProgressLine = Callable[[str], AbstractContextManager[Show]]  # the CLI's progress line for a piece of work, by label


def no_progress(label: str) -> AbstractContextManager[Show]:
    """A progress line nobody sees: for callers without a terminal (tests, scripts)."""
    return contextlib.nullcontext(lambda done, total: None)


@dataclass
class Outcome:
    """What the command tells the user, in order, and how it ends.

    `lines` are (stream, text) pairs printed one a line: "out" is what scripts read, "err" every note for
    the person. `report` is printed verbatim on standard output after them (a rendered findings report,
    ANSI-coloured when `color`); `findings` are rendered as text on standard error last.
    """

    lines: list[tuple[str, str]] = field(default_factory=list)
    exit_code: int = ExitCode.OK
    findings: Result | None = None
    report: str = ""
    color: bool | None = None  # None: Click decides (strips ANSI off a terminal)

    def note(self, text: str) -> None:
        self.lines.append(("err", text))

    def out(self, text: str) -> None:
        self.lines.append(("out", text))

    @contextlib.contextmanager
    def said_before(self) -> Iterator[None]:
        """Around a step that may fail (a write, Ctrl-C): what the command has said so far travels with the
        exception, so the CLI still prints it first, as it would have before the step began."""
        try:
            yield
        except BaseException as exc:
            exc.orv_said = list(self.lines)  # type: ignore[attr-defined]
            raise

    def fail(self, text: str | None = None, code: int = ExitCode.FINDINGS) -> Outcome:
        if text:
            self.note(text)
        self.exit_code = code
        return self
