"""The boards' `frontiers`: per model × GPU × workload, throughput per GPU against interactivity.

A recipe is one point at its serving.concurrency, or several with a concurrency sweep
(`sweep.concurrency`; one run per point, each held to its own claim within 1% and its samples proved at
its own concurrency; a sweep with no run at its headline concurrency is a claim and has no points:
docs/boards.md). A run is one point: a group never lists one run twice.
Every point is recomputed from its run's raw samples:
  interactivity  = the run's per-stream decode rate, tok/s each user sees (InferenceX's 1000 / TPOT)
  tok_s_per_gpu  = output tok/s of all streams together ÷ GPUs (needs the run's duration)
  cost_per_1m    = price per GPU-hour × 10^6 ÷ (3600 × tok_s_per_gpu), per 1M output tokens, from the
                   catalog's GPU price (the training formula); null where the GPU has no price.
Only points at T2 or above are verified; the Pareto frontier among them (no other verified point
beats it on both axes, found in one sort and sweep) is marked `on_frontier`. Points at T1 and
recipes whose quality is `below` their model's bound are shown apart, never on the frontier.
`cost_at` gives the frontier's throughput and cost at 20, 50 and 100 tok/s per user, interpolated
between frontier points and never extrapolated beyond them.

Built from the measured board's rows (already rounded), so the frontier and the rows never disagree.
"""

from __future__ import annotations

from collections.abc import (
    Iterable,
    Mapping,  # not typing's, ~10x slower in isinstance() (report/summary.py)
)
from typing import Any, cast

from validator.boards.figures import fixed, per_gpu
from validator.registry.layout import HARDWARE_PATH
from validator.registry.snapshot import Catalog
from validator.science.frontier import INTERACTIVITY_TARGETS, Point, frontier, throughput_at
from validator.science.physics import cost_per_1m

UNSPECIFIED = "unspecified"  # rows whose recipe names no workload (legacy imports)
VERIFIED_TIERS = ("T2", "T3")


def _usd(value: float | None) -> float | None:
    """Money as every board figure is rounded (an overflowing cost is null, as a missing price is)."""
    return fixed(value, "usd")


def _point(row: Mapping[str, Any], price: float | None) -> dict[str, Any] | None:
    """The row as a point, or None when its run does not give both axes."""
    interactivity, output = row.get("decode_tok_s"), row.get("output_tok_s")
    if not interactivity or not output or not row.get("gpus"):
        return None
    tok_s_per_gpu = per_gpu(output, row["gpus"])
    if not tok_s_per_gpu:  # below what the boards show: the gate refuses such a run (ORV217, boards/figures.py)
        return None
    why_apart = None
    if row["tier"] not in VERIFIED_TIERS:
        why_apart = f"{row['tier']}: figures not verified"
    elif (row.get("quality") or {}).get("status") == "below":
        why_apart = "quality below the model's bound"
    return {
        "recipe": row["recipe"],
        "run_sha": row["run_sha"],
        "tier": row["tier"],
        "concurrency": row.get("concurrency"),
        "gpus": row["gpus"],
        "interactivity": interactivity,
        "tok_s_per_gpu": tok_s_per_gpu,
        "ttft_ms": row.get("ttft_ms"),
        "cost_per_1m": _usd(cost_per_1m(price, tok_s_per_gpu)),
        "on_frontier": False,
        "apart": why_apart,
    }


