"""The catalog's one reader (catalog/*.yaml -> typed entries) and one resolver (a written name -> catalog id)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from validator.errors import ImportInputError, LoadError
from validator.load import schema as schemas
from validator.load.documents import Document, load_yaml_document
from validator.models import GpuSpec, ModelSpec, StartingPoint, WorkloadSpec
from validator.registry.layout import (
    CATALOG_FILES,
    HARDWARE_PATH,
    MODELS_PATH,
    STARTING_POINTS_PATH,
    WORKLOADS_PATH,
)
from validator.registry.snapshot import Catalog

# catalog file -> its top-level key and the typed model of one entry
TABLES: dict[str, tuple[str, Any]] = {
    HARDWARE_PATH: ("hardware", GpuSpec),
    MODELS_PATH: ("models", ModelSpec),
    WORKLOADS_PATH: ("workloads", WorkloadSpec),
}
REQUIRED = (HARDWARE_PATH, MODELS_PATH, WORKLOADS_PATH)  # starting points are optional (written by the import)

try:  # libyaml's C loader when present (it is in the Action's lock); the pure-Python one otherwise
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


# ---- names -> ids: one folding for every caller (recipes' hints, `orv new`, the importers)


def fold(name: str) -> str:
    """A name as the resolver compares it: case ignored, runs of spaces and `_` read as `-`."""
    return re.sub(r"[\s_]+", "-", name.strip().lower())


class NameTable:
    """Every name of a table's entries (id, display name, aliases), folded, to the entry's id. The first
    entry in the table's order (ids sorted) keeps a name two entries share."""

    def __init__(self, entries: Mapping[str, Any]) -> None:
        self.ids: dict[str, str] = {}
        for key, spec in entries.items():
            for name in (key, spec.name, *getattr(spec, "aliases", ())):
                self.ids.setdefault(fold(str(name)), key)

    def resolve(self, name: str) -> str | None:
        """The catalog id `name` stands for, or None."""
        return self.ids.get(fold(name))


def catalog_names(catalog: Catalog) -> dict[tuple[str, ...], NameTable]:
    """The name tables by the recipe field that names a catalog entry (what `gpu: H100` is answered with)."""
    return {
        ("model",): NameTable(catalog.models),
        ("hardware", "gpu"): NameTable(catalog.hardware),
        ("workload",): NameTable(catalog.workloads),
    }


def base_model(models: Mapping[str, ModelSpec], checkpoint: str) -> str | None:
    """The catalog model a checkpoint derives from: the longest id, name or alias it is or starts with
    (then `-`), case ignored."""
    wanted = checkpoint.lower()
    best: tuple[int, str] | None = None
    for mid, spec in models.items():
        for name in (mid, spec.name, *spec.aliases):
            n = name.lower()
            if wanted == n or wanted.startswith(n + "-"):
                if best is None or len(n) > best[0]:
                    best = (len(n), mid)
    return best[1] if best else None


# ---- files -> typed catalog


@dataclass(frozen=True)
class FileProblem:
    """Why a catalog file gave no data: missing (no error, no issues), unreadable, or against its schema."""

    path: str
    error: LoadError | None = None
    doc: Document | None = None
    issues: tuple[schemas.SchemaIssue, ...] = ()


@dataclass(frozen=True)
class UnusableEntry:
    """A schema-valid entry its typed model refuses (ORV109 where `orv check` reports it)."""

    path: str
    at: tuple[Any, ...]
    reason: str

    @property
    def message(self) -> str:
        return f"`{'.'.join(map(str, self.at))}` cannot be used: {self.reason}"

    hint = "write a plain number or text within the documented range"


@dataclass(frozen=True)
class CatalogRead:
    catalog: Catalog
    documents: dict[str, Document]  # every catalog file that parsed, for locating findings
    problems: tuple[FileProblem, ...]  # in CATALOG_FILES order
    refusals: tuple[UnusableEntry, ...]

    @property
    def ok(self) -> bool:
        return not self.problems and not self.refusals


def read_catalog(root: str, present: Iterable[str], wanted: Iterable[str] = tuple(CATALOG_FILES)) -> CatalogRead:
    """The `wanted` catalog files through the loader `orv check` uses (limits, YAML rules, schema), each
    read only when `present` (repository-relative paths) holds it; an entry the typed model refuses is
    left out and named, never raised."""
    files, wanted = set(present), set(wanted)
    parts: dict[str, Any] = {}
    documents: dict[str, Document] = {}
    problems: list[FileProblem] = []
    for rel, kind in CATALOG_FILES.items():
        if rel not in wanted:
            continue
        if rel not in files:
            if rel in REQUIRED:
                problems.append(FileProblem(rel))
            continue
        try:
            doc = load_yaml_document(root, rel)
        except LoadError as exc:
            problems.append(FileProblem(rel, error=exc))
            continue
        documents[rel] = doc
        # the compiled validator first (no jsonschema import, ~0.1 s of the gate's start-up); only an
        # invalid file needs jsonschema to word its findings (tests/unit/test_fast_paths.py: they agree)
        issues = [] if schemas.is_valid(kind, doc.data) else schemas.validate(kind, doc.data)
        if issues:
            problems.append(FileProblem(rel, doc=doc, issues=tuple(issues)))
            continue
        parts[rel] = doc.data
    refusals: list[UnusableEntry] = []

    def typed(rel: str, at: tuple[Any, ...], model: Any, value: Any) -> Any:
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            error = exc.errors()[0]
            refusals.append(UnusableEntry(rel, (*at, *error["loc"]), error["msg"]))
            return None

    def build(rel: str) -> dict[str, Any]:
        key, model = TABLES[rel]
        raw = parts.get(rel, {}).get(key, {}) or {}
        built = {k: typed(rel, (key, k), model, v) for k, v in sorted(raw.items())}
        return {k: v for k, v in built.items() if v is not None}

    points = parts.get(STARTING_POINTS_PATH, {}).get("starting_points", [])
    catalog = Catalog(
        hardware=build(HARDWARE_PATH),
        models=build(MODELS_PATH),
        model_order=tuple((parts.get(MODELS_PATH, {}).get("models", {}) or {}).keys()),
        workloads=build(WORKLOADS_PATH),
        starting_points=tuple(
            p
            for p in (
                typed(STARTING_POINTS_PATH, ("starting_points", i), StartingPoint, v) for i, v in enumerate(points)
            )
            if p is not None
        ),
    )
    return CatalogRead(catalog, documents, tuple(problems), tuple(refusals))


