"""The pull request's job summary (Markdown) and step outputs: findings, waivers and the board delta
(validator/boards/delta.py computes it), with each changed entry's tier and reasons, figures, change
against the base and the best of its model × GPU, rank, and the run files behind it (docs/pull-requests.md)."""

from __future__ import annotations

import json
from collections import Counter

# collections.abc's Mapping, not typing's: isinstance() against typing's alias is ~10x slower, and the
# summary checks every row of a model's boards (half a million checks at 100,000 run files: 1.2 s)
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from validator.boards.delta import (
    NO_BASE_BOARDS,
    BoardChange,
    base_board_document,
    board_delta,
    board_document_for,
    pull_request_boards,
    quality_display,
)
from validator.boards.frontier import frontier_wins, group_key
from validator.checks.pr import GATE_FILES
from validator.diagnostics import Diagnostic, Result, Severity
from validator.engine.evaluation import Evaluation
from validator.evidence.signing import signer
from validator.registry.snapshot import Snapshot
from validator.report.github import ANNOTATIONS_PER_LEVEL

SUMMARY_LIMIT = 1024 * 1024  # GitHub refuses a step summary larger than 1 MiB
SUMMARY_BUDGET = SUMMARY_LIMIT - 32 * 1024  # what orv writes; the rest is margin for the closing lines
# GitHub caps a job's outputs at 1 MB, counted as UTF-16 (two bytes per ASCII character): the `entries`
# output keeps to a quarter of that, the pull request's own entries first, so a change that moves
# thousands of entries of a large group (bench/: 9,458 at 100,000 run files) never breaks the job.
ENTRIES_BUDGET = 128 * 1024
# A maintainer reads a few hundred findings at most; the step log and `orv check --base` list them all.
FINDINGS_SHOWN = 500
# The board changes and their evidence stay within this much (a 1,000-recipe pull request fits whole).
BOARD_BUDGET = 512 * 1024
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
    base_board: Mapping[str, Any] | None = None  # the two boards documents the delta compares
    head_board: Mapping[str, Any] | None = None
    evidence: Mapping[str, tuple[RunEvidence, ...]] = field(default_factory=dict)  # recipe id -> its runs
    delta_note: str | None = None  # why the board changes are not shown (the base has no boards file)


@dataclass(frozen=True)
class RunEvidence:
    """One run file a changed recipe lists, as the summary shows it."""

    run_file: str
    tool: str | None  # name and version; None when the file is missing or unreadable
    measured_by: str | None
    signed_by: str | None  # the registered measurer whose valid signature it carries
    present: bool


def run_evidence(
    snapshot: Snapshot, recipe_ids: Iterable[str], signed: Callable[[Snapshot, str], str | None] = signer
) -> dict[str, tuple[RunEvidence, ...]]:
    """The run files each recipe lists, with tool, measurer and signature (validator/evidence/signing.py)."""
    wanted = set(recipe_ids)
    out: dict[str, tuple[RunEvidence, ...]] = {}
    for _, recipe in snapshot.valid_recipes():
        if recipe.id not in wanted or recipe.id in out:
            continue
        runs = []
        for digest in recipe.run_digests:
            run = snapshot.runs.get(digest)
            meta = run.meta if run is not None else None
            runs.append(
                RunEvidence(
                    run.path if run is not None else f"runs/{digest[:2]}/{digest}.json",
                    f"{meta.tool.name} {meta.tool.version}" if meta is not None else None,
                    meta.measured_by if meta is not None else None,
                    signed(snapshot, digest) if meta is not None else None,
                    run is not None,
                )
            )
        out[recipe.id] = tuple(runs)
    return out


