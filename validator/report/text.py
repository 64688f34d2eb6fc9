"""Human-readable findings, one block per finding, as compilers print them; options for a terminal."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import click

from validator.diagnostics import Diagnostic, Result, Severity, printable

_COLOURS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.NOTICE: "cyan"}


@dataclass(frozen=True)
class TextOptions:
    """How `orv check` prints text. The defaults print everything, uncollapsed, without colour
    (what add-run and the importers print); the CLI's defaults for `orv check` collapse."""

    color: bool = False
    quiet: bool = False  # errors and the summary line only
    statistics: bool = False  # one line per code (count, severity, title) instead of the findings
    least: Severity = Severity.NOTICE  # the least severe finding shown (--severity)
    collapse: bool = False  # legacy-import findings as one line per code (--show-all turns it off)
    legacy: frozenset[str] = frozenset()  # paths of entries `orv import` wrote (a `provenance` block)
    titles: Mapping[str, str] = field(default_factory=dict)  # code -> check title


def render(result: Result) -> str:
    return render_with(result, TextOptions())


def render_with(result: Result, options: TextOptions) -> str:
    least = Severity.ERROR if options.quiet else options.least
    shown = [d for d in result.diagnostics if d.severity.rank <= least.rank]
    collapsed: list[Diagnostic] = []
    if options.collapse and not options.quiet:
        collapsed = [d for d in shown if d.severity is not Severity.ERROR and d.path in options.legacy]
        folded = set(collapsed)  # built once: linear in the findings
        shown = [d for d in shown if d not in folded]
    lines: list[str] = []
    if options.statistics:
        lines.extend(_statistics(result.diagnostics, least, options))
    else:
        for d in shown:
            lines.append(
                f"{printable(d.path)}:{d.line}:{d.col}: {d.code} {_severity(d.severity, options.color)}: {d.message}"
            )
            if d.hint:
                lines.append(f"    hint: {d.hint}")
        for code, severity, count in _by_code(collapsed):
            title = options.titles.get(code, "")
            lines.append(
                f"{code} {_severity(severity, options.color)}: {count} finding(s) on legacy-imported "
                f"entries{': ' + title if title else ''} (`orv check --show-all` lists them)"
            )
    if not options.quiet:
        lines.extend(f"note: {note}" for note in result.notes)
    hidden = sum(1 for d in result.diagnostics if d.severity.rank > least.rank)
    lines.append(
        summary_line(
            result,
            collapsed=0 if options.statistics else len(collapsed),
            hidden=hidden,
            color=options.color,
            why="--quiet" if options.quiet else "--severity",
        )
    )
    return "\n".join(lines) + "\n"


def summary_line(
    result: Result, collapsed: int = 0, hidden: int = 0, color: bool = False, why: str = "--severity"
) -> str:
    if not result.diagnostics:
        return f"orv: {result.files_checked} files checked, no findings"
    notices = len(result.diagnostics) - result.errors - result.warnings
    counts = [
        _counted(result.errors, "error(s)", Severity.ERROR, color),
        _counted(result.warnings, "warning(s)", Severity.WARNING, color),
    ]
    if notices:
        counts.append(_counted(notices, "notice(s)", Severity.NOTICE, color))
    line = f"orv: {result.files_checked} files checked, {', '.join(counts)}"
    untold = []
    if collapsed:
        untold.append(f"{collapsed} on legacy imports counted by code (--show-all lists them)")
    if hidden:
        untold.append(f"{hidden} not shown ({why})")
    return line + (f"; {'; '.join(untold)}" if untold else "")


def _statistics(diagnostics: tuple[Diagnostic, ...], least: Severity, options: TextOptions) -> list[str]:
    rows = [
        (count, code, severity)
        for code, severity, count in _by_code([d for d in diagnostics if d.severity.rank <= least.rank])
    ]
    rows.sort(key=lambda r: (r[2].rank, -r[0], r[1]))
    width = max((len(str(r[0])) for r in rows), default=1)
    return [
        f"{count:>{width}}  {code}  {_severity(severity, options.color)}  {options.titles.get(code, '')}".rstrip()
        for count, code, severity in rows
    ]


def _by_code(diagnostics: list[Diagnostic]) -> list[tuple[str, Severity, int]]:
    counts = Counter((d.code, d.severity) for d in diagnostics)
    return [
        (code, severity, n) for (code, severity), n in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1].rank))
    ]


def _severity(severity: Severity, color: bool) -> str:
    return click.style(severity.value, fg=_COLOURS[severity], bold=True) if color else severity.value


def _counted(n: int, words: str, severity: Severity, color: bool) -> str:
    text = f"{n} {words}"
    return click.style(text, fg=_COLOURS[severity], bold=True) if color and n else text
