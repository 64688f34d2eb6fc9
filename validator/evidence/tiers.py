"""Evidence -> tier (SPEC §5). Derived from what is on record; a submitter never declares it.

T0 claimed   no run file on record
T1 reported  a referenced run file whose hash is verified, whose tool name and version are pinned,
             and whose model, hardware, software and layout/serving match the recipe
T2 verified  a T1 run with raw samples whose recomputed headline is within 1% of every claimed
             figure it can recompute, the recipe has no physics error (ORV5xx), for inference the
             samples prove the recipe's workload (lengths, prompts, concurrency: workload_fit.py;
             an `unspecified` row reaches at most T1), and for training the loss curve passes the
             convergence check against its model's reference curve for the workload; a run that names the
             checkpoint it served must name one its catalog model lists (`checkpoints`, exact
             repositories with a source): for a model that lists none the checkpoint cannot be checked
             and the run reaches at most T1 (validator/evidence/identity.py, `unchecked_checkpoint`)
Claims come from one run (evidence/agreement.py): the claim is held within 1% to its primary run (the
             first run listed at the point with raw samples, the one `orv add-run` filled the claim
             from); a later run there (a reproduction) is T2 quality when it agrees with the primary
             within 5%, else it is shown as disagreeing (ORV245) and the T2 reason names it.
Sweeps: each run is proved at its own point's concurrency; the tier is the headline claim's, earned only
             by runs at serving.concurrency (a sweep with none there is a claim, T0, with the reason).
T3 reproduced two T2-quality runs, each carrying a valid signature by a measurer registered in
             measurers/allowed_signers (signing.py), by two different measurers, independent (not one
             measurement: science/independence.py; different measured_at), whose headlines agree within 5%,
             on the same workload (each verified run proved the recipe's workload, and training runs
             name theirs: the comparison below also requires the same one).
             Unsigned runs therefore reach at most T2, whatever their `measured_by` says.
Legacy cap (SPEC §2): an entry imported from a source that never recorded versions carries
`provenance` and has no pinned stack — its framework (training) or engine (inference) is missing, or
some component is not pinned (validator.stacks.pins.is_pinned). Such an entry is capped at T0 until a
contributor pins its stack. An imported entry whose stack is pinned (seed 004 rows with an exact
engine build) is not capped: its legacy run files can make it T1, never more (they have no samples).
Quality gate (SPEC §3, inference only): a recipe that serves its model otherwise than the model's quality
reference does (another quant, or a non-full precision where the catalog names no reference; speculative
decoding; a quantized KV cache) needs a `verified` quality run to stay above T2 — without one a T3 recipe
shows T2 with the reason; a recipe whose quality is `below` its model's bound is capped at T1 and left out
of rankings (validator.quality.status, docs/quality.md).
A submitter's own `tier:` field is never read: the schema rejects it (ORV116).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from validator.diagnostics import Diagnostic, Severity
from validator.evidence.agreement import (
    REPRODUCTION_AGREEMENT,
    agreement,
    claim_gaps,
    headline_unmeasured,
    mismatches,
    point_of,
    primary_of,
    workload_problems,
)
from validator.evidence.identity import unchecked_checkpoint
from validator.evidence.signing import signer
from validator.models import UNSPECIFIED, InferenceRecipe, Recipe, TrainingRecipe
from validator.quality import status as quality
from validator.registry.layout import WORKLOADS_PATH
from validator.registry.snapshot import RecipeEntry, RunEntry, Snapshot
from validator.science.independence import MIN_DISTINCT, can_tell_a_copy, same_measurement
from validator.stacks.pins import is_pinned, tool_problems

TIER_MEANINGS = {
    "T0": "claimed — no run file on record",
    "T1": "reported — run file on record, hash verified, tool and version pinned, metadata matches the recipe",
    "T2": "verified — headline recomputed from raw samples within 1% of the claim, physically possible, "
    "samples match the recipe's workload, training loss passes the convergence check against the model's "
    "reference",
    "T3": "reproduced — two independent verified runs signed by two different registered measurers, agreeing within 5%",
}


PRIMARY_COMPONENT = {"training": "framework", "inference": "engine"}
LEGACY_REASON = "legacy entry: stack not stated by the source; pin it to rise above T0"


def stack_unstated(recipe: Recipe) -> bool:
    """The recipe's framework/engine is missing, or some software component is not pinned."""
    if PRIMARY_COMPONENT[recipe.kind] not in recipe.software:
        return True
    return not all(is_pinned(component) for component in recipe.software.values())


