"""Snapshot + tiers -> the tier boards document (SPEC §7). Pure: no I/O, no clock; the caller writes.

Every figure is rounded to a fixed number of decimals (figures.ROUNDING, documented in docs/boards.md) so
that the same registry gives the same bytes on any machine; rows are sorted by stable keys; one row
per recipe id, so no row can appear twice. `updated_at` and `source_commit` come from git through
the caller (GitStamp), never from the clock.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from validator.boards.figures import ROUNDING, fixed
from validator.boards.frontier import frontiers
from validator.evidence.agreement import point_of, primary_runs
from validator.evidence.tiers import TIER_MEANINGS, TierResult, missing_reference
from validator.models import Component, InferenceRecipe, Recipe, RunMeta, TrainingRecipe
from validator.quality.status import DEFAULT_TASK, QualityResult
from validator.registry.snapshot import Catalog, RecipeEntry, RunEntry, Snapshot
from validator.science.physics import cost_per_1m, implied_mfu

BOARDS_SCHEMA_ID = "https://openrecipes.dev/schema/boards.schema.json"

_FIGURE_KIND = {
    "decode_tok_s": "tok_s",
    "prefill_tok_s": "tok_s",
    "output_tok_s": "tok_s",
    "tokens_per_s_per_gpu": "tok_s",
    "ttft_ms": "ms",
    "tpot_ms": "ms",
    "final_loss": "loss",
}
METRICS_REF = "docs/metrics.md"  # where figures recomputed from raw samples are defined


@dataclass(frozen=True)
class GitStamp:
    """When the data last changed: the newest commit touching recipes/, runs/ or catalog/ (None outside git)."""

    updated_at: str | None = None  # that commit's committer time, UTC ISO 8601
    source_commit: str | None = None  # its full SHA


# --------------------------------------------------------------------------- shared pieces


def hardware_display(gpu: str, count: int) -> str:
    """Seed 004's display form, with the count kept apart from the name: `cmp-170hx-x2`, `rtx-3090`."""
    return gpu if count == 1 else f"{gpu}-x{count}"


def component_display(component: Component | None) -> str | None:
    """A short display string built from the structured pins: `0.30.0 @ 1fe3a1571abc + 2 patches`."""
    if component is None:
        return None
    parts: list[str] = []
    if component.version:
        parts.append(component.version)
    if component.commit:
        where = f"{component.repository} @ " if component.repository else "@ "
        parts.append(where + component.commit[:12])
    if component.image:
        name, _, digest = component.image.partition("@sha256:")
        parts.append(f"image {name}@sha256:{digest[:12]}" if digest else f"image {component.image}")
    if component.patches:
        count = len(component.patches)
        parts.append(f"+ {count} patch{'es' if count != 1 else ''}")
    return " ".join(parts) or None


def _unique_by_id(entries: Iterable[tuple[RecipeEntry, Recipe]]) -> list[tuple[RecipeEntry, Recipe]]:
    """One entry per (kind, id): the first by path. Two files sharing an id are ORV3xx's business;
    the boards never show either twice."""
    seen: dict[tuple[str, str], tuple[RecipeEntry, Recipe]] = {}
    for entry, recipe in sorted(entries, key=lambda pair: pair[0].path):
        seen.setdefault((recipe.kind, recipe.id), (entry, recipe))
    return list(seen.values())


def _model_name(catalog: Catalog, model: str) -> str:
    spec = catalog.models.get(model)
    return spec.name if spec else model


def _tier_of(tiers: Mapping[str, TierResult], entry: RecipeEntry) -> TierResult:
    return tiers.get(entry.path) or TierResult("T0", ("no tier derived",))


# --------------------------------------------------------------------------- training


@dataclass(frozen=True)
class _TrainingItem:
    entry: RecipeEntry
    recipe: TrainingRecipe
    tier: TierResult
    tok_s: float  # the rounded figure shown: ranks, cost and MFU follow what the board shows
    claimed: float  # the recipe's claim, rounded
    run: RunEntry | None  # the run whose figure is shown (T1+), as an inference row's (_primary_run)
    recomputed: bool  # the shown figure is recomputed from the run's raw samples (docs/metrics.md)

    @property
    def pair(self) -> tuple[str, str, str]:
        return (self.recipe.model, self.recipe.hardware.gpu, self.recipe.workload)


