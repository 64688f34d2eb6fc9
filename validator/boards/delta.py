"""How a pull request moves the boards: two boards documents (merge base and pull request) and the rows that differ.

After a full check both documents are built whole. In pull-request mode (only the change's
neighbourhood is loaded) they are put together from two sources, so the summary costs no second check
and no read of a model's whole boards part (`pull_request_boards`):

- the rows of the recipe files the pull request changes and of the recipes whose run files it changes,
  built by `board_document` from each side's checked snapshot (their runs are in the neighbourhood);
- every other entry of the touched models from the merge base's committed standings
  (boards/standings/<model>.json, boards/split.py): recipe, tier and the figures its rank follows from.
  The rows, ranks and frontiers a change can move are all within its models.

Each side's groups are then ranked by build's rules, so an entry the change only pushes down a rank is
found without its full row. Every list under a document's `boards` holds rows with `recipe` and `tier`,
and `rank`/`rank_of` where ranked. A merge base whose standings cannot be read has its touched models' parts
read and patched instead (`board_document_for`); the combined boards.json is never read (it is not committed).
"""

from __future__ import annotations

from collections.abc import (
    Iterable,
    Mapping,  # not typing's, ~10x slower in isinstance() (report/summary.py)
    Sequence,
)
from dataclasses import dataclass
from typing import Any, cast

from validator.boards.build import (
    GitStamp,
    build,
    competition_ranks,
    rank_inference,
    wanted_models,
    wanted_reproductions,
)
from validator.boards.frontier import patched
from validator.boards.split import (
    BOARD_NAMES,
    BoardsUnreadable,
    read_document,
    read_index,
    read_standing,
    standing_rows,
)
from validator.diagnostics import Diagnostic
from validator.engine.evaluation import Evaluation
from validator.evidence.tiers import derive
from validator.pr.change import Change
from validator.registry.layout import BOARDS_PATH, filed_model, run_digest_from_path
from validator.registry.snapshot import Snapshot

NO_BASE_BOARDS = (
    f"the merge base has no readable boards ({BOARDS_PATH} and the model files it lists), so board "
    "changes are not shown; run `orv boards` on the base branch and commit boards/ (docs/boards.md)"
)


def board_document(snapshot: Snapshot, diagnostics: Iterable[Diagnostic]) -> dict[str, Any]:
    """The boards document `orv boards` would write for this snapshot (without the git stamp)."""
    return build(snapshot, derive(snapshot, tuple(diagnostics)), GitStamp())


def committed_base_boards(change: Change, models: Iterable[str] | None = None) -> Mapping[str, Any] | None:
    """The merge base's committed boards document (with `models`, only those models' parts, read from git
    objects); None when it has none or they cannot be read."""
    try:
        return read_document(change.base.read, models)
    except BoardsUnreadable:
        return None


def changed_run_digests(paths: Iterable[str]) -> set[str]:
    """The run files a set of changed paths changes: a run file itself, or its signature (`.json.sig`: a
    second measurer's signature can lift a recipe from T2 to T3 without any other file changing)."""
    return {digest for path in paths if path.startswith("runs/") and (digest := run_digest_from_path(path))}


def touched_models(evaluation: Evaluation) -> set[str]:
    """The models whose rows a pull request can move: those of the recipes it changes (by the folder they are
    filed in at the base, ORV107, and by their model now) and of the recipes whose run files it changes."""
    assert evaluation.change is not None
    changed = {c.path for c in evaluation.change.files}
    out = {model for model in map(filed_model, changed) if model}
    digests = changed_run_digests(changed)
    referenced = evaluation.snapshot.references()
    changed |= {entry.path for digest in digests for entry in referenced.get(digest, ())}
    out |= {entry.recipe.model for entry in evaluation.snapshot.recipes if entry.path in changed and entry.recipe}
    out |= {run.meta.model for digest, run in evaluation.snapshot.runs.items() if digest in digests and run.meta}
    return out