def build(evaluation: Evaluation) -> PullRequestReport:
    """A PullRequestReport from an Evaluation (with or without --base)."""
    change = evaluation.change
    delta = None
    changed: tuple[str, ...] = ()
    base_board = head_board = None
    evidence: dict[str, tuple[RunEvidence, ...]] = {}
    note = None
    if change is not None:
        changed = tuple(c.path for c in change.files)
        edited = {entry.id for entry in evaluation.snapshot.recipes if entry.path in change.head_paths and entry.id}
        documents: tuple[Mapping[str, Any], Mapping[str, Any]] | None = (
            pull_request_boards(evaluation) if evaluation.partial else None
        )
        if documents is None:  # a full check, or a merge base with unreadable standings
            base = base_board_document(evaluation)
            documents = (base, board_document_for(evaluation, base)) if base is not None else None
        if documents is None:
            note = NO_BASE_BOARDS
        else:
            base_board, head_board = documents
            delta = tuple(board_delta(base_board, head_board, edited))
            # the evidence the pull request brings: its new and edited entries (an entry another change only
            # moved keeps its evidence, and in pull-request mode its run files need not be loaded)
            evidence = run_evidence(evaluation.snapshot, (c.recipe for c in delta if c.change in ("new", "edited")))
    return PullRequestReport(
        result=evaluation.result,
        waived=evaluation.waived,
        pre_existing=len(evaluation.pre_existing),
        base_ref=change.base_ref if change is not None else None,
        base_commit=change.base_commit if change is not None else None,
        changed_files=changed,
        gate_files=tuple(p for p in changed if p.startswith(GATE_FILES)),
        delta=delta,
        base_board=base_board,
        head_board=head_board,
        evidence=evidence,
        delta_note=note,
    )


def _count(diagnostics: Iterable[Diagnostic], severity: Severity) -> int:
    return sum(1 for d in diagnostics if d.severity is severity)