def _training_items(snapshot: Snapshot, tiers: Mapping[str, TierResult]) -> list[_TrainingItem]:
    found = [(e, r) for e, r in snapshot.valid_recipes() if isinstance(r, TrainingRecipe)]
    items = []
    for entry, recipe in _unique_by_id(found):
        assert isinstance(recipe, TrainingRecipe)
        tier = _tier_of(tiers, entry)
        claimed = fixed(recipe.claimed.tokens_per_s_per_gpu, "tok_s") or 0.0
        run = _primary_run(snapshot, entry, recipe, tier) if tier.tier != "T0" else None
        figures, recomputed = run_headline(run) if run is not None else ({}, False)
        shown = figures.get("tokens_per_s_per_gpu")
        if shown is None:  # no run behind the tier, or one without the figure: the claim, as on a T0 row
            run, recomputed = None, False
        items.append(_TrainingItem(entry, recipe, tier, claimed if shown is None else shown, claimed, run, recomputed))
    return items


def _fastest_first(items: Iterable[_TrainingItem]) -> list[_TrainingItem]:
    return sorted(items, key=lambda i: (-i.tok_s, i.recipe.id))


def _ranks(items: Sequence[_TrainingItem]) -> dict[str, tuple[int, int]]:
    """Recipe id -> (rank, of n) within its model-GPU(-workload) pair; equal figures share a rank."""
    pairs: dict[tuple[str, str, str], list[_TrainingItem]] = {}
    for item in items:
        pairs.setdefault(item.pair, []).append(item)
    out: dict[str, tuple[int, int]] = {}
    for members in pairs.values():
        ordered = _fastest_first(members)
        for item, rank in zip(ordered, competition_ranks([item.tok_s for item in ordered])):
            out[item.recipe.id] = (rank, len(ordered))
    return out


def competition_ranks(figures: Sequence[float | None]) -> list[int]:
    """Each figure's rank, higher first: 1 + how many figures are strictly greater, so equal figures
    share a rank ("1224"); None ranks after every figure. Sorted once and bisected: O(n log n), where
    counting per row was quadratic in the size of a model-GPU pair."""
    known = sorted(f for f in figures if f is not None)
    return [len(known) + 1 if f is None else 1 + len(known) - bisect.bisect_right(known, f) for f in figures]


def _training_row(item: _TrainingItem, catalog: Catalog, rank: tuple[int, int]) -> dict[str, Any]:
    recipe = item.recipe
    gpu = catalog.hardware.get(recipe.hardware.gpu)
    model = catalog.models.get(recipe.model)
    framework = recipe.software.get("framework")
    return {
        "recipe": recipe.id,
        "path": item.entry.path,
        "model": recipe.model,
        "model_name": _model_name(catalog, recipe.model),
        "gpu": recipe.hardware.gpu,
        "gpu_name": gpu.name if gpu else recipe.hardware.gpu,
        "gpus": recipe.hardware.count,
        "workload": recipe.workload,
        "tok_s_per_gpu": item.tok_s,
        "claimed_tok_s_per_gpu": item.claimed,
        "run_file": item.run.path if item.run is not None else None,
        "method_ref": METRICS_REF if item.recomputed else None,
        "cost_per_1m": fixed(cost_per_1m(gpu.price_per_gpu_hour if gpu else None, item.tok_s), "usd"),
        "mfu": fixed(
            implied_mfu(item.tok_s, model.active_b if model else None, gpu.bf16_dense_tflops if gpu else None), "mfu"
        ),
        "layout": recipe.layout.display(),
        "framework": framework.name if framework else None,
        "framework_ver": component_display(framework),
        "notes": recipe.notes,
        "measured": recipe.measured,
        "author": recipe.author,
        "tier": item.tier.tier,
        "tier_reasons": list(item.tier.reasons),
        "rank": rank[0],
        "rank_of": rank[1],
        "baseline": recipe.baseline,
        "legacy": recipe.provenance is not None,
    }