def legacy_capped(recipe: Recipe) -> bool:
    """Imported from a source that never recorded versions, and still unpinned: capped at T0."""
    return recipe.provenance is not None and stack_unstated(recipe)


@dataclass(frozen=True)
class TierResult:
    tier: str
    reasons: tuple[str, ...]  # why not higher
    reported_runs: tuple[str, ...] = ()  # digests of T1-quality runs
    verified_runs: tuple[str, ...] = ()  # digests of T2-quality runs
    # validator.quality.status.QualityResult for inference recipes; shown on the board, not part of the tier's identity
    quality: Any = field(default=None, compare=False)
    # why the recipe needs quality evidence for that task (quality.needs_quality; empty: it does not)
    quality_needs: tuple[str, ...] = field(default=(), compare=False)


def _is_reported(snapshot: Snapshot, entry_path: str, recipe: Recipe, run: RunEntry) -> str | None:
    """None if the run gives T1 evidence for the recipe, else why not."""
    if run.meta is None:
        return "run file is unreadable or fails its schema"
    if run.name_digest != run.actual_digest:
        return "run file's hash does not match its name"
    if not run.canonical:
        return "run file is not in canonical form"
    if tool_problems(run.meta.tool):  # the same rule as ORV405, so finding and tier agree
        return "tool version is not pinned"
    if mismatches(snapshot, entry_path, recipe, run):
        return "run metadata disagrees with the recipe"
    return None


def _short(digest: str) -> str:
    return f"sha256:{digest[:12]}…"


def disagreement(snapshot: Snapshot, entry_path: str, recipe: Recipe, run: RunEntry) -> str | None:
    """Why a reproduction (a run after its point's primary) does not agree with the primary within 5%
    (T3's tolerance), or None. The claim is the primary's business (ORV207): evidence/agreement.py."""
    primary = primary_of(snapshot, entry_path, recipe, run)
    if primary is None or primary.name_digest == run.name_digest:
        return None
    gaps = agreement(recipe, primary.facts, run.facts, point_of(run))
    worst = max(gaps, key=lambda g: g.gap, default=None)
    if worst is None or worst.agrees:
        return None
    return (
        f"reproduction {_short(run.name_digest)} disagrees with the primary run {_short(primary.name_digest)} "
        f"on {worst.metric} by {worst.gap:.1%} ({worst.other:,.4g} against {worst.primary:,.4g}; a reproduction "
        f"agrees within {REPRODUCTION_AGREEMENT:.0%})"
    )


def _figures_problem(snapshot: Snapshot, entry_path: str, recipe: Recipe, run: RunEntry) -> str | None:
    """Why the run's figures do not verify: the primary run of its point against the claim (1%), a later run
    (a reproduction) against the primary (5%): claims come from one run (evidence/agreement.py)."""
    point = point_of(run)
    primary = primary_of(snapshot, entry_path, recipe, run) or run
    gaps = claim_gaps(recipe, primary.facts, point)
    if not gaps:
        return "no claimed figure can be recomputed from the samples"
    if not all(g.within_tolerance for g in gaps):
        if primary.name_digest == run.name_digest:
            return "recomputed headline differs from the claim by more than 1%"
        return f"its primary run {_short(primary.name_digest)} differs from the claim by more than 1%"
    return disagreement(snapshot, entry_path, recipe, run)


def _is_verified(snapshot: Snapshot, entry_path: str, recipe: Recipe, run: RunEntry, physics_ok: bool) -> str | None:
    if run.facts is None or not run.facts.has_samples:
        return "run has no raw samples"
    assert run.meta is not None  # a reported run's metadata loaded
    unchecked = unchecked_checkpoint(run.meta.model, snapshot.catalog.models.get(run.meta.model), run.meta.checkpoint)
    if unchecked:
        return unchecked
    why = _figures_problem(snapshot, entry_path, recipe, run)
    if why:
        return why
    if not physics_ok:
        return "recipe fails a physics check (ORV5xx)"
    if isinstance(recipe, InferenceRecipe):
        workload_id = recipe.workload_id
        spec = snapshot.catalog.workloads.get(workload_id)
        if spec is None or not spec.is_inference:
            return (
                f"recipe names no workload a run can prove (`{workload_id}`): name one to rise above T1"
                if workload_id == UNSPECIFIED
                else f"workload `{workload_id}` is not an inference workload"
            )
        misfits = workload_problems(snapshot, entry_path, recipe, run)
        if misfits:
            return f"run's samples do not match workload `{workload_id}` ({misfits[0].code}: {misfits[0].message})"
    if isinstance(recipe, TrainingRecipe):
        why = missing_reference(snapshot, recipe)
        if why:
            return why
        if run.facts.convergence is None or not run.facts.convergence.ok:
            return "loss curve fails the convergence check"
    return None


