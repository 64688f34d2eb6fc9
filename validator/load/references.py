"""The models' convergence reference curves (catalog/models.yaml `convergence_reference`), read once.

A loss curve belongs to a model: the catalog names, per model and training workload, the run file
whose (step, loss) samples are the reference (docs/convergence.md). The run file is content-addressed,
so the catalog's bytes fix the curve; it is read here, before the runs are loaded, and every training
run of that model on that workload is checked against it while its own samples are in memory.

A reference must pass the convergence check against itself (docs/convergence.md): one whose losses
are not finite (`nan > tolerance` is False, so a NaN reference would pass every run), that does not
cover the workload's window or does not decrease over it cannot judge anyone (ORV244).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import orjson

from validator.hashing import content_address, run_path
from validator.models import ReferencePoint, WorkloadSpec
from validator.registry.snapshot import Catalog
from validator.science.loss_curve import check_convergence
from validator.science.throughput import skipped_steps, training_losses

MAX_REFERENCE_BYTES = 256 * 1024 * 1024  # the loader's own limit for a run file is the same order


def _curve(
    root: str, catalog: Catalog, model: str, workload: str, ref: str
) -> tuple[tuple[tuple[int, float], ...], str | None]:
    """(curve, None) or ((), why the named run cannot be the reference)."""
    digest = ref.split(":", 1)[-1]
    rel = run_path(digest)
    full = os.path.join(root, rel)
    if not os.path.isfile(full) or os.path.islink(full):
        return (), f"{rel} is not in the registry"
    try:
        with open(full, "rb") as fh:
            raw = fh.read(MAX_REFERENCE_BYTES + 1)
        data: Any = orjson.loads(raw)
    except (OSError, ValueError):
        return (), f"{rel} cannot be read as JSON"
    if len(raw) > MAX_REFERENCE_BYTES or content_address(raw) != digest:
        return (), f"{rel} is not the file its name says (its SHA-256 differs)"
    if not isinstance(data, dict) or data.get("kind") != "training":
        return (), f"{rel} is not a training run"
    if data.get("model") != model or data.get("workload") != workload:
        return (), (
            f"{rel} was measured on model `{data.get('model')}`, workload `{data.get('workload')}`, "
            f"not `{model}` on `{workload}`"
        )
    samples = data.get("samples")
    why = unusable_as_reference(catalog.workloads, workload, samples)
    if why:
        return (), f"{rel}: {why}"
    return tuple((int(s), float(v)) for s, v in training_losses(samples or [])), None


def _fails_against_itself(
    workloads: Mapping[str, WorkloadSpec], workload: str, curve: tuple[tuple[int, float], ...], skipped: frozenset[int]
) -> str | None:
    """Why the reference run, judged as any run of the model is judged against it, fails; None when it passes
    (or the workload has no rule yet: nothing is judged against the curve then)."""
    spec = workloads.get(workload)
    if spec is None or spec.convergence is None:
        return None
    points = tuple(ReferencePoint(step=step, loss=loss) for step, loss in curve)
    result = check_convergence(curve, spec.convergence.model_copy(update={"reference": points}), skipped)
    return None if result.ok else result.reason


def unusable_as_reference(workloads: Mapping[str, WorkloadSpec], workload: str, samples: Any) -> str | None:
    """Why a training run's samples cannot be a convergence reference for `workload` (the rule ORV244 applies
    to a named run): `orv add-run --reference-for` asks before it stores the run or names it."""
    try:
        curve = tuple((int(s), float(v)) for s, v in training_losses(samples or []))
        skipped = skipped_steps(samples or [])
    except (TypeError, KeyError, ValueError):
        return "it has no readable (step, loss) samples"
    if len(curve) < 2:
        return "it has fewer than two logged losses"
    why = _fails_against_itself(workloads, workload, curve, skipped)
    return f"it fails the convergence check against itself: {why}" if why else None


def with_reference_curves(root: str, catalog: Catalog) -> Catalog:
    """The catalog with every model's named reference curve read (and why one could not be)."""
    curves: dict[tuple[str, str], tuple[tuple[int, float], ...]] = {}
    problems: dict[tuple[str, str], str] = {}
    for model, spec in sorted(catalog.models.items()):
        for workload, ref in sorted(spec.convergence_reference.items()):
            curve, why = _curve(root, catalog, model, workload, ref)
            if why:
                problems[(model, workload)] = why
            else:
                curves[(model, workload)] = curve
    if not curves and not problems:
        return catalog
    return replace(catalog, reference_curves=curves, reference_problems=problems)