def _starting_point(
    pair_rows: Sequence[Mapping[str, Any]], catalog: Catalog, pair: tuple[str, str, str]
) -> dict[str, Any] | None:
    """The pair's `baseline: true` recipe, else the catalog's reference figure for the pair."""
    baselines = sorted((r for r in pair_rows if r["baseline"]), key=lambda r: (r["measured"], r["recipe"]))
    if baselines:
        first = baselines[0]
        return {"tok_s_per_gpu": first["tok_s_per_gpu"], "recipe": first["recipe"], "source": first["path"]}
    model, gpu, workload = pair
    points = [
        p for p in catalog.starting_points if p.model == model and p.gpu == gpu and p.workload in (None, workload)
    ]
    if not points:
        return None
    point = min(points, key=lambda p: (p.workload is None, p.tokens_per_s_per_gpu, p.source))
    return {"tok_s_per_gpu": fixed(point.tokens_per_s_per_gpu, "tok_s"), "recipe": None, "source": point.source}


def _fastest_row(rows: Iterable[Mapping[str, Any]]) -> Mapping[str, Any]:
    """A pair's shown row: the fastest, ties by recipe id (_fastest_first's order)."""
    return min(rows, key=lambda r: (-r["tok_s_per_gpu"], r["recipe"]))


def _filled_cell(
    pair: tuple[str, str, str], pair_rows: Sequence[Mapping[str, Any]], catalog: Catalog, top: float
) -> dict[str, Any]:
    best = _fastest_row(pair_rows)
    hardware = catalog.hardware.get(best["gpu"])
    start = _starting_point(pair_rows, catalog, pair)
    tok_s = best["tok_s_per_gpu"]
    gain = (tok_s / start["tok_s_per_gpu"] - 1.0) * 100.0 if start and start["tok_s_per_gpu"] else None
    return {
        "gpu": pair[1],
        "gpu_name": hardware.name if hardware else pair[1],
        "workload": pair[2],
        "recipe": best["recipe"],
        "recipes": len(pair_rows),
        "tok_s_per_gpu": tok_s,
        "claimed_tok_s_per_gpu": best["claimed_tok_s_per_gpu"],
        "gpus": best["gpus"],
        "cost_per_1m": fixed(cost_per_1m(hardware.price_per_gpu_hour if hardware else None, tok_s), "usd"),
        "vs_fastest": fixed(tok_s / top if top else None, "ratio"),
        "starting_point": start,
        "gain_pct": fixed(gain, "pct"),
    }


def empty_cell(gpu: str, workload: str, catalog: Catalog) -> dict[str, Any]:
    """A GPU of the workload's protocol with no recipe yet: the cell seed 000 prints "No recipe yet"."""
    hardware = catalog.hardware.get(gpu)
    return {
        "gpu": gpu,
        "gpu_name": hardware.name if hardware else gpu,
        "workload": workload,
        "recipe": None,
        "recipes": 0,
        "tok_s_per_gpu": None,
        "claimed_tok_s_per_gpu": None,
        "gpus": None,
        "cost_per_1m": None,
        "vs_fastest": None,
        "starting_point": None,
        "gain_pct": None,
    }


def protocol_gpus(catalog: Catalog, workload: str) -> tuple[str, ...]:
    """The GPUs the workload's protocol is measured on, in its order (catalog/workloads.yaml `gpus`)."""
    spec = catalog.workloads.get(workload)
    return tuple(spec.gpus) if spec is not None else ()


def _cell_order(catalog: Catalog, workload: str, with_recipes: Iterable[str]) -> list[str]:
    """Every protocol GPU in the protocol's order, then any other GPU with a recipe, by id."""
    protocol = protocol_gpus(catalog, workload)
    return list(protocol) + sorted(set(with_recipes) - set(protocol))


