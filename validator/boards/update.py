"""A merge's boards update: the committed split files patched by what the merge changed (`orv boards --incremental`).

After a merge, main's boards differ from a regeneration only where the merge's files reach, and pull-request
mode already finds that reach and patches the boards for its summary (validator/pr/incremental.py: the
change's two-hop neighbourhood, loaded on both sides; boards/delta.py: the changed recipes' rows rebuilt
from it and reranked among the committed rows of their models). This module turns that patch into files:

- the touched models (those of the changed recipes on either side, of the recipes whose run files
  changed, and of the runs those recipes name): of each, the manifest, the standings and only the chunks
  holding the reached recipes and runs are read (the other rows are the standings' entries, with the
  manifest's training fields) and the manifest, standings and those chunks rewritten with the rebuilt
  rows, the `models` entry recomputed from the patched training rows (build.model_entries, the full
  build's own function), the frontier groups merged, the `runs` rows rebuilt for the runs whose row can
  move (a changed run file, or one a changed recipe names: its `recipes` list); when the model's chunk
  count moves, every chunk of it is read and rewritten (ChunksChange);
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

from validator.boards.build import (
    GitStamp,
    inference_order,
    model_entries,
    rank_inference,
    rank_training,
    render,
    run_rows,
    training_order,
)
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
    TRAINING_EXTRAS,
    BoardsUnreadable,
    Reader,
    chunk_count,
    chunk_of,
    chunk_path,
    index_of,
    model_path,
    read_chunk,
    read_index,
    read_manifest,
    read_standing,
    render_standing,
    standing,
    standing_rows,
    standings_path,
    stored,
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
        """The boards files read for it before its chunks (a sparse checkout materializes them first): the
        index, and the touched models' manifests and standings (touched_chunk_paths: the chunks)."""
        return [BOARDS_PATH] + [path for m in sorted(self.models) for path in (model_path(m), standings_path(m))]


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


class ChunksChange(OrvError):
    """A touched model's chunk count changes with the merge: every chunk of `models` must be read and rewritten."""

    def __init__(self, models: frozenset[str]) -> None:
        super().__init__(f"the chunk count of {', '.join(sorted(models))} changes")
        self.models = models


def chunk_keys(evaluation: Evaluation, found: Reach) -> frozenset[str]:
    """The keys of what a merge rewrites (split.chunk_of): the ids of the recipes it reaches, on either side,
    and the run digests whose rows are rebuilt."""
    assert evaluation.base is not None
    ids = {
        entry.id
        for side in (evaluation.snapshot, evaluation.base.snapshot)
        for entry in side.recipes
        if entry.path in found.recipes and entry.id
    }
    return frozenset(ids | found.runs)


def touched_chunk_paths(read: Reader, found: Reach, keys: frozenset[str]) -> list[str]:
    """The chunk files of the touched models that hold `keys` (by the committed manifests' chunk counts):
    what a merge's update reads of the models' rows, for a sparse checkout to materialize first."""
    out = []
    for model in sorted(found.models):
        try:
            manifest = read_manifest(read, model)
        except BoardsUnreadable:
            continue
        if manifest is not None:
            out += [chunk_path(model, i) for i in sorted({chunk_of(key, manifest["chunks"]) for key in keys})]
    return out


@dataclass(frozen=True)
class _Held:
    """What the update reads of a model on the committed boards."""

    manifest: dict[str, Any]
    standing: dict[str, Any]
    chunks: dict[int, dict[str, Any]]  # index -> chunk: those holding the merge's keys (or every one)


def _held(read: Reader, model: str, keys: frozenset[str], whole: bool) -> _Held:
    manifest = read_manifest(read, model)
    if manifest is None:
        raise BoardsUnreadable(f"{BOARDS_PATH} lists {model_path(model)}, which is missing")
    found = read_standing(read, model)
    if found is None:
        raise BoardsUnreadable(f"{BOARDS_PATH} lists model {model!r}, whose standings are missing")
    count = manifest["chunks"]
    indices = range(count) if whole else sorted({chunk_of(key, count) for key in keys})
    return _Held(manifest, found, {i: read_chunk(read, model, i) for i in indices})


