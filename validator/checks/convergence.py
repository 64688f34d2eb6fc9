"""ORV210: a training run's loss curve checked against its workload's reference curve."""

from __future__ import annotations

from typing import Any, Iterator

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.registry import Catalog, RunFile


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