def model_entries(training: Iterable[Mapping[str, Any]], catalog: Catalog) -> list[dict[str, Any]]:
    """The `models` entries (one per model with a training row: its cells per GPU × workload), from the
    training board's rows alone, so a merge's update (boards/update.py) recomputes a touched model's entry
    from its patched rows exactly as a full build does."""
    by_model: dict[str, list[Mapping[str, Any]]] = {}
    for row in training:
        by_model.setdefault(row["model"], []).append(row)
    out = []
    for model_id in sorted(by_model):
        members = by_model[model_id]
        spec = catalog.models.get(model_id)
        pairs: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
        for row in members:
            pairs.setdefault((row["model"], row["gpu"], row["workload"]), []).append(row)
        model_best: dict[str, float] = {}  # workload -> the model's fastest figure on that workload
        for pair, pair_rows in pairs.items():
            best = _fastest_row(pair_rows)["tok_s_per_gpu"]
            model_best[pair[2]] = max(model_best.get(pair[2], 0.0), best)
        gpus = []
        for workload in sorted(model_best):
            for gpu in _cell_order(catalog, workload, (p[1] for p in pairs if p[2] == workload)):
                pair = (model_id, gpu, workload)
                gpus.append(
                    _filled_cell(pair, pairs[pair], catalog, model_best[workload])
                    if pair in pairs
                    else empty_cell(gpu, workload, catalog)
                )
        out.append(
            {
                "model": model_id,
                "model_name": spec.name if spec else model_id,
                "family": spec.family if spec else None,
                "params_b": fixed(spec.params_b, "params_b") if spec else None,
                "active_b": fixed(spec.active_b, "params_b") if spec else None,
                "recipes": len(members),
                "newest": max(row["measured"] for row in members),
                "gpus": gpus,
            }
        )
    return out


# --------------------------------------------------------------------------- what is wanted


def wanted_models(catalog: Catalog, trained: Iterable[str | None]) -> list[dict[str, Any]]:
    """Catalog models with no training recipe, grouped by family: families in the order of their first
    such model in catalog/models.yaml, models in file order within a family (the catalog lists seed
    000's "Wanted" models in the seed's order, so the import reproduces its list)."""
    have = set(trained)
    families: dict[str, list[dict[str, Any]]] = {}
    order = [m for m in catalog.model_order if m in catalog.models]
    for model_id in order + sorted(set(catalog.models) - set(order)):
        spec = catalog.models[model_id]
        if model_id not in have:
            families.setdefault(spec.family, []).append(
                {"model": model_id, "model_name": spec.name, "family": spec.family}
            )
    return [entry for members in families.values() for entry in members]