def _cell(text: str) -> str:
    """Text made safe for one Markdown table cell (no HTML, no row or column breaks)."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
        .replace("\r", "")
        .replace("\n", "<br>")
    )


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
        lines.append(
            f"Compared with `{_cell(r.base_ref)}` at merge base `{r.base_commit[:12]}`: "
            f"{_plural(len(r.changed_files), 'changed file')}, {r.result.files_checked} registry files checked."
        )
    else:
        lines.append(f"{r.result.files_checked} registry files checked (no `--base`: pull-request rules not applied).")
    if r.waived:
        counts = Counter(d.code for d in r.waived)
        listed = ", ".join(f"**{code}** ({_plural(n, 'finding')})" for code, n in sorted(counts.items()))
        lines.append(f"Waived by a maintainer for this pull request: {listed} — not counted, listed below.")
    if r.pre_existing:
        lines.append(
            f"{_plural(r.pre_existing, 'finding')} already on the base branch not counted against this pull request."
        )
    if r.gate_files:
        shown = ", ".join(f"`{_cell(p)}`" for p in r.gate_files[:5]) + (" …" if len(r.gate_files) > 5 else "")
        lines.append(
            f"**This pull request changes the gate itself** ({shown}): "
            "the check ran its own version; a maintainer must review it."
        )
    return lines


def _finding_row(d: Diagnostic, waived: bool = False) -> str:
    level = _LEVEL[d.severity] + (" (waived)" if waived else "")
    return f"| {level} | {d.code} | `{_cell(d.path)}:{d.line}:{d.col}` | {_cell(d.message)} | {_cell(d.hint)} |"


def _overflow_lines(result: Result) -> list[str]:
    lines = []
    for severity, level in _LEVEL.items():
        n = _count(result.diagnostics, severity)
        if n > ANNOTATIONS_PER_LEVEL:
            hidden = n - (ANNOTATIONS_PER_LEVEL - 1)
            lines.append(
                f"GitHub shows {ANNOTATIONS_PER_LEVEL} annotations of each level per step: "
                f"{_plural(hidden, level)} appear only in this table and in the step log."
            )
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
    """The compact table, for a report built without the two boards documents."""
    if delta is None:
        return []
    lines = ["", "### Board changes", ""]
    if not delta:
        return lines + ["No entry's tier or rank changes."]
    lines += ["| Recipe | Change | Tier | Rank in its model–GPU pair | Quality vs reference |", "|---|---|---|---|---|"]
    return lines + [_delta_row(c) for c in delta]


# --------------------------------------------------------------------------- the entries, with their numbers

_HEADLINE = {"training": "tok_s_per_gpu", "measured": "decode_tok_s", "claimed": "claimed_tok_s"}
_FIGURES = {  # board -> (column title with its unit, row field, kind of figure)
    "training": (
        ("Tokens/s/GPU", "tok_s_per_gpu", "num"),
        ("$/1M tokens", "cost_per_1m", "usd"),
        ("MFU", "mfu", "fraction"),
    ),
    "measured": (
        ("Decode tok/s", "decode_tok_s", "num"),
        ("Prefill tok/s", "prefill_tok_s", "num"),
        ("TTFT ms", "ttft_ms", "num"),
    ),
    "claimed": (
        ("Decode tok/s", "claimed_tok_s", "num"),
        ("Prefill tok/s", "claimed_prefill_tok_s", "num"),
        ("TTFT ms", "claimed_ttft_ms", "num"),
    ),
}
_TABLE_HEAD = {
    "training": [
        "#### Training board",
        "",
        "| Recipe | Change | Tier | Tokens/s/GPU | $/1M tokens | MFU | Against the base | "
        "Against the best on its model × GPU | Rank |",
        "|---|---|---|--:|--:|--:|---|---|---|",
    ],
    "inference": [
        "#### Inference board (claimed figures where the tier is T0)",
        "",
        "| Recipe | Workload | Change | Tier | Decode tok/s | Prefill tok/s | TTFT ms | Against the base | "
        "Against the best on its model × GPU × workload | Rank | Quality vs reference |",
        "|---|---|---|---|--:|--:|--:|---|---|---|---|",
    ],
}
Row = Mapping[str, Any]


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _num(value: Any) -> str:
    if not _is_number(value):
        return "—"
    return f"{value:,.1f}" if abs(value) >= 100 else f"{value:,.2f}"


def _figure(value: Any, kind: str) -> str:
    if not _is_number(value):
        return "—"
    if kind == "usd":
        return f"${value:,.2f}"
    if kind == "fraction":
        return f"{value * 100:.1f}%"
    return _num(value)


def _claim_beside(row: Row, key: str) -> str:
    """A training row at T1+ shows its run's figure; where the recipe claims another, the claim follows it."""
    claim = row.get("claimed_" + key) if key == "tok_s_per_gpu" else None
    return f" (claimed {_num(claim)})" if _is_number(claim) and claim != row.get(key) else ""


def _gain(new: Any, old: Any) -> str:
    return f"{(new / old - 1.0) * 100.0:+.1f}%" if _is_number(new) and _is_number(old) and old else "—"


def _indexed(document: Mapping[str, Any] | None) -> dict[str, tuple[str, Row]]:
    """Recipe id -> (board name, row), first row wins (as delta.rows_by_recipe)."""
    out: dict[str, tuple[str, Row]] = {}
    boards = document.get("boards", {}) if isinstance(document, Mapping) else {}
    for name, rows in boards.items() if isinstance(boards, Mapping) else ():
        for row in rows if isinstance(rows, list) else ():
            # `type(row) is dict` first: JSON's rows are dicts, and the ABC check alone cost 0.3 s per
            # document at 100,000 run files (a model's 47,000 rows, read twice)
            if (type(row) is dict or isinstance(row, Mapping)) and type(row.get("recipe")) is str:
                out.setdefault(row["recipe"], (name, row))
    return out


def _pair(board: str, row: Row) -> tuple[Any, ...]:
    """The group an entry is ranked in: model × GPU × workload, on the training and inference boards alike."""
    return (board, row.get("model"), row.get("gpu"), row.get("workload"))


def _recipe_cell(board: str, c: BoardChange, row: Row) -> str:
    """The recipe id, and on the inference boards the workload its figures were measured on."""
    if board == "training":
        return f"`{_cell(c.recipe)}`"
    return f"`{_cell(c.recipe)}` | {_cell(str(row.get('workload_label') or row.get('workload') or 'unspecified'))}"