def reference_command(model: str, workload: str) -> str:
    return f"orv add-run --from megatron LOG --reference-for {model} --workload {workload}"


def missing_reference(snapshot: Snapshot, recipe: TrainingRecipe) -> str | None:
    """Which convergence reference a training recipe waits for (None: its model has one).
    A loss curve is a model's: the reference is per model × workload (docs/convergence.md)."""
    catalog = snapshot.catalog
    workload = catalog.workloads.get(recipe.workload)
    if workload is None or workload.convergence is None:
        return f"workload `{recipe.workload}` has no convergence rule (tolerance, window) in {WORKLOADS_PATH}"
    if catalog.convergence_for(recipe.model, recipe.workload) is None:
        problem = catalog.reference_problems.get((recipe.model, recipe.workload))
        if problem:
            return f"model `{recipe.model}`'s convergence reference for `{recipe.workload}` is unusable: {problem}"
        return (
            f"model `{recipe.model}` has no convergence reference for workload `{recipe.workload}`: "
            f"record one with `{reference_command(recipe.model, recipe.workload)}`"
        )
    return None


def derive_one(snapshot: Snapshot, entry: RecipeEntry, physics_ok: bool) -> TierResult:
    result = _derive_evidence(snapshot, entry, physics_ok)
    if isinstance(entry.recipe, InferenceRecipe):
        return _quality_gate(snapshot, entry.recipe, result)
    return result


def _quality_gate(snapshot: Snapshot, recipe: InferenceRecipe, result: TierResult) -> TierResult:
    """SPEC §5: T3 needs `verified` quality where quality evidence is needed; `below` caps at T1."""

    spec = snapshot.catalog.models.get(recipe.model)
    q = quality.evaluate(snapshot.runs, spec, recipe, lambda digest: signer(snapshot, digest))
    needs = quality.needs_quality(recipe, quality.reference_quant(snapshot.runs, spec, q.task))
    tier, reasons = result.tier, list(result.reasons)
    if q.status == "below":
        reasons.append(f"quality below the bound: {q.why}")
        tier = "T1" if tier in ("T2", "T3") else tier
    elif needs and q.status != "verified" and tier in ("T2", "T3"):
        reasons.append(f"needs verified quality ({'; '.join(needs)}): {q.status}, {q.why}")
        tier = "T2"
    return replace(result, tier=tier, reasons=tuple(dict.fromkeys(reasons)), quality=q, quality_needs=tuple(needs))


def _derive_evidence(snapshot: Snapshot, entry: RecipeEntry, physics_ok: bool) -> TierResult:
    recipe = entry.recipe
    if recipe is None:
        return TierResult("T0", ("recipe fails its schema",))
    # Quality runs (kind: quality) are accuracy evidence, judged by _quality_gate, not throughput runs.
    on_record = [
        snapshot.runs[d] for d in recipe.run_digests if d in snapshot.runs and snapshot.runs[d].quality is None
    ]
    if not on_record:
        return TierResult("T0", ("no run file on record",) + ((LEGACY_REASON,) if legacy_capped(recipe) else ()))
    if legacy_capped(recipe):
        return TierResult("T0", (LEGACY_REASON,))
    unmeasured = headline_unmeasured(recipe, on_record)
    if unmeasured:
        return TierResult("T0", (unmeasured,))
    reasons: list[str] = []
    reported = []
    for run in on_record:
        why = _is_reported(snapshot, entry.path, recipe, run)
        if why:
            reasons.append(why)
        else:
            reported.append(run)
    verified, disagreeing = [], []
    for run in reported:
        why = _is_verified(snapshot, entry.path, recipe, run, physics_ok)
        if why:
            reasons.append(why)
            if why == disagreement(snapshot, entry.path, recipe, run):
                disagreeing.append(why)
        else:
            verified.append(run)
    rep = tuple(r.name_digest for r in reported)
    ver = tuple(r.name_digest for r in verified)
    # A sweep's tier is its headline claim's: only runs at serving.concurrency earn it (the other points'
    # runs are listed for the frontier, each with its own point's tier: boards/build.py).
    at_headline = _at_headline(recipe)
    if not any(at_headline(r) for r in reported):
        return TierResult("T0", tuple(dict.fromkeys(reasons)))
    headline_verified = [r for r in verified if at_headline(r)]
    if not headline_verified:
        return TierResult("T1", tuple(dict.fromkeys(reasons)), rep, ver)
    why_not = _not_reproduced(snapshot, recipe, headline_verified)
    if why_not is None:
        return TierResult("T3", (), rep, ver)
    return TierResult("T2", tuple(dict.fromkeys([*disagreeing, why_not])), rep, ver)