def frontiers(rows: Iterable[Mapping[str, Any]], catalog: Catalog) -> list[dict[str, Any]]:
    """One group per model × GPU × workload that has at least one point, in a stable order."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        point = _point(row, _price(catalog, row["gpu"]))
        if point is not None:
            groups.setdefault((row["model"], row["gpu"], row.get("workload") or UNSPECIFIED), []).append(point)
    return [group(key, points, _price(catalog, key[1])) for key, points in sorted(groups.items())]


def _price(catalog: Catalog, gpu_id: str) -> float | None:
    gpu = catalog.hardware.get(gpu_id)
    return gpu.price_per_gpu_hour if gpu else None


def group_key(g: Mapping[str, Any]) -> tuple[str, str, str]:
    return (g["model"], g["gpu"], g["workload"])


def group(key: tuple[str, str, str], points: Iterable[Mapping[str, Any]], price: float | None) -> dict[str, Any]:
    """A group from its points (each as `frontiers` lists them; `on_frontier` is recomputed here)."""
    model, gpu_id, workload = key
    # one point per run: a run measured one concurrency, so listing it twice would count it twice
    points = list({(p["recipe"], p["run_sha"]): {**p, "on_frontier": False} for p in points}.values())
    verified = [Point(p["interactivity"], p["tok_s_per_gpu"], p) for p in points if p["apart"] is None]
    front = frontier(verified)
    for p in front:
        cast("dict[str, Any]", p.item)["on_frontier"] = True  # the copies made above
    cost_at = []
    for target in INTERACTIVITY_TARGETS:
        throughput = throughput_at(front, target)
        if throughput is not None:
            cost_at.append(
                {
                    "interactivity": target,
                    "tok_s_per_gpu": round(throughput, 2),
                    "cost_per_1m": _usd(cost_per_1m(price, throughput)),
                }
            )
    order = lambda p: (p["interactivity"], p["tok_s_per_gpu"], p["recipe"], p["run_sha"])  # noqa: E731
    return {
        "model": model,
        "gpu": gpu_id,
        "workload": workload,
        "price_per_gpu_hour": price,
        "price_note": None if price else f"no price recorded for {gpu_id} in {HARDWARE_PATH}: cost not shown",
        "points": sorted((p for p in points if p["apart"] is None), key=order),
        "apart": sorted((p for p in points if p["apart"] is not None), key=order),
        "cost_at": cost_at,
    }


def patched(
    base: Iterable[Mapping[str, Any]], fresh: Iterable[Mapping[str, Any]], changed: set[str]
) -> list[dict[str, Any]]:
    """The groups after a change, from the base's groups and the changed recipes' fresh points (a pull
    request loads only its neighbourhood): the base's points of changed recipes replaced, the frontier
    of every group they enter or leave recomputed. Untouched groups are left out (nothing moved)."""
    base_groups = {group_key(g): g for g in base if isinstance(g, Mapping)}
    fresh_groups = {group_key(g): g for g in fresh}
    out = []
    for key in sorted(_touched(base_groups, fresh_groups, changed)):
        kept = [
            p
            for g in (base_groups.get(key),)
            if g
            for p in list(g["points"]) + list(g["apart"])
            if p.get("recipe") not in changed
        ]
        new = [
            p
            for g in (fresh_groups.get(key),)
            if g
            for p in list(g["points"]) + list(g["apart"])
            if p["recipe"] in changed
        ]
        source = fresh_groups.get(key) or base_groups[key]
        if kept or new:
            out.append(group(key, kept + new, source.get("price_per_gpu_hour")))
    return out


def merged(base: Iterable[Mapping[str, Any]], fresh: Iterable[Mapping[str, Any]], changed: set[str]) -> list[Any]:
    """Every group after a change (a merge's boards update): the base's untouched groups as they were and
    the touched ones `patched`, in `frontiers`' order; a group left with no point is gone."""
    base, fresh = list(base), list(fresh)
    base_groups = {group_key(g): g for g in base if isinstance(g, Mapping)}
    touched = _touched(base_groups, {group_key(g): g for g in fresh}, changed)
    out = {key: g for key, g in base_groups.items() if key not in touched}
    out.update((group_key(g), g) for g in patched(base, fresh, changed))
    return [out[key] for key in sorted(out)]


def _touched(
    base_groups: Mapping[tuple[str, str, str], Mapping[str, Any]],
    fresh_groups: Mapping[tuple[str, str, str], Mapping[str, Any]],
    changed: set[str],
) -> set[tuple[str, str, str]]:
    """The groups a changed recipe has a point in, before or after."""
    touched = {
        key
        for key, g in base_groups.items()
        if any(p.get("recipe") in changed for p in list(g["points"]) + list(g["apart"]))
    }
    touched |= {
        key
        for key, g in fresh_groups.items()
        if any(p["recipe"] in changed for p in list(g["points"]) + list(g["apart"]))
    }
    return touched


def frontier_wins(g: Mapping[str, Any], recipe: str) -> list[tuple[float, float]]:
    """The interactivity ranges (tok/s per user) over which `recipe`'s points form the frontier: the
    runs of consecutive frontier points that are its own, each as (lowest, highest)."""
    ranges: list[tuple[float, float]] = []
    current: list[float] = []
    for p in [p for p in g["points"] if p["on_frontier"]]:
        if p["recipe"] == recipe:
            current.append(p["interactivity"])
        elif current:
            ranges.append((current[0], current[-1]))
            current = []
    if current:
        ranges.append((current[0], current[-1]))
    return ranges