def _ranked_pairs(index: Mapping[str, tuple[str, Row]]) -> dict[tuple[Any, ...], list[tuple[float, str]]]:
    """Pair -> [(headline, recipe)], fastest first: a board's best per model × GPU."""
    out: dict[tuple[Any, ...], list[tuple[float, str]]] = {}
    for recipe, (board, row) in index.items():
        figure = row.get(_HEADLINE.get(board, ""))
        if type(figure) is float or type(figure) is int or _is_number(figure):  # exact types first: 95,000 rows at 100k
            out.setdefault(_pair(board, row), []).append((float(figure), recipe))
    for members in out.values():
        members.sort(key=lambda m: (-m[0], m[1]))
    return out


def _where(row: Row) -> str:
    return f"{row.get('model_name') or row.get('model')} on {str(row.get('gpu') or '?').upper()}"


@dataclass
class _Notes:
    """Tier reasons, numbered once for the whole summary (many entries share a reason)."""

    reasons: dict[str, int] = field(default_factory=dict)

    def refs(self, reasons: Iterable[Any]) -> str:
        numbers = [self.reasons.setdefault(str(r), len(self.reasons) + 1) for r in reasons]
        return " " + " ".join(f"[{n}]" for n in numbers) if numbers else ""


def _entry_row(
    c: BoardChange,
    base: Mapping[str, tuple[str, Row]],
    head: Mapping[str, tuple[str, Row]],
    base_best: Mapping[tuple[Any, ...], list[tuple[float, str]]],
    head_best: Mapping[tuple[Any, ...], list[tuple[float, str]]],
    notes: _Notes,
) -> tuple[str, str]:
    """(table, Markdown row) for one changed entry."""
    board, row = head[c.recipe] if c.recipe in head else base[c.recipe]
    before = base.get(c.recipe)
    figures = " | ".join(
        _figure(row.get(key), kind) + _claim_beside(row, key)
        for _, key, kind in _FIGURES.get(board, _FIGURES["measured"])
    )
    reasons = notes.refs(row.get("tier_reasons") or ())
    if c.change == "removed":
        tier, rank = f"~~{c.base_tier}~~", f"~~{_rank(c.base_rank, c.base_rank_of)}~~"
        return _table_of(board), (
            f"| {_recipe_cell(board, c, row)} | removed | {tier}{reasons} | {figures} | removed | — | "
            f"{rank} |" + _quality_cell(board, row)
        )
    headline = row.get(_HEADLINE.get(board, ""))
    if before is None:
        against_base = "new"
    else:
        old_board, old_row = before
        old = old_row.get(_HEADLINE.get(old_board, ""))
        if old_board != board:
            against_base = f"{old_board} {_num(old)} → {board} {_num(headline)} ({_gain(headline, old)})"
        elif old != headline:
            against_base = f"{_num(old)} → {_num(headline)} ({_gain(headline, old)})"
        else:
            against_base = "figures unchanged"
    # A new or edited entry is up against the base's best; an entry another change moved, against what moved it.
    bests = head_best if c.change == "moved" else base_best
    # the best other entry: the first or second of the pair's ranking (a whole scan per entry was
    # quadratic: a recipe ranked first moves every entry of its pair, 9,458 at 100,000 recipes)
    rival = next((m for m in bests.get(_pair(board, row), []) if m[1] != c.recipe), None)
    if rival is None:
        against_best = f"first for {_cell(_where(row))}"
    else:
        best, best_id = rival
        against_best = f"{_gain(headline, best)} vs `{_cell(best_id)}` ({_num(best)})"
    if c.change == "new" or c.tier == c.base_tier:
        tier = c.tier or "—"
    else:
        tier = f"{c.base_tier or '—'} → {c.tier or '—'}"
    old_rank, new_rank = _rank(c.base_rank, c.base_rank_of), _rank(c.rank, c.rank_of)
    rank = new_rank if c.change == "new" or old_rank == new_rank else f"{old_rank} → {new_rank}"
    return _table_of(board), (
        f"| {_recipe_cell(board, c, row)} | {c.change} | {tier}{reasons} | {figures} | "
        f"{_cell(against_base)} | {against_best} | {rank} |" + _quality_cell(board, row)
    )