def wanted_reproductions(rows: Iterable[Mapping[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Every board row at T2, with what T3 still needs (its tier reasons)."""
    return [
        {"recipe": row["recipe"], "kind": kind, "tier": row["tier"], "needs": list(row["tier_reasons"])}
        for row in rows
        if row.get("tier") == "T2"
    ]


def quality_needs(tiers: Mapping[str, TierResult], rows: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Inference recipe id -> why it needs quality evidence (docs/quality.md; empty: it serves the model
    as the reference does): what the tiers' quality gate found, for the task its row's status is of."""
    return {
        row["recipe"]: list(tiers[row["path"]].quality_needs)
        for row in rows
        if isinstance(row.get("quality"), dict) and row["path"] in tiers
    }  # dict: typing's Mapping is slow here


def wanted_quality(rows: Iterable[Mapping[str, Any]], needs: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """Rows that need quality evidence and whose `quality` status (the row's field) is not `verified`."""
    out = []
    for row in rows:
        quality, why = row.get("quality"), list(needs.get(row["recipe"], ()))
        if isinstance(quality, dict) and why and quality.get("status") != "verified":
            out.append({"recipe": row["recipe"], "status": quality.get("status"), "needs": why})
    return sorted(out, key=lambda item: item["recipe"])


def wanted_references(snapshot: Snapshot) -> list[dict[str, Any]]:
    """Model × training workload pairs whose recipes wait for a convergence reference (none recorded, or
    one that cannot be used): no recipe of theirs can reach T2 until a maintainer records one
    (docs/convergence.md). Each with the recipes waiting and the reason their tier gives."""
    waiting: dict[tuple[str, str], dict[str, Any]] = {}
    for _, recipe in snapshot.valid_recipes():
        if not isinstance(recipe, TrainingRecipe):
            continue
        why = missing_reference(snapshot, recipe)
        if why is None:
            continue
        spec = snapshot.catalog.models.get(recipe.model)
        item = waiting.setdefault(
            (recipe.model, recipe.workload),
            {
                "model": recipe.model,
                "model_name": spec.name if spec else recipe.model,
                "workload": recipe.workload,
                "recipes": [],
                "why": why,
            },
        )
        item["recipes"].append(recipe.id)
    for item in waiting.values():
        item["recipes"].sort()
    return [waiting[key] for key in sorted(waiting)]


def _wanted(
    snapshot: Snapshot,
    training: Sequence[Mapping[str, Any]],
    measured: Sequence[Mapping[str, Any]],
    claimed: Sequence[Mapping[str, Any]],
    needs: Mapping[str, Sequence[str]],
) -> dict[str, Any]:
    catalog = snapshot.catalog
    reproductions = wanted_reproductions(training, "training") + wanted_reproductions(measured, "inference")
    return {
        "models": wanted_models(catalog, (row["model"] for row in training)),
        "references": wanted_references(snapshot),
        "reproductions": sorted(reproductions, key=lambda item: (item["kind"], item["recipe"])),
        "quality": wanted_quality(list(measured) + list(claimed), needs),
    }


# --------------------------------------------------------------------------- inference


def _primary_run(
    snapshot: Snapshot, entry: RecipeEntry, recipe: Recipe, tier: TierResult, point: int | None = None
) -> RunEntry | None:
    """The run a measured row shows, of those that earned the tier: the claim's primary run (claims come from
    one run, evidence/agreement.py: a later reproduction, up to 5% off, never replaces the claim's figures nor
    moves a rank), else the newest (by measured_at, then digest). For a sweep, of those at its headline point
    `point` only (the row states that concurrency: another point's run is never shown under it,
    evidence/tiers.py makes such a sweep a claim)."""
    digests = tier.verified_runs if tier.tier in ("T2", "T3") else tier.reported_runs
    runs = [snapshot.runs[d] for d in digests if d in snapshot.runs and snapshot.runs[d].meta is not None]
    if point is not None:
        runs = [r for r in runs if point_of(r) == point]
    if not runs:
        return None
    primary = primary_runs(snapshot, entry.path, recipe).get(point)
    return next(
        (r for r in runs if r.name_digest == primary),
        max(runs, key=lambda r: (r.meta.measured_at if r.meta else "", r.name_digest)),
    )


def _sweep_points(
    snapshot: Snapshot, recipe: InferenceRecipe, tier: TierResult, row: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """A sweep's other points, shaped like the row for the frontier: per point, the newest verified run
    (T2; T3 is the headline point's, where reproductions are counted), else the newest reported (T1)."""
    assert recipe.sweep is not None
    points = []
    for concurrency in sorted(set(recipe.sweep.concurrency) - {recipe.serving.concurrency}):
        for digests, point_tier in ((tier.verified_runs, "T2"), (tier.reported_runs, "T1")):  # noqa: B007 - read after the break
            runs = [
                snapshot.runs[d] for d in digests if d in snapshot.runs and point_of(snapshot.runs[d]) == concurrency
            ]
            if runs:
                break
        if not runs:
            continue  # a point without a run is a claim, not a point of the frontier
        run = max(runs, key=lambda r: (r.meta.measured_at if r.meta else "", r.name_digest))
        figures, _ = run_headline(run)
        points.append(
            {
                **row,
                "tier": point_tier if tier.tier in ("T2", "T3") else "T1",
                "concurrency": concurrency,
                "run_sha": run.name_digest,
                "decode_tok_s": figures.get("decode_tok_s"),
                "output_tok_s": figures.get("output_tok_s"),
                "ttft_ms": figures.get("ttft_ms"),
            }
        )
    return points


def run_headline(run: RunEntry) -> tuple[dict[str, float | None], bool]:
    """The run's figures, rounded: recomputed from raw samples when it has them, else the tool's summary."""
    assert run.meta is not None
    recomputed = run.facts is not None and run.facts.has_samples
    source: Mapping[str, float] = run.facts.headline if run.facts is not None and recomputed else run.meta.summary
    return {name: fixed(value, _FIGURE_KIND.get(name, "loss")) for name, value in sorted(source.items())}, recomputed


def _legacy_run_id(meta: RunMeta) -> int | str | None:
    if meta.provenance is None:
        return None
    return meta.provenance.legacy_id if meta.provenance.legacy_id is not None else meta.provenance.row


def _inference_common(
    entry: RecipeEntry, recipe: InferenceRecipe, tier: TierResult, catalog: Catalog
) -> dict[str, Any]:
    engine = recipe.software.get("engine")
    workload = catalog.workloads.get(recipe.workload_id)
    return {
        "tier": tier.tier,
        "tier_reasons": list(tier.reasons),
        "recipe": recipe.id,
        "path": entry.path,
        "model": recipe.model,
        "model_name": _model_name(catalog, recipe.model),
        "quant": recipe.quant,
        "hardware": hardware_display(recipe.hardware.gpu, recipe.hardware.count),
        "gpu": recipe.hardware.gpu,
        "gpu_name": _gpu_name(catalog, recipe.hardware.gpu),
        "gpus": recipe.hardware.count,
        "engine": engine.name if engine else None,
        "engine_ver": component_display(engine),
        "measured": recipe.measured,
        "author": recipe.author,
        "notes": recipe.notes,
        "legacy": recipe.provenance is not None,
        "quality": _quality_row(tier),
        # the protocol the figures were measured on: ranks and "fastest" never cross it (docs/protocols.md)
        "workload": recipe.workload_id,
        "workload_label": workload.display() if workload is not None else recipe.workload_id,
    }


def _gpu_name(catalog: Catalog, gpu: str) -> str:
    spec = catalog.hardware.get(gpu)
    return spec.name if spec else gpu


def _inference_cost(catalog: Catalog, recipe: InferenceRecipe, output_tok_s: float | None) -> float | None:
    """$ per 1M output tokens of a measured row: the training formula on the run's output throughput of all
    streams per GPU (as the frontier's points, validator/boards/frontier.py); null without a price or a figure."""
    spec = catalog.hardware.get(recipe.hardware.gpu)
    if output_tok_s is None or output_tok_s <= 0 or spec is None or recipe.hardware.count < 1:
        return None
    return fixed(cost_per_1m(spec.price_per_gpu_hour, round(output_tok_s / recipe.hardware.count, 2)), "usd")


def _quality_row(tier: TierResult) -> dict[str, Any]:
    """The row's `quality` object (docs/quality.md); a tier derived without it shows `missing`."""

    return (tier.quality or QualityResult(DEFAULT_TASK, "missing")).board()


def _measured_row(
    snapshot: Snapshot, entry: RecipeEntry, recipe: InferenceRecipe, tier: TierResult, run: RunEntry
) -> dict[str, Any]:
    assert run.meta is not None
    figures, recomputed = run_headline(run)
    row = _inference_common(entry, recipe, tier, snapshot.catalog)
    row.update(
        {
            "context_len": recipe.serving.context_len,
            "concurrency": recipe.serving.concurrency,
            "prefill_tok_s": figures.get("prefill_tok_s"),
            "decode_tok_s": figures.get("decode_tok_s"),
            "output_tok_s": figures.get("output_tok_s"),
            "cost_per_1m": _inference_cost(snapshot.catalog, recipe, figures.get("output_tok_s")),
            "ttft_ms": figures.get("ttft_ms"),
            "stddev": None,  # kept for seed 004's readers; orv does not compute a spread
            "slot_ceiling": recipe.serving.slots,
            "tool": run.meta.tool.name,
            "tool_version": run.meta.tool.version,
            "method_ref": METRICS_REF if recomputed else None,
            "measured_by": run.meta.measured_by,
            "run_id": _legacy_run_id(run.meta),
            "run_sha": run.name_digest,
            "run_file": run.path,
        }
    )
    return row


def _claimed_row(entry: RecipeEntry, recipe: InferenceRecipe, tier: TierResult, catalog: Catalog) -> dict[str, Any]:
    row = _inference_common(entry, recipe, tier, catalog)
    row.update(
        {
            "claimed_tok_s": fixed(recipe.claimed.decode_tok_s, "tok_s"),
            "claimed_prefill_tok_s": fixed(recipe.claimed.prefill_tok_s, "tok_s"),
            "claimed_ttft_ms": fixed(recipe.claimed.ttft_ms, "ms"),
            "context_len": recipe.serving.context_len,
            "concurrency": recipe.serving.concurrency,
        }
    )
    return row


def _inference_rows(
    snapshot: Snapshot, tiers: Mapping[str, TierResult]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The measured and claimed boards' rows, and the frontier's points: each measured row, and a
    sweep's other points."""
    measured, claimed, points = [], [], []
    found = [(e, r) for e, r in snapshot.valid_recipes() if isinstance(r, InferenceRecipe)]
    for entry, recipe in _unique_by_id(found):
        assert isinstance(recipe, InferenceRecipe)
        tier = _tier_of(tiers, entry)
        run = (
            _primary_run(snapshot, entry, recipe, tier, recipe.serving.concurrency if recipe.sweep else None)
            if tier.tier != "T0"
            else None
        )
        if run is not None:
            row = _measured_row(snapshot, entry, recipe, tier, run)
            measured.append(row)
            points.append(row)
            if recipe.sweep is not None:
                points.extend(_sweep_points(snapshot, recipe, tier, row))
        else:
            if tier.tier != "T0":  # a tier above T0 always names its runs; never show T1+ without one
                tier = TierResult(
                    "T0", ("no readable run file on record",), quality=tier.quality, quality_needs=tier.quality_needs
                )
            claimed.append(_claimed_row(entry, recipe, tier, snapshot.catalog))
    rank_inference(measured, "decode_tok_s")
    rank_inference(claimed, "claimed_tok_s")
    return sorted(measured, key=inference_order), sorted(claimed, key=inference_order), points


def inference_order(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """The order of the measured and claimed boards' rows."""
    return (row["model"], row["gpu"], row["workload"], row["gpus"], row["quant"], row["recipe"])


def training_order(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """The order of the training board's rows."""
    return (row["model"], row["gpu"], row["workload"], row["rank"], row["recipe"])


PREFILL_OF = {"decode_tok_s": "prefill_tok_s", "claimed_tok_s": "claimed_prefill_tok_s"}


def rank_inference(rows: list[dict[str, Any]], figure: str) -> None:
    """`rank`/`rank_of` within the model × GPU × workload group of one inference board, by decode tok/s
    (1 = fastest): a figure measured on 8k prompts is never ranked against one on 256 (docs/protocols.md),
    and imported rows with no workload (`unspecified`) rank only among themselves. Equal figures share a
    rank and a row without the figure ranks after every row with one. A row whose quality is `below` the
    bound has no rank and is not counted in the others'."""
    pairs: dict[tuple[str, str, str | None], list[dict[str, Any]]] = {}
    for row in rows:
        pairs.setdefault((row["model"], row["gpu"], row.get("workload")), []).append(row)
    for members in pairs.values():
        # quality `below` its model's bound: on the board, marked, but out of the ranking (SPEC §5)
        ranked = [row for row in members if (row.get("quality") or {}).get("status") != "below"]
        for row in members:
            row["rank"], row["rank_of"] = None, len(ranked)
        # a group with no decode figure (llama-bench's pp tests: prefill only) ranks by its prefill rate
        by = figure if any(row.get(figure) is not None for row in ranked) else PREFILL_OF.get(figure, figure)
        for row, rank in zip(ranked, competition_ranks([row.get(by) for row in ranked])):
            row["rank"] = rank


def rank_training(rows: Iterable[dict[str, Any]]) -> None:
    """`rank`/`rank_of` of training rows within their model × GPU × workload pair by the figure shown, as
    `_ranks` gives them to a full build: how a reader of the stored chunks (boards/split.py) restores them."""
    pairs: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        pairs.setdefault((row["model"], row["gpu"], row["workload"]), []).append(row)
    for members in pairs.values():
        for row, rank in zip(members, competition_ranks([row["tok_s_per_gpu"] for row in members])):
            row["rank"], row["rank_of"] = rank, len(members)


# --------------------------------------------------------------------------- runs


def run_rows(snapshot: Snapshot, only: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The `runs` rows, by digest: every run's, or (`only`) those digests' (a merge's update)."""
    referenced = snapshot.references()
    rows = []
    wanted = None if only is None else set(only)
    for digest, run in sorted(snapshot.runs.items()):
        if wanted is not None and digest not in wanted:
            continue
        if not run.verified or run.meta is None:
            continue  # unreadable or altered files are findings, not evidence
        meta = run.meta
        figures, recomputed = run_headline(run)
        primary = meta.software.get("framework" if meta.kind == "training" else "engine")
        rows.append(
            {
                "content_hash": digest,
                "run_file": run.path,
                "kind": meta.kind,
                "tool": meta.tool.name,
                "tool_version": meta.tool.version,
                "model": meta.model,
                "hardware": hardware_display(meta.hardware.gpu, meta.hardware.count),
                "gpu": meta.hardware.gpu,
                "gpus": meta.hardware.count,
                "engine": primary.name if primary else None,
                "engine_version": component_display(primary),
                "measured_at": meta.measured_at,
                "measured_by": meta.measured_by,
                "headline": figures,
                "headline_source": "samples" if recomputed else "tool-summary",
                "samples": run.facts.sample_count if run.facts else 0,
                "recipes": sorted({e.id for e in referenced.get(digest, []) if e.id}),
                "run_id": _legacy_run_id(meta),
            }
        )
    return rows


# --------------------------------------------------------------------------- the document


def build(snapshot: Snapshot, tiers: Mapping[str, TierResult], stamp: GitStamp) -> dict[str, Any]:
    """The whole boards document. Same inputs, same document: nothing here reads files or the clock."""
    items = _training_items(snapshot, tiers)
    ranks = _ranks(items)
    training = [_training_row(i, snapshot.catalog, ranks[i.recipe.id]) for i in items]
    training.sort(key=training_order)
    measured, claimed, points = _inference_rows(snapshot, tiers)
    runs = run_rows(snapshot)
    return {
        "meta": {
            "schema": BOARDS_SCHEMA_ID,
            "tiers": [{"tier": tier, "meaning": meaning} for tier, meaning in sorted(TIER_MEANINGS.items())],
            "updated_at": stamp.updated_at,
            "source_commit": stamp.source_commit,
            "rounding": dict(ROUNDING),
            "counts": {
                "training": len(training),
                "measured": len(measured),
                "claimed": len(claimed),
                "models": len({row["model"] for row in training}),
                "runs": len(runs),
            },
        },
        "boards": {"measured": measured, "claimed": claimed, "training": training},
        "models": model_entries(training, snapshot.catalog),
        "frontiers": frontiers(points, snapshot.catalog),
        "runs": runs,
        "wanted": _wanted(snapshot, training, measured, claimed, quality_needs(tiers, measured + claimed)),
    }


# Each list's identity: no two rows may share it. Checked here with sets (linear), not by the
# schema's uniqueItems, which jsonschema checks pairwise on objects (quadratic in the rows).
ROW_KEYS: dict[str, tuple[str, ...]] = {
    "boards.measured": ("recipe",),
    "boards.claimed": ("recipe",),
    "boards.training": ("recipe",),
    "models": ("model",),
    "models[].gpus": ("gpu", "workload"),
    "runs": ("content_hash",),
    "meta.tiers": ("tier",),
}


def duplicate_row(document: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]] | None:
    """(list, key) of the first row that repeats another row's key in its list; None when every row is unique."""
    lists: list[tuple[str, Sequence[Mapping[str, Any]]]] = [
        ("meta.tiers", document["meta"]["tiers"]),
        ("models", document["models"]),
        ("runs", document["runs"]),
    ]
    lists += [(f"boards.{name}", rows) for name, rows in sorted(document["boards"].items())]
    lists += [("models[].gpus", model["gpus"]) for model in document["models"]]
    for name, rows in lists:
        fields = ROW_KEYS[name]
        seen: set[tuple[Any, ...]] = set()
        for row in rows:
            key = tuple(row.get(f) for f in fields)
            if key in seen:
                return name, key
            seen.add(key)
    return None


def render(document: Mapping[str, Any]) -> bytes:
    """The file's exact bytes: sorted keys, two-space indent, UTF-8, one trailing newline.

    The bytes are json.dumps's; orjson writes the same ~20x faster (1.3 s of `orv boards` at
    N = 10,000) wherever _orjson_writes_as_json says so, and json.dumps writes the rest.
    """
    if _orjson_writes_as_json(document):
        return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    text = json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def _orjson_writes_as_json(document: Any) -> bool:
    """Does orjson write this document byte for byte as json.dumps(indent=2, sort_keys) does?

    It does for str keys, 64-bit integers and floats written without an exponent or with a
    positive one (shortest round-trip digits in both); below 1e-4 Python writes 1e-05 where orjson
    writes 0.00001. A NaN or an infinity raises ValueError, as json.dumps(allow_nan=False) would:
    orjson would write null.
    """
    stack = [document]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is dict:
            if not all(type(k) is str for k in value):
                return False
            stack.extend(value.values())
        elif kind is list:
            stack.extend(value)
        elif kind is float:
            if not math.isfinite(value):
                raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
            if value and abs(value) < 1e-4:
                return False
        elif kind is int:
            if not -(2**63) <= value < 2**64:
                return False
        elif kind is not str and kind is not bool and value is not None:
            return False  # a tuple, a subclass: json.dumps's own rules
    return True