def pull_request_boards(evaluation: Evaluation) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(base, pull request) boards documents in pull-request mode, from the neighbourhood's rebuilt rows and
    the committed standings of the models they belong to (module docstring); None when the merge base has
    no split boards (then `base_board_document` reads what it has) or they cannot be read."""
    assert evaluation.partial and evaluation.change is not None and evaluation.base is not None
    read = evaluation.change.base.read
    try:
        index = read_index(read(BOARDS_PATH))
        if index is None:
            return None
        # only the rows of changed recipes (and of recipes whose run files changed) are rebuilt: their runs are
        # in the neighbourhood; a recipe two hops out may lack some of its own, so its row is its standing
        changed = changed_recipe_paths(evaluation)
        before, after = (
            _only(board_document(view.snapshot, diagnostics), changed)
            for view, diagnostics in ((evaluation.base, evaluation.base.diagnostics), (evaluation, evaluation.found))
        )
        rows = [row for doc in (before, after) for board in doc["boards"].values() for row in board]
        rebuilt = {row["recipe"] for row in rows}
        models = touched_models(evaluation) | {row["model"] for row in rows}
        standings = []
        for model in sorted(models & set(index["model_files"])):
            found = read_standing(read, model)
            if found is None:
                raise BoardsUnreadable(f"{BOARDS_PATH} lists model {model!r}, whose files are missing")
            standings.append(found)
    except BoardsUnreadable:
        return None

    stubs = [standing_rows(found) for found in standings]
    kept = {name: [row for rows in stubs for row in rows[name] if row["recipe"] not in rebuilt] for name in BOARD_NAMES}

    def boards(side: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
        # copies per side: ranking writes into the rows
        out = {
            name: [dict(row) for row in kept[name]] + [dict(row) for row in side["boards"].get(name, ())]
            for name in BOARD_NAMES
        }
        # the copies are dicts, and _reranked copies a row it reranks into a dict
        out["training"] = cast(
            "list[dict[str, Any]]", _reranked(out["training"], {_group(row) for row in out["training"]})
        )
        for name, figure in (("measured", "decode_tok_s"), ("claimed", "claimed_tok_s")):
            rank_inference(out[name], figure)
        return out

    base_boards, head_boards = boards(before), boards(after)
    frontiers = [group for found in standings for group in found["frontiers"]]
    wanting = index["wanted"]["models"]
    # a catalog model whose standings were not read keeps its base standing on the wanted list
    read_models = {found["model"] for found in standings}
    trained = {row.get("model") for row in head_boards["training"]}
    trained |= {
        m
        for m in evaluation.snapshot.catalog.models
        if m not in read_models and m not in {item.get("model") for item in _rows(wanting)}
    }

    def reproductions(boards: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
        return sorted(
            wanted_reproductions(boards["training"], "training")
            + wanted_reproductions(boards["measured"], "inference"),
            key=lambda item: (item["kind"], item["recipe"]),
        )

    # `wanted` as the summary reads it: the models (the index's; after the merge, from the training rows), the
    # touched models' reproductions, and the neighbourhood's quality items (only its recipes' can change)
    base_doc = {
        "boards": base_boards,
        "models": [entry for found in standings for entry in found["models"]],
        "frontiers": frontiers,
        "wanted": {
            "models": wanting,
            "reproductions": reproductions(base_boards),
            "quality": before["wanted"]["quality"],
        },
    }
    head_doc = {
        "boards": head_boards,
        "frontiers": patched(frontiers, after["frontiers"], rebuilt),
        "wanted": {
            "models": wanted_models(evaluation.snapshot.catalog, trained),
            "reproductions": reproductions(head_boards),
            "quality": after["wanted"]["quality"],
        },
    }
    return base_doc, head_doc


def changed_recipe_paths(evaluation: Evaluation) -> set[str]:
    """The recipe files whose rows a pull request can change: those it changes, and those referencing a run
    file it changes (altered, added, removed, or its signature)."""
    assert evaluation.change is not None
    changed = {c.path for c in evaluation.change.files}
    runs = changed_run_digests(changed)
    referenced = evaluation.snapshot.references()
    return changed | {entry.path for digest in runs for entry in referenced.get(digest, ())}


def _only(document: dict[str, Any], paths: set[str]) -> dict[str, Any]:
    """The document with only the rows, frontier points and quality items of the recipe files at `paths`."""
    boards = {name: [row for row in rows if row.get("path") in paths] for name, rows in document["boards"].items()}
    ids = {row["recipe"] for rows in boards.values() for row in rows}
    frontiers = []
    for g in document["frontiers"]:
        points = [p for p in g["points"] if p["recipe"] in ids]
        apart = [p for p in g["apart"] if p["recipe"] in ids]
        if points or apart:
            frontiers.append({**g, "points": points, "apart": apart})
    quality = [item for item in document["wanted"]["quality"] if item["recipe"] in ids]
    return {**document, "boards": boards, "frontiers": frontiers, "wanted": {**document["wanted"], "quality": quality}}


def base_board_document(evaluation: Evaluation) -> Mapping[str, Any] | None:
    """The merge base's boards: its committed boards (in pull-request mode only the models the pull request
    touches); when the whole base was already checked (full mode), the document built from it. None when the base
    has no boards: the summary says so rather than checking the whole base a second time."""
    if evaluation.base is not None and not evaluation.partial:
        return board_document(evaluation.base.snapshot, evaluation.base.diagnostics)
    assert evaluation.change is not None
    # pull-request mode patches only the touched models' rows; a whole check builds every row of the head
    return committed_base_boards(evaluation.change, touched_models(evaluation) if evaluation.partial else None)


def board_document_for(
    evaluation: Evaluation, base: Mapping[str, Any], fresh: Mapping[str, Any] | None = None
) -> Mapping[str, Any]:
    """The pull request's boards: built from the whole snapshot after a full check; in
    pull-request mode, the base document with the rows of changed recipe files (and of recipes
    whose run files changed) rebuilt from the neighbourhood (`fresh`: its board_document, when the caller
    has it), and their groups reranked."""
    if not evaluation.partial:
        return board_document(evaluation.snapshot, evaluation.found)
    changed = changed_recipe_paths(evaluation)  # a recipe's row also moves when a run file it references changed
    if fresh is None:
        fresh = board_document(evaluation.snapshot, evaluation.found)  # the neighbourhood's rows
    boards: dict[str, Sequence[Mapping[str, Any]]] = {}
    regroup: set[tuple[Any, ...]] = set()
    for name in sorted(set(base["boards"]) | set(fresh["boards"])):
        kept = [row for row in _rows(base["boards"].get(name)) if row.get("path") not in changed]
        added = [row for row in fresh["boards"].get(name, ()) if row.get("path") in changed]
        regroup |= {_group(row) for row in _rows(base["boards"].get(name)) if row.get("path") in changed}
        regroup |= {_group(row) for row in added}
        boards[name] = kept + added
    boards["training"] = _reranked(boards.get("training", []), regroup)
    for name, figure in (("measured", "decode_tok_s"), ("claimed", "claimed_tok_s")):
        rows = [dict(row) for row in boards.get(name, [])]  # every row of the board is here: rank them all
        rank_inference(rows, figure)
        boards[name] = rows
    changed_ids = {
        row.get("recipe") for name in fresh["boards"] for row in fresh["boards"][name] if row.get("path") in changed
    }
    # with the base's rows of changed files: a removed recipe's row, references and frontier points go too
    either_ids = changed_ids | {
        row.get("recipe") for rows in base["boards"].values() for row in _rows(rows) if row.get("path") in changed
    }
    base_wanted = base["wanted"] if isinstance(base.get("wanted"), Mapping) else {}
    quality = [item for item in _rows(base_wanted.get("quality")) if item.get("recipe") not in either_ids]
    quality += [item for item in fresh["wanted"]["quality"] if item.get("recipe") in changed_ids]
    # the base holds only the touched models' rows: any other catalog model keeps its base standing
    touched = touched_models(evaluation)
    base_wanting = {item.get("model") for item in _rows(base_wanted.get("models"))}
    trained = {row.get("model") for row in boards["training"]}
    trained |= {m for m in evaluation.snapshot.catalog.models if m not in touched and m not in base_wanting}
    wanted = {  # what the boards would list after the merge (build.py `_wanted`), from the patched rows
        "models": wanted_models(evaluation.snapshot.catalog, trained),
        "references": _references(
            _rows(base_wanted.get("references")),
            fresh["wanted"]["references"],
            either_ids,
        ),
        "reproductions": sorted(
            wanted_reproductions(boards["training"], "training")
            + wanted_reproductions(boards.get("measured", []), "inference"),
            key=lambda item: (item["kind"], item["recipe"]),
        ),
        "quality": sorted(quality, key=lambda item: str(item.get("recipe"))),
    }
    base_frontiers = base["frontiers"] if isinstance(base.get("frontiers"), list) else []
    return {
        "boards": boards,
        "wanted": wanted,
        "frontiers": patched(base_frontiers, fresh["frontiers"], {r for r in either_ids if isinstance(r, str)}),
    }


def _references(
    base: list[Mapping[str, Any]], fresh: list[Mapping[str, Any]], changed: set[Any]
) -> list[dict[str, Any]]:
    """wanted.references after the merge: the base's waiting recipes less the changed (or removed) ones, plus
    the changed ones that wait in the pull request, per model × workload (build.py `wanted_references`)."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for items, keep in ((base, lambda r: r not in changed), (fresh, lambda r: r in changed)):
        for item in items:
            recipes = [r for r in item.get("recipes") or () if keep(r)]
            if not recipes:
                continue
            key = (str(item.get("model")), str(item.get("workload")))
            entry = merged.setdefault(key, {**item, "recipes": []})
            entry["recipes"] = sorted(set(entry["recipes"]) | set(recipes))
    return [merged[key] for key in sorted(merged)]


