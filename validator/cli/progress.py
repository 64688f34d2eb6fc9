"""One progress line for long work (`check`, `boards`, `site`, `wanted`, `merge-results`), as terminals expect it.

A thin wrapper on Click's progressbar: on stderr, only when stderr is a terminal, never under `CI`
(CI logs keep every carriage-return frame), `--quiet` or a machine-read format (json, github, sarif).
The work reports `(done, total)` as it goes, at whatever step suits it; the line is ended when the
work reaches its total and, whatever happened, when the `with` block closes — so nothing printed
after it (the findings, the summary, an error) is ever glued to the line.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import Any, TextIO

import click


class Progress:
    """`show(done, total)`: the progress line; a no-op when `enabled` is false. Use it as a context manager."""

    def __init__(self, label: str, stream: TextIO | None, enabled: bool) -> None:
        self.label, self.stream, self.enabled = label, stream, enabled
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._bar is None or self._bar.length != total:
            self.end()
            self._bar = click.progressbar(
                length=total, label=self.label, file=self.stream, show_pos=True, show_eta=False, width=24
            )
            self._bar.__enter__()
        self._bar.update(max(0, min(done, total) - self._bar.pos))
        if done >= total:
            self.end()

    def end(self) -> None:
        """End the line if one is open (Click's bar finishes with a newline)."""
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.__exit__(None, None, None)

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.end()


def progress(label: str, quiet: bool = False, machine: bool = False, stream: TextIO | None = None) -> Progress:
    """The progress line for one piece of work, enabled only where a person watches a terminal."""
    out = stream if stream is not None else sys.stderr
    enabled = not quiet and not machine and not os.environ.get("CI") and _isatty(out)
    return Progress(label, out, enabled)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-less stream
        return False