def _base_document(index: Mapping[str, Any], held: Mapping[str, _Held]) -> dict[str, Any]:
    """The touched models' committed boards as one document: the rows, runs and wanted items of the chunks
    read, whole; every other row of those models as its standing has it (recipe, group, tier, reasons,
    quality, the ranked and shown figures) with, for a training row, what its `models` entry reads
    (the manifest's TRAINING_EXTRAS). Ranked as a full build ranks them."""
    boards: dict[str, list[dict[str, Any]]] = {name: [] for name in BOARD_NAMES}
    runs: list[dict[str, Any]] = []
    reproductions: list[dict[str, Any]] = []
    quality: list[dict[str, Any]] = []
    for model, h in sorted(held.items()):
        whole = {name: [dict(row) for c in h.chunks.values() for row in c["boards"][name]] for name in BOARD_NAMES}
        extras = {t[0]: dict(zip(TRAINING_EXTRAS, t[1:])) for t in h.manifest["training"]}
        for name, stubs in standing_rows(h.standing).items():
            have = {row["recipe"] for row in whole[name]}
            for stub in stubs:
                if stub["recipe"] in have:
                    continue
                if name == "training":
                    if stub["recipe"] not in extras:
                        raise BoardsUnreadable(f"{model_path(model)} lacks training row {stub['recipe']!r}")
                    stub.update(extras[stub["recipe"]])
                boards[name].append(stub)
            boards[name] += whole[name]
        runs += [run for c in h.chunks.values() for run in c["runs"]]
        reproductions += [item for c in h.chunks.values() for item in c["wanted"]["reproductions"]]
        quality += [item for c in h.chunks.values() for item in c["wanted"]["quality"]]
    try:
        rank_training(boards["training"])
        rank_inference(boards["measured"], "decode_tok_s")
        rank_inference(boards["claimed"], "claimed_tok_s")
    except (KeyError, TypeError, AttributeError) as exc:
        raise BoardsUnreadable(f"a touched model's rows cannot be ranked ({exc!r})") from None
    ordered = sorted(held)
    return {
        "meta": index["meta"],
        "boards": boards,
        "models": [entry for m in ordered for entry in held[m].manifest["models"]],
        "frontiers": [group for m in ordered for group in held[m].manifest["frontiers"]],
        "runs": sorted(runs, key=lambda run: run["content_hash"]),
        "wanted": {
            "models": index["wanted"]["models"],
            "references": [item for m in ordered for item in held[m].manifest["wanted"]["references"]],
            "reproductions": sorted(reproductions, key=lambda item: (item["kind"], item["recipe"])),
            "quality": sorted(quality, key=lambda item: item["recipe"]),
        },
    }


def patched_files(
    evaluation: Evaluation,
    read: Reader,
    found: Reach,
    stamp: GitStamp | None,
    whole: frozenset[str] = frozenset(),
) -> tuple[dict[str, bytes], list[str]]:
    """({path: bytes} to write, paths to remove) of the boards (not the keys) after the merge; `stamp` is
    the newest data commit the merge brought (None: the index keeps its own). Of each touched model it reads
    the manifest, the standings and the chunks holding the merge's keys (every chunk of the models in
    `whole`), and writes those, the index, and any chunk new to it. Raises ChunksChange when a model's
    chunk count moves (then every chunk of it must be read: call again with it in `whole`), and
    BoardsNotPatchable when the committed boards cannot be read (then only a full regeneration can write them)."""
    keys = chunk_keys(evaluation, found)
    try:
        index = read_index(read(BOARDS_PATH))
        if index is None:
            raise BoardsNotPatchable(f"there are no committed boards ({BOARDS_PATH})")
        listed = set(index["model_files"])
        held = {m: _held(read, m, keys, m in whole) for m in sorted(found.models & listed)}
        base = _base_document(index, held)
    except BoardsUnreadable as exc:
        raise BoardsNotPatchable(f"the committed boards cannot be read ({exc})") from None

    fresh = board_document(evaluation.snapshot, evaluation.found)
    head = board_document_for(evaluation, base, fresh)
    ids = {
        row.get("recipe")
        for document in (base, fresh)
        for rows in document["boards"].values()
        for row in rows
        if row.get("path") in found.recipes
    }
    boards = {name: list(head["boards"].get(name, ())) for name in BOARD_NAMES}
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
        "wanted": wanted,
    }
    files, removed, present, counts_moved = _model_files(document, base, held, keys, whole)
    if counts_moved:
        raise ChunksChange(frozenset(counts_moved))
    files[BOARDS_PATH] = render(index_of(document, (listed - found.models) | present))
    return files, removed


