"""How a pull request moves the boards: two boards documents (merge base and pull request) and the rows that differ.

Both documents are built by `board_document` from a snapshot and its findings by the same code, so
the delta shows only what the pull request changes (never a stale committed boards/boards.json). Every
list under a document's `boards` holds rows with `recipe` and `tier`, and `rank`/`rank_of` where ranked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from validator.boards.build import GitStamp, build
from validator.diagnostics import Diagnostic
from validator.evaluation import Evaluation
from validator.pr.base import check_base
from validator.registry import BOARDS_PATH, Snapshot
from validator.tiers import derive



def board_document(snapshot: Snapshot, diagnostics: Iterable[Diagnostic]) -> dict[str, Any]:
    """The boards document `orv boards` would write for this snapshot (without the git stamp)."""
    return build(snapshot, derive(snapshot, tuple(diagnostics)), GitStamp())


def base_board_document(evaluation: Evaluation) -> Mapping[str, Any]:
    """The merge base's boards: its committed boards/boards.json, which the boards workflow keeps
    fresh on main, so a pull request's summary costs no second check. Only when the base has no
    readable boards file is the base checked by the same code to build one."""
    if evaluation.base is not None:
        return board_document(evaluation.base.snapshot, evaluation.base.diagnostics)
    assert evaluation.change is not None
    raw = evaluation.change.base.read(BOARDS_PATH)
    if raw:
        try:
            document = json.loads(raw)
            if isinstance(document, dict) and isinstance(document.get("boards"), dict):
                return document
        except ValueError:
            pass
    base = check_base(evaluation.change)
    return board_document(base.snapshot, base.diagnostics)


def rows_by_recipe(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Every row of every board in a boards document, by recipe id (first row wins)."""
    out: dict[str, Mapping[str, Any]] = {}
    boards = document.get("boards", {}) if isinstance(document, Mapping) else {}
    for rows in (boards.values() if isinstance(boards, Mapping) else ()):
        for row in rows if isinstance(rows, list) else ():
            if isinstance(row, Mapping) and isinstance(row.get("recipe"), str):
                out.setdefault(row["recipe"], row)
    return out


@dataclass(frozen=True)
class BoardChange:
    """How one recipe's place on the boards changes with the pull request."""

    recipe: str
    change: str  # new | removed | edited | moved (tier or rank changed by another entry)
    tier: str | None
    rank: int | None
    rank_of: int | None
    base_tier: str | None = None
    base_rank: int | None = None
    base_rank_of: int | None = None
    quality: str | None = None  # "gsm8k strict-match 0.7450, 0.9933 of the reference (verified)"

    def to_dict(self) -> dict[str, Any]:
        return {"recipe": self.recipe, "change": self.change, "tier": self.tier, "rank": self.rank,
                "rank_of": self.rank_of, "base_tier": self.base_tier, "base_rank": self.base_rank,
                "base_rank_of": self.base_rank_of, "quality": self.quality}


def quality_display(row: Mapping[str, Any] | None) -> str | None:
    """An inference row's quality figure and ratio to the reference, as the summary shows it."""
    q = row.get("quality") if isinstance(row, Mapping) else None
    if not isinstance(q, Mapping):
        return None
    if q.get("score") is None:
        return f"{q.get('task')}: {q.get('status')}"
    ratio = f", {q['ratio']:.4f} of the reference" if q.get("ratio") is not None else ""
    return f"{q.get('task')} {q.get('filter')} {q['score']:.4f}{ratio} ({q.get('status')})"


def board_delta(base: Mapping[str, Any], head: Mapping[str, Any], edited: Iterable[str] = ()
                ) -> list[BoardChange]:
    """New, removed and edited entries, and entries whose tier or rank another change moved."""
    before, after, edited_ids = rows_by_recipe(base), rows_by_recipe(head), set(edited)
    out: list[BoardChange] = []
    for rid in sorted(set(before) | set(after)):
        b, a = before.get(rid), after.get(rid)
        if a is None:
            assert b is not None
            out.append(BoardChange(rid, "removed", None, None, None, b.get("tier"), b.get("rank"), b.get("rank_of")))
            continue
        if b is None:
            out.append(BoardChange(rid, "new", a.get("tier"), a.get("rank"), a.get("rank_of"),
                                   quality=quality_display(a)))
            continue
        moved = (a.get("tier"), a.get("rank")) != (b.get("tier"), b.get("rank"))
        if rid in edited_ids or moved:
            out.append(BoardChange(rid, "edited" if rid in edited_ids else "moved", a.get("tier"), a.get("rank"),
                                   a.get("rank_of"), b.get("tier"), b.get("rank"), b.get("rank_of"),
                                   quality_display(a)))
    return out