def present_files(root: str, wanted: Iterable[str] = tuple(CATALOG_FILES)) -> set[str]:
    """The catalog files of `wanted` that exist as files under root (for a reader outside `orv check`)."""
    return {rel for rel in wanted if os.path.isfile(os.path.join(root, rel))}


# ---- best-effort reads: a broken catalog is `orv check`'s to report, these callers only lack the data


def catalog_entry(root: str, rel: str, entry_id: str) -> Any:
    """One typed entry of a catalog file read without the schema (add-run, reproduce), or None when the
    file, the entry or its typed form is missing or broken."""
    key, model = TABLES[rel]
    try:
        doc = load_yaml_document(root, rel)
        raw = (doc.data.get(key) or {}).get(entry_id)
        return model.model_validate(raw) if raw is not None else None
    except (LoadError, ValidationError, AttributeError, OSError):
        return None


def typed_entries(root: str, rel: str) -> dict[str, Any]:
    """Every entry of a catalog file that types, read without the schema (add-run's identity gate matches
    a tool's device name against every GPU's); entries that do not type are left out, {} when unreadable."""
    _, model = TABLES[rel]
    out: dict[str, Any] = {}
    for entry_id, raw in raw_entries(root, rel).items():
        try:
            out[str(entry_id)] = model.model_validate(raw)
        except (ValidationError, TypeError):
            continue
    return out


def raw_entries(root: str, rel: str) -> dict[str, Any]:
    """A catalog file's entries as written (no schema, not typed); {} when it cannot be read."""
    try:
        data = load_yaml_document(root, rel).data
    except (LoadError, OSError):
        return {}
    entries = data.get(TABLES[rel][0]) if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else {}


def plain_data(root: str, rel: str) -> Any:
    """A catalog file parsed by libyaml alone (no limits or YAML rules: the site's fast path), None when
    it cannot be read."""
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            return yaml.load(fh, Loader=_Loader)  # noqa: S506 - a safe loader
    except (OSError, yaml.YAMLError):
        return None


def file_bytes(root: str, rel: str) -> bytes | None:
    """A catalog file's bytes (what the cache key hashes), None when it is not a file."""
    path = os.path.join(root, rel)
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as fh:
        return fh.read()


@dataclass(frozen=True)
class CatalogView:
    """The catalog's entries with the one name resolver: what `orv new` and the importers resolve names by."""

    hardware: Mapping[str, GpuSpec]
    models: Mapping[str, ModelSpec]
    workloads: Mapping[str, WorkloadSpec]

    def gpu_id(self, name: str) -> str | None:
        return NameTable(self.hardware).resolve(name)

    def model_id(self, name: str) -> str | None:
        return NameTable(self.models).resolve(name)

    def base_model(self, checkpoint: str) -> str | None:
        """The catalog model a checkpoint derives from (registry/catalog.py)."""
        return base_model(self.models, checkpoint)


IMPORTED_FILES = (HARDWARE_PATH, MODELS_PATH, WORKLOADS_PATH)  # starting points are written by the import, not read


def load_catalog(root: str) -> CatalogView:
    """The registry's catalog for a command that writes recipes from it (`orv import`, `orv new`):
    schema-checked, and a broken catalog stops the command with its first finding (`orv check` lists all)."""
    read = read_catalog(root, present_files(root, IMPORTED_FILES), IMPORTED_FILES)
    for problem in read.problems:
        rel = problem.path
        if problem.error is not None:
            exc = problem.error
            raise ImportInputError(exc.code, rel, exc.message, exc.hint, exc.line, exc.col)
        if problem.doc is not None:
            issue = problem.issues[0]
            line, col = problem.doc.locate(issue.path)
            raise ImportInputError(
                issue.code, rel, issue.message, f"{issue.hint}; `orv check` lists every catalog finding", line, col
            )
        raise ImportInputError(
            "ORV108", rel, f"catalog file {rel} is missing", "run the import from the registry root (or pass --root)"
        )
    for refusal in read.refusals:
        line, col = read.documents[refusal.path].locate(refusal.at)
        raise ImportInputError("ORV109", refusal.path, refusal.message, refusal.hint, line, col)
    cat = read.catalog
    return CatalogView(hardware=cat.hardware, models=cat.models, workloads=cat.workloads)
