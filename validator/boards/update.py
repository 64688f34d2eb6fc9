"""A merge's boards update: the committed split files patched by what the merge changed (`orv boards --incremental`).

After a merge, main's boards differ from a regeneration only where the merge's files reach, and pull-request
mode already finds that reach and patches the boards for its summary (validator/pr/incremental.py: the
change's two-hop neighbourhood, loaded on both sides; boards/delta.py: the changed recipes' rows rebuilt
from it and reranked among the committed rows of their models). This module turns that patch into files:

- the touched models (`touched`: those of the changed recipes on either side, of the recipes whose run
  files changed, and of the runs those recipes name) get their part and standings rewritten from their
  committed part with the rebuilt rows, their `models` entry recomputed from the patched training rows
  (build.model_entries, the full build's own function), their frontier groups merged, their `runs` rows
  rebuilt for the runs whose row can move (a changed run file, or one a changed recipe names: its
  `recipes` list), every list in the full build's order;
- the index gets the new git stamp, the counts moved by what the touched models gained or lost, the
  wanted models and the list of model files;
- the key shards of the keys the changed files had or have (keyfile.patched_key_files).

Every row a tier depends on is within the neighbourhood: a recipe's tier reads its own runs, their
signatures, the measurers file and the catalog (evidence/tiers.py), and the physics findings on it, whose
groups two hops complete. `orv boards --check` (a full regeneration) stays the judge, and the boards
workflow runs it in full on a schedule; tests/e2e/test_boards_update.py holds random merges to it byte
for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from validator.boards.build import GitStamp, inference_order, model_entries, render, run_rows, training_order
from validator.boards.delta import (
    board_document,
    board_document_for,
    changed_recipe_paths,
    changed_run_digests,
    touched_models,
)
from validator.boards.frontier import merged
from validator.boards.regenerate import checked
from validator.boards.split import (
    BOARD_NAMES,
    FORMAT,
    BoardsUnreadable,
    Reader,
    chunk_paths,
    model_path,
    read_document,
    read_index,
    split_files,
    standings_path,
)
from validator.engine.evaluation import Evaluation
from validator.errors import OrvError
from validator.registry.layout import BOARDS_PATH
from validator.registry.snapshot import Snapshot

# The relation keys (registry/relations.py) a row is read across files by, besides those of the checks a tier
# reads (tiers.tier_reads: pull-request mode follows those itself): "r", a recipe and the run files it names
# (a row's runs, a run's `recipes`, their signatures); "i" and "f", a row's id and path, so a recipe sharing
# either with a changed one is rebuilt beside it. The others (a run's sample sketch, ORV304; a quality run's
# task, ORV239; a configuration or its claims, ORV302/303) join files only for findings no tier reads.
ROWS_RELATED_BY = frozenset({"r", "i", "f"})


class BoardsNotPatchable(OrvError):
    """The committed boards cannot be patched: only a full regeneration can write them (its message says why)."""


@dataclass(frozen=True)
class Reach:
    """What a merge touches on the boards."""

    recipes: frozenset[str]  # recipe paths whose rows are rebuilt
    runs: frozenset[str]  # run digests whose `runs` rows are rebuilt
    models: frozenset[str]  # models whose files are rewritten

    def read_paths(self) -> list[str]:
        """The boards files read for it (a sparse checkout materializes them first): the index and the parts."""
        return [BOARDS_PATH] + [model_path(m) for m in sorted(self.models)]

    def written_paths(self) -> list[str]:
        """The boards files only written for it, never read: the touched models' standings (derived from their
        parts). A sparse checkout need not fetch them: they are written, then made part of it."""
        return [standings_path(m) for m in sorted(self.models)]


def reach(evaluation: Evaluation) -> Reach:
    """The recipes, runs and models a merge's files reach, on both sides of it."""
    assert evaluation.change is not None and evaluation.base is not None
    sides = (evaluation.snapshot, evaluation.base.snapshot)
    recipes = changed_recipe_paths(evaluation)
    runs = changed_run_digests(c.path for c in evaluation.change.files)
    for side in sides:
        recipes |= {entry.path for digest in runs for entry in side.references().get(digest, ())}
    for side in sides:
        runs |= _named_by(side, recipes)
    models = touched_models(evaluation)
    for side in sides:
        models |= {entry.recipe.model for entry in side.recipes if entry.path in recipes and entry.recipe}
        models |= {run.meta.model for digest in runs if (run := side.runs.get(digest)) and run.meta}
    return Reach(frozenset(recipes), frozenset(runs), frozenset(models))


