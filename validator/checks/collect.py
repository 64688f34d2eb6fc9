"""Running checks: their Findings become located Diagnostics; a check that raises becomes ORV900, never a traceback."""

from __future__ import annotations

import contextlib
import time
import traceback
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from validator.checks.base import REGISTRY, Check, Finding
from validator.diagnostics import Diagnostic, Severity
from validator.errors import LoadError
from validator.load import schema as schemas
from validator.load.documents import Document, locate_yaml_key


def severity_of(code: str) -> Severity:
    """A code's registered severity (a code raised by the loader before its family is imported: error)."""
    entry = REGISTRY.get(code)
    return entry.severity if entry else Severity.ERROR


@dataclass
class Timings:
    """Seconds per check and per pipeline stage, for `orv check --profile`: counted only while
    `profiling()` is on, and only in this process (the command loads in one process then)."""

    checks: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    stages: dict[str, float] = field(default_factory=lambda: defaultdict(float))


TIMINGS: Timings | None = None  # None: nothing is timed (every check and stage pays one comparison)


@contextlib.contextmanager
def profiling() -> Iterator[Timings]:
    """Time every check and stage run inside; the Timings are complete when the block ends."""
    global TIMINGS  # noqa: PLW0603 - one switch read by every Collector, off outside the block
    TIMINGS = timings = Timings()
    try:
        yield timings
    finally:
        TIMINGS = None


_OFF = (
    contextlib.nullcontext()
)  # reusable: profiling off, a stage costs ~0.7 µs (a generator context ~3 µs, measured with timeit)


def stage(name: str) -> contextlib.AbstractContextManager[None]:
    """Count the block's seconds under `name` when profiling (stages may nest: "load > parse")."""
    return _OFF if TIMINGS is None else _timed(TIMINGS, name)


@contextlib.contextmanager
def _timed(timings: Timings, name: str) -> Iterator[None]:
    timings.stages.setdefault(name, 0.0)  # listed in the order stages begin, an outer one first
    start = time.perf_counter()
    try:
        yield
    finally:
        timings.stages[name] += time.perf_counter() - start


def check_label(check: Check) -> str:
    func = check.func
    where = f"{func.__module__.rsplit('.', 1)[-1]}.{func.__name__}" if func is not None else "?"
    return f"{check.code} {where}"


@dataclass
class Collector:
    """The diagnostics of one evaluation, in the order they were found."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add(self, d: Diagnostic) -> None:
        self.diagnostics.append(d)

    def load_error(self, path: str, exc: LoadError) -> None:
        self.add(Diagnostic(exc.code, severity_of(exc.code), path, exc.line, exc.col, exc.message, exc.hint))

    def schema_issues(self, doc: Document, kind: str, issues: Iterable[schemas.SchemaIssue]) -> None:
        for issue in issues:
            if issue.at_key and doc.path.endswith((".yaml", ".yml")):
                line, col = locate_yaml_key(doc.text, issue.path)
            else:
                line, col = doc.locate(issue.path)
            self.add(Diagnostic(issue.code, severity_of(issue.code), doc.path, line, col, issue.message, issue.hint))

    def findings(self, check: Check, findings: Iterable[Finding], documents: dict[str, Document]) -> None:
        timings = TIMINGS
        start = time.perf_counter() if timings is not None else 0.0
        try:
            for f in findings:
                self.add(to_diagnostic(check, f, documents))
        except Exception:  # noqa: BLE001 - a raising check is orv's bug, reported, never a traceback
            self.add(internal_error(check.code))
        if timings is not None:  # a check is a generator: its work happens as its findings are read
            timings.checks[check_label(check)] += time.perf_counter() - start


def to_diagnostic(check: Check, f: Finding, documents: dict[str, Document]) -> Diagnostic:
    line, col = f.line, f.col
    if line is None:
        doc = documents.get(f.path)
        if doc is None:
            line, col = 1, 1
        elif f.key and doc.path.endswith((".yaml", ".yml")):
            line, col = locate_yaml_key(doc.text, f.at)
        else:
            line, col = doc.locate(f.at)
    # a finding may lower its check's severity (a legacy entry's warning), never raise it: which
    # checks can fail a run, and which a tier reads (tiers.tier_reads), follow the registration
    severity = f.severity if f.severity is not None and f.severity.rank >= check.severity.rank else check.severity
    return Diagnostic(check.code, severity, f.path, line, col or 1, f.message, f.hint)


def internal_error(code: str) -> Diagnostic:
    tb = traceback.format_exc(limit=3).strip().splitlines()
    where = tb[-3].strip() if len(tb) >= 3 else ""
    return Diagnostic(
        "ORV900",
        Severity.ERROR,
        ".",
        1,
        1,
        f"check {code} crashed: {tb[-1] if tb else 'unknown error'} ({where})",
        "this is a bug in orv, not in your files; please report it with this message",
    )