def _quality_cell(board: str, row: Row) -> str:
    return "" if board == "training" else f" {_cell(quality_display(row) or '—')} |"


def _table_of(board: str) -> str:
    return "training" if board == "training" else "inference"


def _run_display(run: RunEvidence) -> str:
    folder, _, name = run.run_file.rpartition("/")
    short = f"{folder}/{name[:12]}…json" if len(name) > 20 else run.run_file
    return f"`{_cell(short)}`"


def _evidence_rows(recipe: str, runs: tuple[RunEvidence, ...]) -> list[str]:
    if not runs:
        return [f"| `{_cell(recipe)}` | none: a claim without a run file | — | — | — |"]
    out = []
    for run in runs:
        tool = _cell(run.tool) if run.tool else ("unreadable" if run.present else "not in the registry")
        signed = f"yes, by {_cell(run.signed_by)}" if run.signed_by else "no"
        out.append(f"| `{_cell(recipe)}` | {_run_display(run)} | {tool} | {_cell(run.measured_by or '—')} | {signed} |")
    return out


def _what_it_fills(
    delta: tuple[BoardChange, ...],
    base_doc: Mapping[str, Any],
    head: Mapping[str, tuple[str, Row]],
    base: Mapping[str, tuple[str, Row]],
) -> list[str]:
    """Wanted cells and models this pull request fills, T2 entries it reproduces, quality it verifies (#20)."""
    wanted = base_doc["wanted"] if isinstance(base_doc.get("wanted"), Mapping) else {}
    wanted_models = {m.get("model") for m in wanted.get("models", ()) if isinstance(m, Mapping)}
    empty_cells = {
        (m.get("model"), g.get("gpu"))
        for m in base_doc.get("models", ())
        if isinstance(m, Mapping)
        for g in m.get("gpus", ())
        if isinstance(g, Mapping) and g.get("recipe") is None
    }
    trained_before = {(row.get("model"), row.get("gpu")) for board, row in base.values() if board == "training"}
    models_before = {model for model, _ in trained_before}
    lines: list[str] = []
    firsts: dict[tuple[Any, Any], Row] = {}
    for c in delta:
        if c.change in ("new", "edited") and c.recipe in head and head[c.recipe][0] == "training":
            row = head[c.recipe][1]
            key = (row.get("model"), row.get("gpu"))
            if key not in trained_before:
                firsts.setdefault(key, row)
    for key in sorted(firsts, key=str):
        wanted_cell = key in empty_cells or key[0] in wanted_models
        lines.append(
            f"- First recipe for **{_cell(_where(firsts[key]))}**" + (" — fills a wanted cell." if wanted_cell else ".")
        )
    for model in sorted({key[0] for key in firsts if key[0] not in models_before}, key=str):
        name = next(row.get("model_name") for key, row in firsts.items() if key[0] == model)
        lines.append(
            f"- **{_cell(str(name))}** gets its first training recipe"
            + (" and leaves the wanted list." if model in wanted_models else ".")
        )
    for c in delta:
        if c.base_tier == "T2" and c.tier == "T3":
            lines.append(f"- `{_cell(c.recipe)}` is reproduced: T2 → T3.")
    return lines