def _rows(rows: Any) -> list[Mapping[str, Any]]:
    return [row for row in rows if isinstance(row, Mapping)] if isinstance(rows, list) else []


def _group(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """The model-GPU(-workload) pair a training row is ranked in (boards/build.py `_ranks`)."""
    return (row.get("model"), row.get("gpu"), row.get("workload"))


def _reranked(rows: Sequence[Mapping[str, Any]], groups: set[tuple[Any, ...]]) -> list[Mapping[str, Any]]:
    """Rows with rank/rank_of recomputed in the given groups by build's rule (competition_ranks):
    1 + the number of rows in the group with a strictly higher (rounded) figure."""
    members: dict[tuple[Any, ...], list[int]] = {}
    for i, row in enumerate(rows):
        if _group(row) in groups:
            members.setdefault(_group(row), []).append(i)
    out = list(rows)
    for indices in members.values():
        figures = [float(rows[i].get("tok_s_per_gpu") or 0.0) for i in indices]
        for i, rank in zip(indices, competition_ranks(figures)):
            out[i] = {**rows[i], "rank": rank, "rank_of": len(indices)}
    return out


def rows_by_recipe(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Every row of every board in a boards document, by recipe id (first row wins)."""
    out: dict[str, Mapping[str, Any]] = {}
    boards = document.get("boards", {}) if isinstance(document, Mapping) else {}
    for rows in boards.values() if isinstance(boards, Mapping) else ():
        for row in rows if isinstance(rows, list) else ():
            # exact types first: a touched model's ~50,000 rows, twice (summary.py _indexed says why)
            if (type(row) is dict or isinstance(row, Mapping)) and type(row.get("recipe")) is str:
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
        return {
            "recipe": self.recipe,
            "change": self.change,
            "tier": self.tier,
            "rank": self.rank,
            "rank_of": self.rank_of,
            "base_tier": self.base_tier,
            "base_rank": self.base_rank,
            "base_rank_of": self.base_rank_of,
            "quality": self.quality,
        }


def quality_display(row: Mapping[str, Any] | None) -> str | None:
    """An inference row's quality figure and ratio to the reference, as the summary shows it."""
    q = row.get("quality") if isinstance(row, Mapping) else None
    if not isinstance(q, Mapping):
        return None
    if q.get("score") is None:
        return f"{q.get('task')}: {q.get('status')}"
    ratio = f", {q['ratio']:.4f} of the reference" if q.get("ratio") is not None else ""
    return f"{q.get('task')} {q.get('filter')} {q['score']:.4f}{ratio} ({q.get('status')})"


def board_delta(base: Mapping[str, Any], head: Mapping[str, Any], edited: Iterable[str] = ()) -> list[BoardChange]:
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
            out.append(
                BoardChange(rid, "new", a.get("tier"), a.get("rank"), a.get("rank_of"), quality=quality_display(a))
            )
            continue
        moved = (a.get("tier"), a.get("rank")) != (b.get("tier"), b.get("rank"))
        if rid in edited_ids or moved:
            out.append(
                BoardChange(
                    rid,
                    "edited" if rid in edited_ids else "moved",
                    a.get("tier"),
                    a.get("rank"),
                    a.get("rank_of"),
                    b.get("tier"),
                    b.get("rank"),
                    b.get("rank_of"),
                    quality_display(a),
                )
            )
    return out
