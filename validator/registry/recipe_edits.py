"""Recording a stored run in its recipe: the reference, an empty claim filled, edited in place."""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from typing import Any

import yaml

from validator.evidence.agreement import CLAIM_TOLERANCE
from validator.files import yamledit
from validator.files.atomic import write_atomic, writer_lock
from validator.science.throughput import relative_gap

# The comment `orv new` writes above `measured:`: when it chose the date (today) by default, the first
# `add-run --write-recipe` writes the run's own date; a date a person typed is never overwritten.
DATE_COMMENT = "The day the benchmark ran."
DEFAULT_DATE_COMMENT = (
    f"{DATE_COMMENT} orv new's default (today): the first `orv add-run --write-recipe` replaces it with the run's date."
)


@dataclass(frozen=True)
class RecipeUpdate:
    path: str
    added_run: bool
    filled_claim: dict[str, float] | None  # the claim written, when the recipe had none
    added: dict[str, Any]  # "layout.layer_split" -> value: what the tool stated and the recipe lacked
    dated: str | None = None  # the run's date, written over `orv new`'s default date
    kept_date: tuple[str, str] | None = None  # (the recipe's date, the run's) when a typed date differs
    point: int | None = None  # the sweep point whose claim was filled, when not the headline's


def record_run_in_recipe(
    recipe_path: str,
    reference: str,
    claim: dict[str, float],
    stated: dict[str, dict[str, Any]] | None = None,
    measured_at: str | None = None,
) -> RecipeUpdate:
    """Append `reference` to the recipe's `runs:` and fill an empty `claimed:` with `claim`, in place.

    `stated` holds what the tool's output states about the setup (`layout`, `serving`); entries the
    recipe does not have yet are added (a Megatron log's layer split), so the run matches it (ORV206).
    The edit keeps the file's comments, key order and quoting (validator/files/yamledit.py); a value the
    recipe already states is never overwritten, except a `measured:` date `orv new` chose by default
    (marked by DEFAULT_DATE_COMMENT above it), which becomes the run's date `measured_at`. Raises
    yamledit.EditError when the file cannot be edited safely; nothing is written then.
    """

    with writer_lock(recipe_path):  # two add-runs on one recipe take turns: both runs are listed
        return _record_run(recipe_path, reference, claim, stated, measured_at)


def _record_run(
    recipe_path: str,
    reference: str,
    claim: dict[str, float],
    stated: dict[str, dict[str, Any]] | None,
    measured_at: str | None,
) -> RecipeUpdate:
    with open(recipe_path, encoding="utf-8") as fh:
        original = fh.read()
    outcome: dict[str, Any] = {}

    def change(data: Any) -> None:
        outcome["run"] = yamledit.append_to_list(data, "runs", reference)
        point = outcome["point"] = _sweep_point(data, stated)
        if point is None:
            outcome["claim"] = bool(claim) and yamledit.fill_mapping(data, "claimed", claim)
        else:  # a run at another point of a sweep: its claim is that point's (docs/boards.md)
            claims = data["sweep"].get("claimed") or []
            outcome["claim"] = bool(claim) and not any(
                isinstance(c, dict) and c.get("concurrency") == point for c in claims
            )
            if outcome["claim"]:
                yamledit.append_mapping(data["sweep"], "claimed", {"concurrency": point, **claim})
        outcome["added"] = {
            f"{section}.{k}": v
            for section, values in (stated or {}).items()
            for k, v in yamledit.add_missing_keys(data, section, values).items()
        }
        recipe_day = str(data.get("measured") or "")
        if run_day and by_default and recipe_day != run_day:
            yamledit.set_text(data, "measured", run_day)
            outcome["dated"] = run_day
        elif run_day and not by_default and recipe_day and recipe_day != run_day:
            outcome["kept"] = (recipe_day, run_day)

    run_day = _day(measured_at)
    marker = f"# {DEFAULT_DATE_COMMENT}\n"
    by_default = marker in original
    edited = yamledit.edit(original, change)
    if run_day and by_default:  # the date is now the run's: the note about orv new's default no longer applies
        edited = edited.replace(marker, f"# {DATE_COMMENT}\n", 1)
    if edited != original:
        write_atomic(recipe_path, edited.encode("utf-8"))
    return RecipeUpdate(
        recipe_path,
        outcome["run"],
        dict(claim) if outcome["claim"] else None,
        outcome["added"],
        outcome.get("dated"),
        outcome.get("kept"),
        outcome.get("point"),
    )


def _sweep_point(data: Any, stated: dict[str, dict[str, Any]] | None) -> int | None:
    """The sweep point a run measured when it is not the recipe's headline point (else None)."""
    sweep, serving = data.get("sweep"), data.get("serving")
    at = ((stated or {}).get("serving") or {}).get("concurrency")
    if not isinstance(sweep, dict) or not isinstance(serving, dict) or at is None:
        return None
    return at if at != serving.get("concurrency") and at in (sweep.get("concurrency") or ()) else None


def recipe_write_problem(recipe_path: str) -> str | None:
    """Why `--write-recipe` could not edit the recipe (read-only, immutable, or in a read-only
    folder), or None: asked before the run is stored, so a refused edit stores nothing."""
    folder = os.path.dirname(os.path.abspath(recipe_path))
    if not os.path.isfile(recipe_path):
        return None  # reading it says what is wrong (the adapters' metadata, or the edit)
    for path, mode, what in (
        (recipe_path, os.W_OK, "the recipe is not writable"),
        (folder, os.W_OK | os.X_OK, "its folder is not writable"),
    ):
        if not os.access(path, mode):
            return what
    return None


def _day(measured_at: str | None) -> str | None:
    """The calendar day of a run's `measured_at` (a date or an ISO date-time), if it is one."""
    try:
        return datetime.date.fromisoformat(str(measured_at)[:10]).isoformat() if measured_at else None
    except ValueError:
        return None


def disagreeing_claims(recipe_path: str, headline: dict[str, float]) -> list[tuple[str, float, float]]:
    """(metric, claimed, recomputed) for each figure the recipe claims beyond CLAIM_TOLERANCE of the run's."""

    try:
        with open(recipe_path, encoding="utf-8") as fh:
            claimed = (yaml.safe_load(fh) or {}).get("claimed") or {}
    except (OSError, yaml.YAMLError, AttributeError):
        return []
    return [
        (metric, float(value), headline[metric])
        for metric, value in claimed.items()
        if metric in headline
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
        and relative_gap(float(value), headline[metric]) > CLAIM_TOLERANCE
    ]