def _board_lines(r: PullRequestReport, budget: int) -> list[str]:
    """The board section: what the PR fills, a table per board, the tier reasons, the evidence."""
    assert r.delta is not None and r.base_board is not None and r.head_board is not None
    base, head = _indexed(r.base_board), _indexed(r.head_board)
    lines = ["", "### Board changes", ""]
    if not r.delta:
        return lines + ["No entry's tier or rank changes."]
    fills = _what_it_fills(r.delta, r.base_board, head, base) + _quality_verified(r, head)
    if fills:
        lines += fills + [""]
    moves = _frontier_lines(r)
    if moves:
        lines += ["#### Throughput frontier", ""] + moves + [""]
    notes = _Notes()
    base_best, head_best = _ranked_pairs(base), _ranked_pairs(head)
    tables: dict[str, list[str]] = {"training": [], "inference": []}
    evidence: list[str] = []
    used = sum(len(line.encode()) + 1 for line in lines) + 2048  # headings, reasons' numbers, closing line
    left_out = 0

    def table_first(c: BoardChange) -> tuple[bool, str]:
        board = (head.get(c.recipe) or base.get(c.recipe) or ("", {}))[0]
        return board != "training", c.recipe

    # Entries are drawn in table order until one does not fit; that one and every later one are counted
    # without being drawn (drawing each only to find it does not fit cost 0.4 s at 100,000 run files,
    # where a one-recipe change moves 9,458 entries), so the tables never skip an entry to show a later one.
    for c in sorted(r.delta, key=table_first):  # reasons are numbered in the order the tables show them
        if left_out:
            left_out += 1
            continue
        table, row = _entry_row(c, base, head, base_best, head_best, notes)
        runs = _evidence_rows(c.recipe, r.evidence.get(c.recipe, ())) if c.change in ("new", "edited") else []
        size = sum(len(line.encode()) + 1 for line in [row] + runs)
        if used + size + sum(len(reason) + 8 for reason in notes.reasons) > budget:
            left_out += 1
            continue
        used += size
        tables[table].append(row)
        evidence += runs
    for table, rows in tables.items():
        if rows:
            lines += _TABLE_HEAD[table] + rows + [""]
    if notes.reasons:
        lines += ["Why an entry has its tier (what the next tier needs):", ""]
        lines += [f"- [{n}] {_cell(reason)}" for reason, n in notes.reasons.items()] + [""]
    if evidence:
        lines += [
            "#### Evidence",
            "",
            "| Recipe | Run file | Tool and version | Measured by | Signed |",
            "|---|---|---|---|---|",
        ] + evidence
    if left_out:
        lines += [
            "",
            f"{left_out} more changed {'entry' if left_out == 1 else 'entries'} not shown (the summary stays under GitHub's 1 MiB); "
            "the step output `entries` lists them within GitHub's output limit (`entries-left-out` counts any it cannot).",
        ]
    return lines


def _frontier_lines(r: PullRequestReport) -> list[str]:
    """For each new or edited inference entry: whether its points move the verified frontier of their
    model × GPU × workload, and over which interactivity range it now wins (docs/boards.md)."""

    def groups(document: Mapping[str, Any] | None) -> dict[tuple[Any, ...], Mapping[str, Any]]:
        found = document.get("frontiers") if isinstance(document, Mapping) else None
        return {group_key(g): g for g in found or () if isinstance(g, Mapping)}

    base, head = groups(r.base_board), groups(r.head_board)
    changed = {c.recipe for c in r.delta or () if c.change in ("new", "edited")}
    lines = []
    for key, g in sorted(head.items()):
        where = f"{key[0]} · {str(key[1]).upper()} · workload `{key[2]}`"
        for recipe in sorted({p["recipe"] for p in list(g["points"]) + list(g["apart"])} & changed):
            wins = frontier_wins(g, recipe)
            before = frontier_wins(base[key], recipe) if key in base else []
            ranges = ", ".join(f"{lo:,.1f}–{hi:,.1f}" if hi > lo else f"{lo:,.1f}" for lo, hi in wins)
            if wins:
                said = f"on the verified frontier at {ranges} tok/s per user"
                said += "" if before else " (it moves the frontier)"
            elif any(p["recipe"] == recipe for p in g["points"]):
                said = "verified, but beaten at every interactivity it reaches: the frontier does not move"
            else:
                said = "not verified (shown apart): the frontier does not move"
            if before and not wins:
                said += "; it was on the frontier before"
            lines.append(f"- `{_cell(recipe)}` ({_cell(where)}): {said}.")
    return lines


