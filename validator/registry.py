"""The whole repository as one immutable snapshot: files found, documents parsed, indexes built once."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, TypeVar

from validator.diagnostics import Diagnostic
from validator.hashing import HEX64, run_path
from validator.load.documents import Document
from validator.models import (
    Convergence,
    GpuSpec,
    ModelSpec,
    Recipe,
    ReferencePoint,
    RunMeta,
    StartingPoint,
    WorkloadSpec,
)
from validator.quality.verify import Problem, QualityFacts
from validator.science.throughput import RunFacts

REGISTRY_DIRS = ("recipes", "runs", "catalog", "boards", "measurers")
CATALOG_FILES = {
    "catalog/hardware.yaml": "catalog-hardware",
    "catalog/models.yaml": "catalog-models",
    "catalog/workloads.yaml": "catalog-workloads",
    "catalog/starting-points.yaml": "catalog-starting-points",
}
BOARDS_PATH = "boards/index.json"  # the boards' index; each model's part in BOARDS_MODELS_DIR (boards/split.py)
BOARDS_MODELS_DIR = "boards/models"
BOARDS_STANDINGS_DIR = "boards/standings"  # per model, what the pull-request gate reads of it (boards/split.py)
DOCUMENT_PATH = "boards/boards.json"  # the whole boards document readers fetch (SPEC §7), written beside the split files
KEYS_PATH = "boards/keys.json"  # the published relation keys' header (boards/keyfile.py) ...
KEYS_DIR = "boards/keys"  # ... and their shards, by key: boards/keys/<hex>.json, past 2 digits <ab>/<rest>.json
GENERATED_FILES = (BOARDS_PATH, DOCUMENT_PATH, KEYS_PATH)  # written by `orv boards` on main, never by hand
_BOARDS_MODEL_PATH = re.compile(r"^boards/(models|standings)/[^/]+\.json$")
# any name, one folder deep at most (boards/keys/ab/c.json): a hand-made shard is a generated file too
_KEYS_SHARD_PATH = re.compile(r"^boards/keys/([^/]+/)?[^/]+\.json$")
SIGNERS_PATH = "measurers/allowed_signers"  # OpenSSH allowed_signers: the registered measurers (signing.py)
# What the pull-request gate checks out of the registry (non-cone sparse-checkout patterns, also the
# contributor's cheap clone): everything else a check reads, orv checks out itself (git.materialize).
GATE_CHECKOUT = ("/catalog/", "/measurers/", "/" + KEYS_PATH)
_RECIPE_PATH = re.compile(r"^recipes/(training|inference)/([^/]+)/([^/]+)\.ya?ml$")
_RUN_PATH = re.compile(r"^runs/([0-9a-f]{2})/([0-9a-f]{64})\.json$")
_SIGNATURE_PATH = re.compile(r"^runs/([0-9a-f]{2})/([0-9a-f]{64})\.json\.sig$")

# The kinds of file loaded one by one (validator/load/pipeline.py), each with relation keys by content.
LOADABLE = ("recipe-training", "recipe-inference", "run")


def filed_model(rel: str) -> str | None:
    """The model folder a recipe path is filed under (recipes/<kind>/<model-id>/…), None for other paths."""
    m = _RECIPE_PATH.match(rel)
    return m.group(2) if m else None


def is_generated(rel: str) -> bool:
    """Is this a file `orv boards` writes (the boards' index and model parts, the old one-file boards, the
    keys' header and shards)?"""
    return (rel in GENERATED_FILES or _BOARDS_MODEL_PATH.match(rel) is not None
            or _KEYS_SHARD_PATH.match(rel) is not None)


def classify(rel: str) -> str | None:
    """The document kind a path holds by its place in the layout, or None if it has no place."""
    if rel in CATALOG_FILES:
        return CATALOG_FILES[rel]
    if rel == BOARDS_PATH or rel == DOCUMENT_PATH:
        return "boards"
    if _BOARDS_MODEL_PATH.match(rel):
        return "boards-model"
    if rel == KEYS_PATH or _KEYS_SHARD_PATH.match(rel):
        return "boards-keys"
    if rel == SIGNERS_PATH:
        return "measurers"
    m = _RECIPE_PATH.match(rel)
    if m:
        return f"recipe-{m.group(1)}"
    m = _RUN_PATH.match(rel)
    if m and m.group(2).startswith(m.group(1)):
        return "run"
    m = _SIGNATURE_PATH.match(rel)
    if m and m.group(2).startswith(m.group(1)):
        return "run-signature"  # a measurer's SSH signature of the run file beside it (signing.py)
    return None


_HASH_NAMED_RUN = re.compile(r"^runs/(?:([^/]+)/)?([0-9a-f]{64})\.json$")


def misplaced_run(rel: str) -> str | None:
    """For a hash-named run file outside its shard folder (runs/ab/cd….json), the path it belongs at."""
    m = _HASH_NAMED_RUN.match(rel)
    if m and m.group(1) != m.group(2)[:2]:
        return run_path(m.group(2))
    return None


def run_digest_from_path(rel: str) -> str | None:
    name = rel.rsplit("/", 1)[-1].removesuffix(".sig").removesuffix(".json")
    return name if HEX64.match(name) else None


def discover(root: str) -> list[str]:
    """Every file (and symlink) under the registry folders, repository-relative, sorted."""
    found: list[str] = []
    for top in REGISTRY_DIRS:
        base = os.path.join(root, top)
        if os.path.islink(base):
            found.append(top)
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
            for d in list(dirnames):
                if os.path.islink(os.path.join(dirpath, d)):
                    found.append(f"{rel_dir}/{d}")  # reported, never followed
                    dirnames.remove(d)
            dirnames.sort()
            found.extend(f"{rel_dir}/{name}" for name in filenames)
    return sorted(found)


T = TypeVar("T")


@dataclass(frozen=True)
class RecipeEntry:
    path: str
    doc: Document
    recipe: Recipe | None  # None when the file failed the schema
    # relations.content_keys of this entry, when its loader computed them (None: not computed); never
    # an __init__ argument, so dataclasses.replace gives a changed entry no stale keys
    keys: tuple[str, ...] | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def id(self) -> str | None:
        value = self.doc.data.get("id") if isinstance(self.doc.data, dict) else None
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class RunEntry:
    path: str
    name_digest: str  # the digest the file name claims
    actual_digest: str  # SHA-256 of the bytes on disk
    canonical: bool
    meta: RunMeta | None  # None when unreadable or schema-invalid
    facts: RunFacts | None
    size: int = 0
    quality: QualityFacts | None = None  # when the run is `kind: quality`
    # relations.content_keys of this entry, when its loader computed them (None: not computed); never
    # an __init__ argument, so dataclasses.replace gives a changed entry no stale keys
    keys: tuple[str, ...] | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def verified(self) -> bool:
        return self.meta is not None and self.canonical and self.name_digest == self.actual_digest


@dataclass
class RunFile:
    """A run file while its bytes are in memory: what run-file checks see (validator/load/pipeline.py)."""

    path: str
    raw: bytes
    doc: Document
    name_digest: str | None
    actual_digest: str
    canonical: bool
    meta: RunMeta | None
    facts: RunFacts | None
    quality: QualityFacts | None = None  # for a `kind: quality` run
    quality_problems: tuple[Problem, ...] = ()  # its integrity problems, found once by the loader


@dataclass(frozen=True)
class Catalog:
    hardware: Mapping[str, GpuSpec] = field(default_factory=dict)
    models: Mapping[str, ModelSpec] = field(default_factory=dict)
    workloads: Mapping[str, WorkloadSpec] = field(default_factory=dict)
    starting_points: tuple[StartingPoint, ...] = ()
    # catalog/models.yaml's own order (`models` is sorted by id): the boards' wanted list follows it
    model_order: tuple[str, ...] = ()
    # (model, workload) -> the (step, loss) curve of the run models.yaml names as its convergence
    # reference (load/references.py), and why a named run cannot be one
    reference_curves: Mapping[tuple[str, str], tuple[tuple[int, float], ...]] = field(default_factory=dict)
    reference_problems: Mapping[tuple[str, str], str] = field(default_factory=dict)

    def convergence_for(self, model: str, workload: str | None) -> Convergence | None:
        """The convergence check for `model`'s training runs on `workload`: the workload's rule
        (tolerance, window, smoothing) with the model's own reference curve; None without one.
        A workload-level curve (the form before 2026-12-04) counts only for its `reference_model`."""
        spec = self.workloads.get(workload or "")
        if spec is None or spec.convergence is None:
            return None
        curve = self.reference_curves.get((model, workload or ""))
        if curve:
            points = tuple(ReferencePoint(step=s, loss=loss) for s, loss in curve)
            return spec.convergence.model_copy(update={"reference": points, "reference_model": model})
        if spec.convergence.reference and spec.convergence.reference_model == model:
            return spec.convergence
        return None


@dataclass(frozen=True)
class Snapshot:
    root: str
    files: tuple[str, ...]
    catalog: Catalog
    recipes: tuple[RecipeEntry, ...]
    runs: Mapping[str, RunEntry]  # by the digest in the file name
    documents: Mapping[str, Document]  # recipes and catalog files, for locating findings
    catalog_ok: bool = True
    # What each file's own load produced (entry, its findings), and the catalog's findings: lets the
    # merge base be assembled from the unchanged files' results instead of loading them again.
    loaded: Mapping[str, tuple[Any, tuple[Any, ...]]] = field(default_factory=dict, compare=False, repr=False)
    catalog_findings: tuple[Diagnostic, ...] = field(default=(), compare=False, repr=False)
    # Values derived from this snapshot that several checks and the tiers ask for (memo()).
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def memo(self, key: Any, compute: Callable[[], T]) -> T:
        """compute() once per snapshot: one home for what several checks (and the tiers) derive."""
        if key not in self.derived:
            self.derived[key] = compute()
        value: T = self.derived[key]
        return value

    def valid_recipes(self) -> Iterator[tuple[RecipeEntry, Recipe]]:
        for entry in self.recipes:
            if entry.recipe is not None:
                yield entry, entry.recipe

    def recipe_runs(self) -> Iterator[tuple[RecipeEntry, Recipe, int, RunEntry]]:
        """(entry, recipe, index in its `runs:`, run) for every referenced run file that loaded with
        its metadata; a missing or unreadable one is its own finding (ORV203, ORV1xx)."""
        for entry, recipe in self.valid_recipes():
            for i, digest in enumerate(recipe.run_digests):
                run = self.runs.get(digest)
                if run is not None and run.meta is not None:
                    yield entry, recipe, i, run

    def references(self) -> dict[str, list[RecipeEntry]]:
        """Run digest -> recipes that reference it."""
        out: dict[str, list[RecipeEntry]] = {}
        for entry, recipe in self.valid_recipes():
            for digest in recipe.run_digests:
                out.setdefault(digest, []).append(entry)
        return out


@dataclass(frozen=True)
class Analysis:
    """One load of the registry and its registry-scope findings: what tiers and boards are built from."""

    snapshot: Snapshot
    diagnostics: tuple[Diagnostic, ...]  # every load and registry finding, before waivers and path filters


def strip_samples(data: Any) -> Any:
    if isinstance(data, dict) and "samples" in data:
        return {k: v for k, v in data.items() if k != "samples"}
    return data


def imported_paths(snapshot: Snapshot) -> frozenset[str]:
    """Recipes and run files that `orv import` wrote (they carry a `provenance` block): what
    `orv check` counts by code instead of listing, unless asked (--show-all)."""
    recipes = {e.path for e in snapshot.recipes if isinstance(e.doc.data, dict) and "provenance" in e.doc.data}
    runs = {r.path for r in snapshot.runs.values() if r.meta is not None and r.meta.provenance is not None}
    return frozenset(recipes | runs)


def catalog_names(catalog: Catalog) -> dict[tuple[str, ...], dict[str, str]]:
    """Every name a recipe might write for a catalog entry (its id, display name, aliases), lower-cased,
    to the entry's id, by the recipe field that names it (what `gpu: H100` is answered with)."""
    def table(entries: Mapping[str, Any]) -> dict[str, str]:
        out: dict[str, str] = {}
        for key, spec in entries.items():
            for name in (key, spec.name, *getattr(spec, "aliases", ())):
                out.setdefault(str(name).strip().lower(), key)
        return out

    return {("model",): table(catalog.models), ("hardware", "gpu"): table(catalog.hardware),
            ("workload",): table(catalog.workloads)}
