"""How a run file relates to the recipe it backs: metadata agreement and claim-vs-recomputed gaps.

Shared by the integrity checks (ORV206, ORV207) and by tier derivation, so that a finding and a
tier can never disagree about what "matches" means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from validator.models import InferenceRecipe, Recipe, RunMeta, TrainingRecipe
from validator.registry.snapshot import RunEntry, Snapshot
from validator.science.throughput import RunFacts, relative_gap
from validator.science.workload_fit import Misfit, workload_misfits

CLAIM_TOLERANCE = 0.01  # SPEC §5 T2: recomputed headline within 1% of the claim
REPRODUCTION_AGREEMENT = 0.05  # SPEC §5 T3: two measurers within 5%

TRAINING_METRICS = ("tokens_per_s_per_gpu",)
INFERENCE_METRICS = ("decode_tok_s", "prefill_tok_s", "ttft_ms")


@dataclass(frozen=True)
class Mismatch:
    field: str  # dotted path in the recipe
    recipe_value: Any
    run_value: Any


@dataclass(frozen=True)
class ClaimGap:
    metric: str
    claimed: float
    recomputed: float

    @property
    def gap(self) -> float:
        return relative_gap(self.claimed, self.recomputed)

    @property
    def within_tolerance(self) -> bool:
        return self.gap <= CLAIM_TOLERANCE


def _software_view(software: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {role: c.model_dump(exclude_none=True, exclude_defaults=True) for role, c in sorted(software.items())}


def _compare_fields(out: list[Mismatch], prefix: str, recipe_side: Any, run_side: Any) -> None:
    """One Mismatch per differing key (recursing into mappings), so a finding names the exact field."""
    if isinstance(recipe_side, dict) and isinstance(run_side, dict):
        for key in sorted(set(recipe_side) | set(run_side)):
            _compare_fields(out, f"{prefix}.{key}", recipe_side.get(key), run_side.get(key))
    elif recipe_side != run_side:
        out.append(Mismatch(prefix, recipe_side, run_side))


def mismatches(snapshot: Snapshot, recipe_path: str, recipe: Recipe, run: RunEntry) -> list[Mismatch]:
    """Fields where the run's metadata disagrees with the recipe (empty list: they agree).

    ORV206, ORV207 and the tiers ask about the same (recipe, run) pairs: computed once per snapshot.
    """
    if run.meta is None:
        return []
    meta = run.meta
    return snapshot.memo(("mismatches", recipe_path, run.path), lambda: metadata_mismatches(recipe, meta))


def metadata_mismatches(recipe: Recipe, run: RunMeta) -> list[Mismatch]:
    """Fields where the run's metadata disagrees with the recipe (empty list: they agree).

    Each entry names one leaf field (`hardware.count`, `layout.dp`, `software.framework.version`),
    or a whole block when one side lacks it (`serving`, `software.runtime`).
    """
    out: list[Mismatch] = []
    _compare_fields(out, "kind", recipe.kind, run.kind)
    _compare_fields(out, "model", recipe.model, run.model)
    if _may_differ(recipe.hardware, run.hardware):
        _compare_fields(out, "hardware", recipe.hardware.model_dump(), run.hardware.model_dump())
    if _may_differ(recipe.software, run.software):
        _compare_fields(out, "software", _software_view(dict(recipe.software)), _software_view(dict(run.software)))
    if isinstance(recipe, TrainingRecipe):
        _compare_fields(out, "workload", recipe.workload, run.workload)
        if _may_differ(recipe.layout, run.layout):
            _compare_fields(out, "layout", recipe.layout.model_dump(), run.layout.model_dump() if run.layout else None)
    elif isinstance(recipe, InferenceRecipe):
        _compare_fields(out, "quant", recipe.quant, run.quant)
        serving = recipe.serving
        at = run.serving.concurrency if run.serving else None
        if recipe.sweep is not None and at != serving.concurrency:
            if at not in recipe.sweep.concurrency:
                out.append(Mismatch("sweep.concurrency", list(recipe.sweep.concurrency), at))
            serving = serving.model_copy(update={"concurrency": at})  # the rest of serving still compares
        if _may_differ(serving, run.serving):
            _compare_fields(
                out,
                "serving",
                serving.model_dump(exclude_none=True),
                run.serving.model_dump(exclude_none=True) if run.serving else None,
            )
    return out


def _may_differ(recipe_side: Any, run_side: Any) -> bool:
    """False only when both sides are equal models of one class (or dicts of them): their dumps are
    then equal too, so the usual agreeing pair skips model_dump (~60% of this function's time)."""
    return type(recipe_side) is not type(run_side) or recipe_side != run_side


def point_of(run: RunEntry) -> int | None:
    """The concurrency an inference run measured (the sweep point it backs), if it states one."""
    return run.meta.serving.concurrency if run.meta is not None and run.meta.serving is not None else None


def claim_gaps(recipe: Recipe, facts: RunFacts | None, point: int | None = None) -> list[ClaimGap]:
    """Each claimed headline the run's raw samples let us recompute, with both figures.

    `point`: the concurrency the run measured. In a sweep, a run at another point than the
    headline's (serving.concurrency) is held to that point's claim (sweep.claimed); a point with no
    claim has nothing to compare.
    """
    if facts is None or not facts.has_samples:
        return []
    metrics = TRAINING_METRICS if recipe.kind == "training" else INFERENCE_METRICS
    claim: Any = recipe.claimed
    if (
        isinstance(recipe, InferenceRecipe)
        and recipe.sweep is not None
        and point is not None
        and point != recipe.serving.concurrency
    ):
        claim = recipe.sweep.claim_at(point)
        if claim is None:
            return []
    claimed = claim.model_dump(exclude_none=True, exclude={"concurrency"})
    return [
        ClaimGap(m, float(claimed[m]), float(facts.headline[m]))
        for m in metrics
        if m in claimed and m in facts.headline
    ]


def workload_problems(snapshot: Snapshot, recipe_path: str, recipe: Recipe, run: RunEntry) -> list[Misfit]:
    """Why an inference run's samples do not prove the recipe's workload (ORV241-243, and T2).

    Empty for training recipes (their workload is checked by the adapter and the convergence check),
    for runs without samples (they cannot rise above T1 anyway) and for the `unspecified` workload."""
    if not isinstance(recipe, InferenceRecipe) or run.facts is None or not run.facts.has_samples:
        return []
    workload = snapshot.catalog.workloads.get(recipe.workload_id)
    if workload is None or not workload.is_inference:
        return []  # unknown (ORV115), unspecified or of another kind (ORV240)
    facts, synthetic = run.facts, run.meta.synthetic if run.meta is not None else None
    return snapshot.memo(
        ("workload-fit", recipe_path, run.path),
        lambda: workload_misfits(
            facts.lengths, workload, recipe.workload_id, recipe.serving.concurrency, synthetic, facts.sample_count
        ),
    )
