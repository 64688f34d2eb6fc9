"""How a run file relates to the recipe it backs: metadata agreement and claim-vs-recomputed gaps.

Shared by the integrity checks (ORV206, ORV207, ORV245) and by tier derivation, so that a finding and a
tier can never disagree about what "matches" means.

Claims come from one run (docs/metrics.md, "Which run a claim is checked against"): each claimed point
(the headline, or a sweep point of `sweep.claimed`) has a **primary run**, the first run listed in the
recipe's `runs:` that measured that point and holds raw samples. `orv add-run` appends runs and fills
an empty claim from the run it adds, so the primary is the run the claim was filled from. The claim is
held to its primary within CLAIM_TOLERANCE (1%, ORV207); every later run at the point is a
reproduction, held to the primary within REPRODUCTION_AGREEMENT (5%, T3's rule): further off it is
shown as disagreeing (ORV245, a warning) and cannot make the recipe T3, never an error.
"""

from __future__ import annotations

from collections.abc import Iterable
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


def claim_point(recipe: Recipe, run: RunEntry) -> int | None:
    """Which claim a run answers to: its sweep point in a sweep (the headline's is serving.concurrency),
    else None (a recipe without a sweep has one claim)."""
    return point_of(run) if isinstance(recipe, InferenceRecipe) and recipe.sweep is not None else None


def proved_concurrency(recipe: InferenceRecipe, run: RunEntry) -> int | None:
    """The concurrency a run's samples are proved against (prompts, requests in flight): its own sweep
    point when it measured one of the sweep's points, else the recipe's serving.concurrency."""
    at = point_of(run)
    if recipe.sweep is not None and at is not None and at in recipe.sweep.concurrency:
        return at
    return recipe.serving.concurrency


def primary_runs(snapshot: Snapshot, recipe_path: str, recipe: Recipe) -> dict[int | None, str]:
    """Each claimed point's primary run (digest): the first run listed that measured the point and holds
    raw samples (quality runs are accuracy evidence, not throughput runs)."""

    def compute() -> dict[int | None, str]:
        out: dict[int | None, str] = {}
        for digest in recipe.run_digests:
            run = snapshot.runs.get(digest)
            if run is None or run.meta is None or run.quality is not None:
                continue
            if run.facts is None or not run.facts.has_samples:
                continue
            out.setdefault(claim_point(recipe, run), digest)
        return out

    return snapshot.memo(("primary-runs", recipe_path), compute)


def primary_of(snapshot: Snapshot, recipe_path: str, recipe: Recipe, run: RunEntry) -> RunEntry | None:
    """The primary run of the point `run` measured (`run` itself when it is the primary)."""
    digest = primary_runs(snapshot, recipe_path, recipe).get(claim_point(recipe, run))
    return snapshot.runs.get(digest) if digest is not None else None


@dataclass(frozen=True)
class Agreement:
    """One claimed metric as two runs at the same point recompute it: the primary's and another's."""

    metric: str
    primary: float
    other: float

    @property
    def gap(self) -> float:
        return relative_gap(self.other, self.primary)  # relative to the primary: the claim's run

    @property
    def agrees(self) -> bool:
        return self.gap <= REPRODUCTION_AGREEMENT


def agreement(recipe: Recipe, primary: RunFacts | None, other: RunFacts | None, point: int | None) -> list[Agreement]:
    """Each claimed metric (at the runs' point) that both runs' raw samples recompute."""
    if primary is None or other is None or not primary.has_samples or not other.has_samples:
        return []
    return [
        Agreement(g.metric, float(primary.headline[g.metric]), g.recomputed)
        for g in claim_gaps(recipe, other, point)
        if g.metric in primary.headline
    ]


def headline_unmeasured(recipe: Recipe, on_record: Iterable[RunEntry]) -> str | None:
    """Why a sweep whose runs all measured other points than its headline is a claim (T0), or None: the
    headline claim would be compared with nothing, and a row at the headline's concurrency must not show
    another point's figures (ORV521)."""
    if not isinstance(recipe, InferenceRecipe) or recipe.sweep is None:
        return None
    points = sorted({p for run in on_record if (p := point_of(run)) is not None})
    if recipe.serving.concurrency in points:
        return None
    measured = ", ".join(str(p) for p in points) or "none stated"
    return (
        f"no run at the headline concurrency {recipe.serving.concurrency}: the headline claim is compared with "
        f"nothing (runs on record measured concurrency {measured}); add a run at {recipe.serving.concurrency}, "
        "or make a measured point the headline (serving.concurrency and `claimed`)"
    )


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
    concurrency = proved_concurrency(recipe, run)  # a sweep's run is proved at its own point (ORV242-243)
    return snapshot.memo(
        ("workload-fit", recipe_path, run.path),
        lambda: workload_misfits(
            facts.lengths, workload, recipe.workload_id, concurrency, synthetic, facts.sample_count
        ),
    )
