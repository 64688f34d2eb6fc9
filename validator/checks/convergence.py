"""ORV210, ORV219, ORV244: a training run's loss curve checked against its model's reference curve for the
workload (catalog/models.yaml `convergence_reference`, the workload's tolerance, window and smoothing)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.errors import LoadError
from validator.load.documents import decode_utf8, parse_yaml
from validator.models import Convergence, TrainingRecipe
from validator.pr.change import Change
from validator.registry.layout import MODELS_PATH, WORKLOADS_PATH
from validator.registry.snapshot import Catalog, RunFile, Snapshot


def _sample_index(data: Any, step: int | None) -> int | None:
    samples = data.get("samples") if isinstance(data, dict) else None
    if step is None or not isinstance(samples, list):
        return None
    return next((i for i, s in enumerate(samples) if isinstance(s, dict) and s.get("step") == step), None)


@check("ORV210", Severity.WARNING, "loss curve fails the convergence check", scope="run-file")
def loss_curve_follows_reference(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    A training run's loss curve does not pass the convergence check against its model's reference
    curve for the workload (a loss curve is a model's: catalog/models.yaml `convergence_reference`;
    the workload gives tolerance, window and smoothing), so the run cannot
    verify a recipe (it stays at tier T1). The check (docs/convergence.md) needs: every logged
    loss finite (a "nan" or "inf" step fails at once); a loss at every step of the workload's
    window; at each window step the loss, smoothed by a trailing mean of `smoothing_steps`
    steps, within the workload's tolerance of the reference curve, above or below; and a loss
    that decreases over the window. The finding names the step and the gap.

    What to do: a throughput figure is only worth publishing if the same run trains correctly.
    Find what changed the numerics (precision, fused kernels, loss scaling, data order, a
    dispatcher or recompute setting), fix it and rerun. A run that stops before the window ends
    must be rerun long enough to cover it. If the reference itself is at fault, a maintainer
    replaces it in its own pull request (a reference change needs a waiver, ORV621). This is a warning, not an error: the run
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
        yield Finding(
            run.path,
            f"the reference for `{meta.model}` on `{meta.workload}` cannot check convergence: {result.reason}",
            f"fix the workload's `convergence` block in {WORKLOADS_PATH} or the model's reference run",
            at=("workload",),
        )
        return
    index = _sample_index(run.doc.data, result.step)
    at: tuple[Any, ...] = ("samples", index, "loss") if index is not None else ("samples",)
    yield Finding(
        run.path,
        f"convergence check against `{meta.model}`'s reference on `{meta.workload}` fails: {result.reason}",
        "the run does not train like the reference; fix the numerics and rerun (see `orv explain ORV210`)",
        at=at,
    )


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
        verdicts: list[bool] = []
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
            yield Finding(
                entry.path,
                f"all {len(verdicts)} run(s) of recipe `{recipe.id}` with samples fail the "
                "convergence check (ORV210 on each)",
                "fix the numerics and add a run whose loss curve follows the workload's reference; "
                "a diverged recipe cannot back a claim",
                at=("runs",),
            )


@check("ORV244", Severity.ERROR, "a model's convergence reference cannot be used", per_file=True)
def reference_run_is_usable(snapshot: Snapshot) -> Iterator[Finding]:
    """
    catalog/models.yaml names, per model and training workload, the run whose loss curve is the
    model's convergence reference (`convergence_reference: {WORKLOAD: sha256:…}`). That run file
    must be in the registry, unaltered, a training run of that very model on that workload, with
    at least two logged losses, and it must pass the convergence check against itself under the
    workload's rule: every loss finite (a NaN reference would pass any run, since `nan > tolerance`
    is false), the window covered and the loss decreasing over it. Otherwise no training recipe of
    the model can reach T2. Record the
    reference with `orv add-run --from megatron LOG --reference-for MODEL --workload W`, which
    stores the run and writes the entry (docs/convergence.md).
    """
    for (model, workload), why in sorted(snapshot.catalog.reference_problems.items()):
        yield Finding(
            MODELS_PATH,
            f"`{model}`'s convergence reference for `{workload}`: {why}",
            f"record it with `orv add-run --from megatron LOG --reference-for {model} --workload {workload}`",
            at=("models", model, "convergence_reference", workload),
        )


def _base_yaml(change: Change, path: str) -> dict[str, Any]:
    raw = change.base.read(path)
    try:
        data = parse_yaml(decode_utf8(raw)) if raw is not None else {}
    except LoadError:
        return {}  # the base file did not parse: nothing to compare against
    return data if isinstance(data, dict) else {}


@check("ORV621", Severity.ERROR, "pull request changes a convergence reference or rule", scope="pr")
def convergence_reference_changed(change: Change) -> Iterator[Finding]:
    """
    A model's `convergence_reference` (catalog/models.yaml) is the loss curve every training run
    of that model on the workload is judged against, and a workload's `convergence` block
    (catalog/workloads.yaml) the tolerance, window and smoothing of every judgement: changing or
    removing either moves every training recipe's T2 at once. Such a change needs a maintainer's
    waiver (`orv-waive:ORV621` label, or `--waive ORV621`), like a quality reference (ORV620).
    Adding a rule needs the same waiver: a workload copied under a new id with a looser tolerance
    would otherwise let recipes reach T2 on a band nobody reviewed. Recording a model's first
    reference under an existing rule is not a finding (ORV244 checks that it passes against itself).
    """
    changed = {c.path for c in change.files}
    models, workloads = MODELS_PATH, WORKLOADS_PATH
    after: dict[str, Any] | None  # a model's references, then a workload's rule
    if models in changed:
        base_models = _base_yaml(change, models).get("models")
        head = change.snapshot.catalog.models
        for model_id, before in sorted((base_models if isinstance(base_models, dict) else {}).items()):
            refs = before.get("convergence_reference") if isinstance(before, dict) else None
            after = dict(head[model_id].convergence_reference) if model_id in head else {}
            for workload, ref in sorted((refs if isinstance(refs, dict) else {}).items()):
                if after.get(workload) != ref:
                    verb = "removes" if workload not in after else "changes"
                    yield Finding(
                        models,
                        f"this pull request {verb} {model_id}'s convergence reference for `{workload}`",
                        "a maintainer must waive ORV621 for this pull request (it "
                        "moves the T2 of every training recipe of the model)",
                        at=("models", model_id, "convergence_reference"),
                    )
    if workloads in changed:
        base_workloads = _base_yaml(change, workloads).get("workloads")
        base_w = base_workloads if isinstance(base_workloads, dict) else {}
        head_w = change.snapshot.catalog.workloads
        for wid in sorted(set(base_w) | {w for w, spec in head_w.items() if spec.convergence is not None}):
            before = base_w.get(wid)
            rule = before.get("convergence") if isinstance(before, dict) else None
            spec = head_w.get(wid)
            after = spec.convergence.model_dump(exclude_defaults=True) if spec and spec.convergence else None
            if rule is None and after is None:
                continue
            added = ""
            where: tuple[str, ...] = ("workloads", wid)
            if rule is None:  # a new rule: a workload copied with a looser tolerance would judge more leniently
                verb, where = "adds", ("workloads", wid, "convergence")
                if spec is not None and spec.convergence is not None:
                    added = f" (tolerance {spec.convergence.tolerance:g}, {spec.convergence.tolerance_kind})"
            elif after is None:
                verb = "removes"
            elif after != _rule(rule):
                verb = "changes"
            else:
                continue
            yield Finding(
                workloads,
                f"this pull request {verb} workload `{wid}`'s convergence rule{added}",
                "a maintainer must waive ORV621 for this pull request (a convergence rule decides which training "
                "runs reach T2; a new one is judged like a changed one)",
                at=where,
            )


def _rule(raw: Any) -> Any:
    """The base's `convergence` block as the head's model dumps it (defaults left out), for comparison."""
    try:
        return Convergence.model_validate(raw).model_dump(exclude_defaults=True)
    except ValidationError:  # a base block that no longer validates differs from any head block
        return raw