def _named_by(snapshot: Snapshot, recipes: set[str]) -> set[str]:
    return {digest for digest, entries in snapshot.references().items() if any(e.path in recipes for e in entries)}


def patched_files(
    evaluation: Evaluation, read: Reader, found: Reach, stamp: GitStamp | None
) -> tuple[dict[str, bytes], list[str]]:
    """({path: bytes} to write, paths to remove) of the boards (not the keys) after the merge; `stamp` is
    the newest data commit the merge brought (None: the index keeps its own). Raises BoardsNotPatchable
    when the committed boards cannot be read (then only a full regeneration can write them)."""
    try:
        index = read_index(read(BOARDS_PATH))
        base = read_document(read, found.models) if index is not None else None
    except BoardsUnreadable as exc:
        raise BoardsNotPatchable(f"the committed boards cannot be read ({exc})") from None
    if index is None or base is None:
        raise BoardsNotPatchable(f"there are no committed boards ({BOARDS_PATH})")
    listed = set(index["model_files"])

    fresh = board_document(evaluation.snapshot, evaluation.found)
    head = board_document_for(evaluation, base, fresh)
    ids = {
        row.get("recipe")
        for document in (base, fresh)
        for rows in document["boards"].values()
        for row in rows
        if row.get("path") in found.recipes
    }
    boards = {name: sorted(head["boards"].get(name, ()), key=order) for name, order in _ORDER.items()}
    catalog = evaluation.snapshot.catalog
    runs = [run for run in base["runs"] if run["content_hash"] not in found.runs]
    runs = sorted(runs + run_rows(evaluation.snapshot, found.runs), key=lambda run: run["content_hash"])
    wanted = head["wanted"]
    document = {
        "meta": _meta(index["meta"], base, boards, runs, stamp),
        "boards": boards,
        "models": model_entries(boards["training"], catalog),
        "frontiers": merged(base["frontiers"], fresh["frontiers"], {i for i in ids if isinstance(i, str)}),
        "runs": runs,
        "wanted": {
            "models": wanted["models"],
            "references": wanted["references"],
            "reproductions": wanted["reproductions"],
            "quality": wanted["quality"],
        },
    }
    checked(document)
    files = split_files(document)
    parts = {m for m in found.models if model_path(m) in files}
    new_index = {
        "format": FORMAT,
        "meta": document["meta"],
        "wanted": {"models": wanted["models"]},
        "model_files": sorted((listed - found.models) | parts),
    }
    files[BOARDS_PATH] = render(new_index)
    removed = [path for m in sorted((found.models & listed) - parts) for path in (model_path(m), standings_path(m))]
    # the chunks the touched models had that they no longer have (a model gone, or stored in fewer chunks)
    removed += [path for path in chunk_paths(read, found.models & listed) if path not in files]
    return files, removed


_ORDER = {"measured": inference_order, "claimed": inference_order, "training": training_order}


def _meta(
    meta: Mapping[str, Any],
    base: Mapping[str, Any],
    boards: Mapping[str, list[dict[str, Any]]],
    runs: list[dict[str, Any]],
    stamp: GitStamp | None,
) -> dict[str, Any]:
    """The index's meta after the merge: counts moved by the touched models' before and after."""

    def counts(boards: Mapping[str, Iterable[Mapping[str, Any]]], runs: Iterable[Any]) -> dict[str, int]:
        out = {name: len(list(boards.get(name, ()))) for name in BOARD_NAMES}
        out["models"] = len({row["model"] for row in boards.get("training", ())})
        out["runs"] = len(list(runs))
        return out

    before, after = counts(base["boards"], base["runs"]), counts(boards, runs)
    moved = {name: value - before[name] + after[name] for name, value in meta["counts"].items()}
    out = {**meta, "counts": moved}
    if stamp is not None:
        out.update(updated_at=stamp.updated_at, source_commit=stamp.source_commit)
    return out