def _quality_verified(r: PullRequestReport, head: Mapping[str, tuple[str, Row]]) -> list[str]:
    def waiting(document: Mapping[str, Any] | None) -> set[Any]:
        wanted = document.get("wanted") if isinstance(document, Mapping) else None
        items = wanted.get("quality", ()) if isinstance(wanted, Mapping) else ()
        return {q.get("recipe") for q in items if isinstance(q, Mapping)}

    done = (waiting(r.base_board) - waiting(r.head_board)) & set(head)
    return [f"- `{_cell(str(recipe))}` has verified quality evidence now." for recipe in sorted(done, key=str)]


def render_markdown(r: PullRequestReport, budget: int = SUMMARY_BUDGET) -> str:
    """The job summary: headline, context, findings (capped, within the size budget), the board changes."""
    head = [_headline(r), ""] + _context_lines(r)
    if r.delta_note is not None:
        tail = ["", "### Board changes", "", f"Not shown: {r.delta_note}."]
    elif r.delta is not None and r.base_board is not None and r.head_board is not None:
        tail = _board_lines(r, min(BOARD_BUDGET, budget // 2))
    else:
        tail = _delta_lines(r.delta)
    by_level = sorted(r.result.diagnostics, key=lambda d: (d.severity.rank, d.sort_key()))
    rows = [_finding_row(d) for d in by_level] + [_finding_row(d, waived=True) for d in r.waived]
    findings: list[str] = []
    if rows:
        overflow = _overflow_lines(r.result)
        findings = (
            ["", "### Findings", ""]
            + (overflow + [""] if overflow else [])
            + ["| Level | Code | Where | Finding | What to do |", "|---|---|---|---|---|"]
        )
    used = sum(len(line.encode()) + 1 for line in head + tail + findings) + 512
    shown = 0
    for row in rows[:FINDINGS_SHOWN]:
        size = len(row.encode()) + 1
        if used + size > budget:
            break
        findings.append(row)
        used += size
        shown += 1
    if shown < len(rows):
        findings += [
            "",
            f"{_plural(len(rows) - shown, 'more finding')} not shown here: the summary lists the first "
            f"{FINDINGS_SHOWN}. The step log lists every finding; `orv check --base` reproduces them "
            "locally.",
        ]
    return "\n".join(head + findings + tail) + "\n"


def render_outputs(r: PullRequestReport, budget: int = ENTRIES_BUDGET) -> str:
    """Step outputs as `name=value` lines for $GITHUB_OUTPUT (values are single-line)."""
    entries, left_out = _bounded_entries([c for c in r.delta or () if c.change != "removed"], budget)
    tiers = {c.recipe: c.tier for c in r.delta or () if c.change in ("new", "edited")}
    outputs = {
        "errors": str(r.result.errors),
        "warnings": str(r.result.warnings),
        "notices": str(_count(r.result.diagnostics, Severity.NOTICE)),
        "waived": " ".join(sorted({d.code for d in r.waived})),
        "entries": entries,
        "entries-left-out": str(left_out),
        "tiers": json.dumps(tiers, separators=(",", ":"), sort_keys=True),
    }
    return "".join(f"{name}={value}\n" for name, value in outputs.items())


def _bounded_entries(changes: list[BoardChange], budget: int) -> tuple[str, int]:
    """The `entries` JSON list within `budget` bytes, and how many entries it leaves out. The pull request's
    own (new, edited) entries are taken first, then the ones it moves; the list keeps the delta's order."""
    items: dict[int, str] = {}
    used = 2  # the brackets
    for i in sorted(range(len(changes)), key=lambda i: changes[i].change == "moved"):  # stable: own ones first
        item = json.dumps(changes[i].to_dict(), separators=(",", ":"), sort_keys=True)
        if used + len(item) + 1 > budget:
            break
        items[i] = item
        used += len(item) + 1
    return "[" + ",".join(items[i] for i in sorted(items)) + "]", len(changes) - len(items)
