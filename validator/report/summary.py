"""The pull request's job summary (Markdown) and step outputs: findings, waivers and the board delta
(validator/boards/delta.py computes it)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

from validator.boards.delta import (
    NO_BASE_BOARDS,
    BoardChange,
    base_board_document,
    board_delta,
    board_document_for,
)
from validator.checks.pr import GATE_FILES
from validator.diagnostics import Diagnostic, Result, Severity
from validator.evaluation import Evaluation
from validator.report.github import ANNOTATIONS_PER_LEVEL

SUMMARY_LIMIT = 1024 * 1024  # GitHub refuses a step summary larger than 1 MiB
SUMMARY_BUDGET = SUMMARY_LIMIT - 32 * 1024  # what orv writes; the rest is margin for the closing lines
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "notice"}


# --------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class PullRequestReport:
    """Everything the summary and the outputs show, computed once from an Evaluation."""

    result: Result
    waived: tuple[Diagnostic, ...]
    pre_existing: int
    base_ref: str | None
    base_commit: str | None
    changed_files: tuple[str, ...]
    gate_files: tuple[str, ...]  # changed files that define the check itself
    delta: tuple[BoardChange, ...] | None  # None without --base
    delta_note: str | None = None  # why the board changes are not shown (the base has no boards file)


def build(evaluation: Evaluation) -> PullRequestReport:
    """A PullRequestReport from an Evaluation (with or without --base)."""
    change = evaluation.change
    delta = None
    changed: tuple[str, ...] = ()
    note = None
    if change is not None:
        changed = tuple(c.path for c in change.files)
        edited = {entry.id for entry in evaluation.snapshot.recipes if entry.path in change.head_paths and entry.id}
        base = base_board_document(evaluation)
        if base is None:
            note = NO_BASE_BOARDS
        else:
            delta = tuple(board_delta(base, board_document_for(evaluation, base), edited))
    return PullRequestReport(
        result=evaluation.result, waived=evaluation.waived, pre_existing=len(evaluation.pre_existing),
        base_ref=change.base_ref if change is not None else None,
        base_commit=change.base_commit if change is not None else None,
        changed_files=changed, gate_files=tuple(p for p in changed if p.startswith(GATE_FILES)), delta=delta,
        delta_note=note)


def _count(diagnostics: Iterable[Diagnostic], severity: Severity) -> int:
    return sum(1 for d in diagnostics if d.severity is severity)


def _cell(text: str) -> str:
    """Text made safe for one Markdown table cell (no HTML, no row or column breaks)."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
            .replace("\r", "").replace("\n", "<br>"))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _headline(r: PullRequestReport) -> str:
    errors, warnings = r.result.errors, r.result.warnings
    if errors:
        return f"## ❌ orv: {_plural(errors, 'error')}, {_plural(warnings, 'warning')}"
    tail = f" ({_plural(warnings, 'warning')})" if warnings else ""
    return f"## ✅ orv: the pull request passes{tail}"


def _context_lines(r: PullRequestReport) -> list[str]:
    lines = []
    if r.base_ref is not None and r.base_commit is not None:
        lines.append(f"Compared with `{_cell(r.base_ref)}` at merge base `{r.base_commit[:12]}`: "
                     f"{_plural(len(r.changed_files), 'changed file')}, {r.result.files_checked} registry files checked.")
    else:
        lines.append(f"{r.result.files_checked} registry files checked (no `--base`: pull-request rules not applied).")
    if r.waived:
        counts = Counter(d.code for d in r.waived)
        listed = ", ".join(f"**{code}** ({_plural(n, 'finding')})" for code, n in sorted(counts.items()))
        lines.append(f"Waived by a maintainer for this pull request: {listed} — not counted, listed below.")
    if r.pre_existing:
        lines.append(f"{_plural(r.pre_existing, 'finding')} already on the base branch "
                     "not counted against this pull request.")
    if r.gate_files:
        shown = ", ".join(f"`{_cell(p)}`" for p in r.gate_files[:5]) + (" …" if len(r.gate_files) > 5 else "")
        lines.append(f"**This pull request changes the gate itself** ({shown}): "
                     "the check ran its own version; a maintainer must review it.")
    return lines


