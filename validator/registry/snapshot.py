"""The whole repository as one immutable snapshot: entries, the catalog, indexes built once."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from validator.diagnostics import Diagnostic
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
from validator.science.samples import Columns
from validator.science.throughput import RunFacts

T = TypeVar("T")


def _memo(derived: dict[Any, Any], key: Any, compute: Callable[[], T]) -> T:
    """derived[key], computed once (a frozen dataclass's memo: its dict is the one mutable field)."""
    if key not in derived:
        derived[key] = compute()
    value: T = derived[key]
    return value


@dataclass(frozen=True)
class RecipeEntry:
    path: str
    doc: Document
    recipe: Recipe | None  # None when the file failed the schema
    # relations.content_keys of this entry, when its loader computed them (None: not computed), as
    # relations.held_keys holds them (one string, or a tuple); never an __init__ argument, so
    # dataclasses.replace gives a changed entry no stale keys
    keys: tuple[str, ...] | str | None = field(default=None, init=False, compare=False, repr=False)

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
    # relations.content_keys of this entry, when its loader computed them (None: not computed), as
    # relations.held_keys holds them (one string, or a tuple); never an __init__ argument, so
    # dataclasses.replace gives a changed entry no stale keys
    keys: tuple[str, ...] | str | None = field(default=None, init=False, compare=False, repr=False)

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
    # the samples' columns the loader decoded once (schema fast path, facts), for checks to read again
    columns: Columns | None = field(default=None, compare=False, repr=False)
    # Values derived from this file that several run-file checks ask for (memo()).
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def memo(self, key: Any, compute: Callable[[], T]) -> T:
        """compute() once per run file: one pass for what several run-file checks derive."""
        return _memo(self.derived, key, compute)


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
    # Pull-request mode: the changed files. A pairwise check (relations.PAIRWISE: ORV304) judges only the
    # pairs holding one; any other pair is judged alike on both sides of the change, so it adds nothing.
    pairs_with: frozenset[str] | None = field(default=None, compare=False, repr=False)
    # Processes a registry check may spread its work over (ORV304's pairs): the command's --jobs.
    jobs: int = field(default=1, compare=False, repr=False)
    # A merge whose ORV304 judging was split over runners: the pairs they found one measurement (paths and how),
    # already checked against this snapshot's pairs (engine/judging.py); None: ORV304 judges its pairs itself.
    judged: tuple[tuple[str, str, str], ...] | None = field(default=None, compare=False, repr=False)
    # Values derived from this snapshot that several checks and the tiers ask for (memo()).
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def memo(self, key: Any, compute: Callable[[], T]) -> T:
        """compute() once per snapshot: one home for what several checks (and the tiers) derive."""
        return _memo(self.derived, key, compute)

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
