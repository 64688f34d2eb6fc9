"""What both importers share: the catalog they resolve names against, and input errors."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

from validator.errors import ImportInputError, InputFileError
from validator.load.contributor import SEED_SOURCE, read_named
from validator.models import GpuSpec, ModelSpec, WorkloadSpec
from validator.registry.catalog import NameTable, base_model, present_files, read_catalog
from validator.registry.layout import HARDWARE_PATH, MODELS_PATH, WORKLOADS_PATH

TRAINING_SCHEMA_LINE = "# yaml-language-server: $schema=../../../schema/recipe-training.schema.json"
INFERENCE_SCHEMA_LINE = "# yaml-language-server: $schema=../../../schema/recipe-inference.schema.json"
STARTING_POINTS_SCHEMA_LINE = "# yaml-language-server: $schema=../schema/catalog-starting-points.schema.json"
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_ID = 96


@dataclass(frozen=True)
class CatalogView:
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
    """The registry's catalog, schema-checked; a broken catalog stops the import with its first finding."""
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


def read_source(path: str) -> bytes:
    """The seed file through the bounded reader (docs/limits.md): a regular file within its budget."""
    try:
        return read_named(path, SEED_SOURCE)
    except InputFileError as exc:
        raise ImportInputError(exc.code, path, exc.message, exc.hint, exc.line, exc.col) from None


def decode_source(path: str, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ImportInputError(
            "ORV110", path, f"the source is not UTF-8 (byte {exc.start})", "save the export as UTF-8", line
        ) from None


def round_figure(value: float | int, places: int = 2) -> float | int:
    """A claimed figure at the precision people enter by hand: integers stay, floats to `places`."""
    if isinstance(value, int):
        return value
    quantized = Decimal(repr(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
    return float(quantized)


def model_slug(model_id: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", model_id.lower()).strip("-")


def recipe_path(kind: str, model_id: str, recipe_id: str) -> str:
    return f"recipes/{kind}/{model_id}/{recipe_id}.yaml"
