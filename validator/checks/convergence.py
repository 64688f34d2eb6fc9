"""ORV210: a training run's loss curve checked against its workload's reference curve."""

from __future__ import annotations

from typing import Any, Iterator

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.models import TrainingRecipe
from validator.registry import Catalog, RunFile, Snapshot


def _sample_index(data: Any, step: int | None) -> int | None:
    samples = data.get("samples") if isinstance(data, dict) else None
    if step is None or not isinstance(samples, list):
        return None
    return next((i for i, s in enumerate(samples) if isinstance(s, dict) and s.get("step") == step), None)


@check("ORV210", Severity.WARNING, "loss curve fails the convergence check", scope="run-file")
def loss_curve_follows_reference(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    A training run's loss curve does not pass its workload's convergence check, so the run cannot
    verify a recipe (it stays at tier T1). The check (docs/convergence.md) needs: every logged
    loss finite (a "nan" or "inf" step fails at once); a loss at every step of the workload's
    window; at each window step the loss, smoothed by a trailing mean of `smoothing_steps`
    steps, within the workload's tolerance of the reference curve, above or below; and a loss
    that decreases over the window. The finding names the step and the gap.

    What to do: a throughput figure is only worth publishing if the same run trains correctly.
    Find what changed the numerics (precision, fused kernels, loss scaling, data order, a
    dispatcher or recompute setting), fix it and rerun. A run that stops before the window ends
    must be rerun long enough to cover it. If the workload's reference itself is at fault, fix
    catalog/workloads.yaml in its own pull request. This is a warning, not an error: the run
    stays on record as honest evidence of what happened.
    """
    meta, facts = run.meta, run.facts
    if meta is None or meta.kind != "training" or facts is None or not facts.has_samples:
        return  # summary-only runs cannot be checked; tiers say so
    # The verdict was reached while the samples were loaded (validator/science/throughput.py); None means
    # the workload has no reference to compare with (tiers say so; ORV115 covers unknown ids).
    result = facts.convergence
    if result is None or result.ok:
        return
    if result.reference_problem:
        yield Finding(run.path, f"workload `{meta.workload}` cannot check convergence: {result.reason}",
                      "fix the workload's `convergence` block in catalog/workloads.yaml", at=("workload",))
        return
    index = _sample_index(run.doc.data, result.step)
    at: tuple[Any, ...] = ("samples", index, "loss") if index is not None else ("samples",)
    yield Finding(run.path, f"convergence check against workload `{meta.workload}` fails: {result.reason}",
                  "the run does not train like the reference; fix the numerics and rerun (see `orv explain "
                  "ORV210`)", at=at)


@check("ORV219", Severity.ERROR, "every run of a training recipe fails the convergence check", related_by="r")
def recipe_has_a_converging_run(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A training recipe whose runs with raw samples all fail the convergence check (ORV210 on each).
    A diverged recipe is not a recipe: its throughput was bought by training that does not work,
    and seed 000's protocol lists a recipe only once it passed the convergence check (MLPerf
    rejects a result whose loss curve misses its reference for the same reason).

    Fix the numerics and add a run that converges (`orv add-run`); a failing run beside a
    converging one stays on record as a warning (ORV210). Runs without samples, and workloads
    without a reference curve, are not judged here (docs/convergence.md).
    """
    for entry, recipe in snapshot.valid_recipes():
        if not isinstance(recipe, TrainingRecipe):
            continue
        verdicts = []
        for digest in recipe.run_digests:
            run = snapshot.runs.get(digest)
            facts = run.facts if run is not None and run.meta is not None else None
            if facts is None or not facts.has_samples or facts.convergence is None:
                continue
            if facts.convergence.reference_problem:
                verdicts = []  # the workload's reference is at fault (ORV210 says so), not the runs
                break
            verdicts.append(facts.convergence.ok)
        if verdicts and not any(verdicts):
            yield Finding(entry.path, f"all {len(verdicts)} run(s) of recipe `{recipe.id}` with samples fail the "
                                      "convergence check (ORV210 on each)",
                          "fix the numerics and add a run whose loss curve follows the workload's reference; "
                          "a diverged recipe cannot back a claim", at=("runs",))