def _finding_row(d: Diagnostic, waived: bool = False) -> str:
    level = _LEVEL[d.severity] + (" (waived)" if waived else "")
    return (f"| {level} | {d.code} | `{_cell(d.path)}:{d.line}:{d.col}` | {_cell(d.message)} | "
            f"{_cell(d.hint)} |")


def _overflow_lines(result: Result) -> list[str]:
    lines = []
    for severity, level in _LEVEL.items():
        n = _count(result.diagnostics, severity)
        if n > ANNOTATIONS_PER_LEVEL:
            hidden = n - (ANNOTATIONS_PER_LEVEL - 1)
            lines.append(f"GitHub shows {ANNOTATIONS_PER_LEVEL} annotations of each level per step: "
                         f"{_plural(hidden, level)} appear only in this table and in the step log.")
    return lines


def _rank(rank: Any, rank_of: Any) -> str:
    return f"{rank} of {rank_of}" if rank is not None and rank_of is not None else "—"


def _delta_row(c: BoardChange) -> str:
    if c.change == "new":
        tier, rank = c.tier or "—", _rank(c.rank, c.rank_of)
    elif c.change == "removed":
        tier, rank = f"~~{c.base_tier}~~", f"~~{_rank(c.base_rank, c.base_rank_of)}~~"
    else:
        tier = (c.tier or "—") if c.tier == c.base_tier else f"{c.base_tier or '—'} → {c.tier or '—'}"
        before, after = _rank(c.base_rank, c.base_rank_of), _rank(c.rank, c.rank_of)
        rank = after if before == after else f"{before} → {after}"
    return f"| `{_cell(c.recipe)}` | {c.change} | {tier} | {rank} | {_cell(c.quality or '—')} |"


def _delta_lines(delta: tuple[BoardChange, ...] | None) -> list[str]:
    if delta is None:
        return []
    lines = ["", "### Board changes", ""]
    if not delta:
        return lines + ["No entry's tier or rank changes."]
    lines += ["| Recipe | Change | Tier | Rank in its model–GPU pair | Quality vs reference |", "|---|---|---|---|---|"]
    return lines + [_delta_row(c) for c in delta]


def render_markdown(r: PullRequestReport, budget: int = SUMMARY_BUDGET) -> str:
    """The job summary: headline, context, every finding (within the size budget), the board delta."""
    head = [_headline(r), ""] + _context_lines(r)
    tail = _delta_lines(r.delta) if r.delta_note is None else ["", "### Board changes", "", f"Not shown: {r.delta_note}."]
    by_level = sorted(r.result.diagnostics, key=lambda d: (d.severity.rank, d.sort_key()))
    rows = [_finding_row(d) for d in by_level] + [_finding_row(d, waived=True) for d in r.waived]
    findings: list[str] = []
    if rows:
        overflow = _overflow_lines(r.result)
        findings = ["", "### Findings", ""] + (overflow + [""] if overflow else []) + [
            "| Level | Code | Where | Finding | What to do |", "|---|---|---|---|---|"]
    used = sum(len(line.encode()) + 1 for line in head + tail + findings) + 512
    shown = 0
    for row in rows:
        size = len(row.encode()) + 1
        if used + size > budget:
            break
        findings.append(row)
        used += size
        shown += 1
    if shown < len(rows):
        findings += ["", f"{_plural(len(rows) - shown, 'more finding')} not shown: a job summary is limited to "
                     "1 MiB. The step log lists every finding; `orv check --base` reproduces them locally."]
    return "\n".join(head + findings + tail) + "\n"


def render_outputs(r: PullRequestReport) -> str:
    """Step outputs as `name=value` lines for $GITHUB_OUTPUT (values are single-line)."""
    entries = [c.to_dict() for c in r.delta or () if c.change != "removed"]
    tiers = {c.recipe: c.tier for c in r.delta or () if c.change in ("new", "edited")}
    outputs = {
        "errors": str(r.result.errors),
        "warnings": str(r.result.warnings),
        "notices": str(_count(r.result.diagnostics, Severity.NOTICE)),
        "waived": " ".join(sorted({d.code for d in r.waived})),
        "entries": json.dumps(entries, separators=(",", ":"), sort_keys=True),
        "tiers": json.dumps(tiers, separators=(",", ":"), sort_keys=True),
    }
    return "".join(f"{name}={value}\n" for name, value in outputs.items())
