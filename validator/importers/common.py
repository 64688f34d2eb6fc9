"""What both importers share: the catalog they resolve names against, and input errors."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from validator.errors import ImportInputError, InputFileError, LoadError
from validator.load import schema as schemas
from validator.load.contributor import SEED_SOURCE, read_named
from validator.load.documents import load_yaml_document
from validator.models import GpuSpec, ModelSpec, WorkloadSpec
from validator.registry.layout import CATALOG_FILES

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
        return _resolve(name, {gid: (gid, spec.name, *spec.aliases) for gid, spec in self.hardware.items()})

    def model_id(self, name: str) -> str | None:
        return _resolve(name, {mid: (mid, spec.name, *spec.aliases) for mid, spec in self.models.items()})

    def base_model(self, checkpoint: str) -> str | None:
        """The catalog model a checkpoint derives from: the longest name or alias it starts with."""
        wanted = checkpoint.lower()
        best: tuple[int, str] | None = None
        for mid, spec in self.models.items():
            for name in (mid, spec.name, *spec.aliases):
                n = name.lower()
                if wanted == n or wanted.startswith(n + "-"):
                    if best is None or len(n) > best[0]:
                        best = (len(n), mid)
        return best[1] if best else None


def _resolve(name: str, table: Mapping[str, tuple[str, ...]]) -> str | None:
    wanted = _fold(name)
    for key, names in table.items():
        if any(_fold(n) == wanted for n in names):
            return key
    return None


def _fold(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def load_catalog(root: str) -> CatalogView:
    """The registry's catalog, schema-checked; a broken catalog stops the import with its finding."""
    parts: dict[str, Any] = {}
    for rel, kind in CATALOG_FILES.items():
        if kind == "catalog-starting-points":
            continue  # written by the leaderboard import, not read by it
        if not os.path.isfile(os.path.join(root, rel)):
            raise ImportInputError("ORV108", rel, f"catalog file {rel} is missing",
                                   "run the import from the registry root (or pass --root)")
        try:
            doc = load_yaml_document(root, rel)
        except LoadError as exc:
            raise ImportInputError(exc.code, rel, exc.message, exc.hint, exc.line, exc.col) from None
        issues = schemas.validate(kind, doc.data)
        if issues:
            line, col = doc.locate(issues[0].path)
            raise ImportInputError(issues[0].code, rel, issues[0].message,
                                   f"{issues[0].hint}; `orv check` lists every catalog finding", line, col)
        parts[kind] = doc.data
    return CatalogView(
        hardware={k: GpuSpec.model_validate(v) for k, v in sorted(parts["catalog-hardware"]["hardware"].items())},
        models={k: ModelSpec.model_validate(v) for k, v in sorted(parts["catalog-models"]["models"].items())},
        workloads={k: WorkloadSpec.model_validate(v)
                   for k, v in sorted(parts["catalog-workloads"]["workloads"].items())},
    )


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
        line = raw[:exc.start].count(b"\n") + 1
        raise ImportInputError("ORV110", path, f"the source is not UTF-8 (byte {exc.start})",
                               "save the export as UTF-8", line) from None


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