def _model_files(
    document: Mapping[str, Any],
    base: Mapping[str, Any],
    held: Mapping[str, _Held],
    keys: frozenset[str],
    whole: frozenset[str],
) -> tuple[dict[str, bytes], list[str], set[str], set[str]]:
    """The touched models' files after the merge: (files, removed, models with files, models whose chunk
    count moves and were not read whole). Only the chunks read (or new) are written; the document's rows of
    every other chunk are standings' entries, which only the standings and the manifest are derived from."""
    touched = set(held) | {row["model"] for rows in document["boards"].values() for row in rows}
    touched |= {run["model"] for run in document["runs"]}
    base_rows = {m: 0 for m in touched}
    for rows in base["boards"].values():
        for row in rows:
            base_rows[row["model"]] += 1
    files: dict[str, bytes] = {}
    removed: list[str] = []
    present: set[str] = set()
    moved: set[str] = set()
    owner = {
        ("training" if name == "training" else "inference", row["recipe"]): row["model"]
        for name, rows in document["boards"].items()
        for row in rows
    }
    checkable: dict[str, Any] = {**document, "boards": {name: [] for name in BOARD_NAMES}}
    for model in sorted(touched):
        h = held.get(model)
        rows = {name: [row for row in document["boards"][name] if row["model"] == model] for name in BOARD_NAMES}
        model_runs = [run for run in document["runs"] if run["model"] == model]
        base_runs = sum(1 for run in base["runs"] if run["model"] == model)
        runs_total = (h.manifest["items"] - base_rows[model] - base_runs if h else 0) + len(model_runs)
        items = sum(map(len, rows.values())) + runs_total
        entries = [entry for entry in document["models"] if entry["model"] == model]
        frontiers = [group for group in document["frontiers"] if group["model"] == model]
        references = [item for item in document["wanted"]["references"] if item["model"] == model]
        if not (items or entries or frontiers or references):  # gone from the boards: every file of it
            if h is not None:
                removed += [model_path(model), standings_path(model)]
                removed += [chunk_path(model, i) for i in range(h.manifest["chunks"])]
            continue
        present.add(model)
        count = chunk_count(items)
        if h is not None and count != h.manifest["chunks"]:
            if model not in whole:
                moved.add(model)
                continue
            removed += [chunk_path(model, i) for i in range(count, h.manifest["chunks"])]
        written = set(range(count)) if h is None or model in whole else set(h.chunks)

        def mine(kind: str, recipe: str, model: str = model, count: int = count, written: set[int] = written) -> bool:
            return owner.get((kind, recipe)) == model and chunk_of(recipe, count) in written

        full = {
            name: sorted(
                (row for row in rows[name] if chunk_of(row["recipe"], count) in written),
                key=training_order if name == "training" else inference_order,
            )
            for name in BOARD_NAMES
        }
        for name in BOARD_NAMES:
            checkable["boards"][name] += full[name]
        part = {
            "model": model,
            "boards": full,
            "models": entries,
            "frontiers": frontiers,
            "runs": model_runs,
            "wanted": {
                "references": references,
                "reproductions": [i for i in document["wanted"]["reproductions"] if mine(i["kind"], i["recipe"])],
                "quality": [i for i in document["wanted"]["quality"] if mine("inference", i["recipe"])],
            },
        }
        manifest, chunks = stored(part, count, items, rows["training"])
        files[model_path(model)] = render(manifest)
        files.update((chunk_path(model, i), render(chunks[i])) for i in sorted(written))
        every_row = {name: sorted(rows[name], key=_group_order) for name in BOARD_NAMES}
        files[standings_path(model)] = render_standing(standing({**part, "boards": every_row}))
    checkable["boards"] = {
        name: sorted(rows, key=training_order if name == "training" else inference_order)
        for name, rows in checkable["boards"].items()
    }
    checked(checkable)  # the rows written, whole, with everything else the document holds
    return files, removed, present, moved


def _group_order(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """Rows in their groups' order (the document's: by model, GPU, workload), by recipe within (a standing's)."""
    return (row["model"], row["gpu"], row["workload"], row["recipe"])


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