def _at_headline(recipe: Recipe) -> Callable[[RunEntry], bool]:
    """Whether a run measured the recipe's headline point (every run does, outside a sweep)."""
    if isinstance(recipe, InferenceRecipe) and recipe.sweep is not None:
        headline = recipe.serving.concurrency
        return lambda run: point_of(run) == headline
    return lambda run: True


NEEDS_SIGNED = "needs two verified runs signed by different registered measurers (unsigned runs reach at most T2)"
NEEDS_SECOND_SIGNER = "needs a second signed run from another registered measurer"
NOT_INDEPENDENT = "the signed runs of different measurers are one measurement (copied samples or the same measured_at)"
NOT_AGREEING = "the signed runs of different measurers disagree by more than 5%"
TOO_FEW_SAMPLES = (
    f"the signed runs of different measurers have too few samples to tell a copy from a re-measurement "
    f"(each needs {MIN_DISTINCT} distinct timings: more repetitions or requests)"
)


def _not_reproduced(snapshot: Snapshot, recipe: Recipe, verified: list[RunEntry]) -> str | None:
    """None when two verified runs reproduce each other (SPEC §5 T3), else what is missing."""
    signed = [(run, who) for run in verified if (who := signer(snapshot, run.name_digest)) is not None]
    if not signed:
        return NEEDS_SIGNED
    if len({who for _, who in signed}) < 2:
        return NEEDS_SECOND_SIGNER
    independent = too_few = False
    for i, (a, who_a) in enumerate(signed):
        for b, who_b in signed[i + 1 :]:
            assert a.meta is not None and b.meta is not None and a.facts is not None and b.facts is not None
            # a sweep's points, and runs on different workloads, are different measurements
            if who_a == who_b or point_of(a) != point_of(b) or a.meta.workload != b.meta.workload:
                continue
            if a.meta.measured_at == b.meta.measured_at or same_measurement(a.facts.fingerprint, b.facts.fingerprint):
                continue
            if not (can_tell_a_copy(a.facts.fingerprint) and can_tell_a_copy(b.facts.fingerprint)):
                too_few = True
                continue
            independent = True
            gaps = agreement(recipe, a.facts, b.facts, point_of(a))
            if gaps and all(g.agrees for g in gaps):  # every claimed figure, not only the first
                return None
    return NOT_AGREEING if independent else TOO_FEW_SAMPLES if too_few else NOT_INDEPENDENT


class Graded(Protocol):
    """A check (checks.base.Check) or a finding (Diagnostic): both have a code and a severity."""

    @property
    def code(self) -> str: ...

    @property
    def severity(self) -> Severity: ...


def tier_reads(found: Graded) -> bool:
    """What a tier depends on: physics errors (ORV5xx), as a check (registered as an error: a finding
    never rises above its check's severity, checks.collect) or as a finding. Everything else a tier
    needs it recomputes from the snapshot, so `orv boards` runs only these checks (engine.analyse)."""
    return found.code.startswith("ORV5") and found.severity is Severity.ERROR


def derive(snapshot: Snapshot, diagnostics: Iterable[Diagnostic]) -> Mapping[str, TierResult]:
    """Tier of every recipe, by path. Physics errors come from the checks' findings (tier_reads)."""
    physics_failed = {d.path for d in diagnostics if tier_reads(d)}
    return {entry.path: derive_one(snapshot, entry, entry.path not in physics_failed) for entry in snapshot.recipes}
