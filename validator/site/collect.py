"""Read from a registry what the site shows beyond boards.json: loss curves, reference curves, model order.

Everything here is best effort: a file that is missing or unreadable leaves its part of the site
out ("No loss curve recorded"); `orv check` is where broken files are reported.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import orjson

from validator.errors import OrvError
from validator.files.interrupts import quiet_map
from validator.registry.catalog import plain_data
from validator.registry.layout import HARDWARE_PATH, MODELS_PATH, WORKLOADS_PATH
from validator.site import REPO_PATH, SiteContext
from validator.site.format import MAX_POINTS
from validator.stacks.reproduce import reproduce

RUN_FILE = re.compile(r"runs/[0-9a-f]{2}/[0-9a-f]{64}\.json")
PARALLEL_FROM = 200  # training run files; below this a process pool costs more than it saves


def collect_context(root: str, boards: Mapping[str, Any]) -> SiteContext:
    models = plain_data(root, MODELS_PATH)
    model_order = list((models or {}).get("models") or {}) if isinstance(models, dict) else []
    hardware = plain_data(root, HARDWARE_PATH)
    gpu_order = list((hardware or {}).get("hardware") or {}) if isinstance(hardware, dict) else []
    workloads = plain_data(root, WORKLOADS_PATH)
    references: dict[str, dict[str, Any]] = {}
    for wid, spec in ((workloads or {}).get("workloads") or {}).items() if isinstance(workloads, dict) else ():
        conv = spec.get("convergence") if isinstance(spec, dict) else None
        if isinstance(conv, dict) and isinstance(conv.get("reference"), list):
            points = [
                (p["step"], p["loss"]) for p in conv["reference"] if isinstance(p, dict) and "step" in p and "loss" in p
            ]
            references[str(wid)] = {
                "points": sorted(points),
                "tolerance": conv.get("tolerance"),
                "tolerance_kind": conv.get("tolerance_kind", "relative"),
                "window": conv.get("window"),
            }
    wanted = [(digest, os.path.join(root, *rel.split("/"))) for digest, rel in _curves(boards)]
    if len(wanted) >= PARALLEL_FROM and (os.cpu_count() or 1) > 1:
        # parsing the run files is most of the build at scale (10,000 recipes: ~350 MB of JSON)
        curves = list(quiet_map(read_losses, [path for _, path in wanted], min(os.cpu_count() or 1, 8), chunksize=64))
    else:
        curves = [read_losses(path) for _, path in wanted]
    losses = {digest: points for (digest, _), points in zip(wanted, curves) if points}
    return SiteContext(
        losses=losses,
        references=references,
        model_order=model_order,
        gpu_order=gpu_order,
        reproduce=reproduce_plans(root, boards),
    )


def _curves(boards: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(digest, registry-relative run file) of every training run whose loss curve a page draws."""
    return [
        (run["content_hash"], run["run_file"])
        for run in boards.get("runs") or []
        if run.get("kind") == "training" and run.get("samples") and RUN_FILE.fullmatch(str(run.get("run_file")))
    ]  # only ever a file under runs/


PLANS = 200  # pages with `orv reproduce`'s whole plan: each parses its recipe (~6-20 ms); docs/site.md says why not all


def _planned(boards: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(recipe id, registry-relative path) of the recipes whose reproduction is worth most — verified ones, T3
    first, as the wanted list's reproductions — up to PLANS of them."""
    rows = [row for board in (boards.get("boards") or {}).values() for row in board or ()]
    verified = sorted(
        (row for row in rows if row.get("tier") in ("T2", "T3")), key=lambda r: (r.get("tier") != "T2", r["recipe"])
    )
    return [
        (row["recipe"], row["path"])
        for row in verified[:PLANS]
        if isinstance(row.get("path"), str) and REPO_PATH.fullmatch(row["path"])
    ]


def files_read(boards: Mapping[str, Any]) -> list[str]:
    """The registry files the site reads besides the boards and the catalog (registry-relative): the training
    run files of the loss curves and the recipes of the reproduction plans. What a sparse checkout must hold
    for `orv site` (commands/site.py checks them out): no inference run file, key shard or other recipe."""
    return sorted({rel for _, rel in _curves(boards)} | {path for _, path in _planned(boards)})


def reproduce_plans(root: str, boards: Mapping[str, Any]) -> dict[str, list[str]]:
    """`orv reproduce`'s commands (validator/stacks/reproduce.py) for the PLANS recipes whose reproduction
    is worth most (_planned); every other page names the command. Bounded so a 10,000-recipe site costs no
    more to build (bench/site.py)."""
    plans: dict[str, list[str]] = {}
    catalog: dict[tuple[str, str], Any] = {}  # each GPU and workload read from the catalog once
    for recipe, path in _planned(boards):
        try:
            plans[recipe] = reproduce(root, os.path.join(root, *path.split("/")), catalog).lines
        except OrvError:
            continue  # a recipe that does not load: `orv check` reports it; the page names the command
    return plans


def read_losses(path: str) -> list[tuple[int, Any]]:
    """A run file's (step, loss) samples in step order, thinned to what a chart draws; every
    diverged step ("nan"/"inf", strings in the run schema) is kept so the page can name it."""
    try:
        with open(path, "rb") as fh:
            document = orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError):
        return []
    samples = document.get("samples") if isinstance(document, dict) else None
    if not isinstance(samples, list):
        return []
    points = [
        (s["step"], s["loss"])
        for s in samples
        if isinstance(s, dict)
        and isinstance(s.get("step"), int)
        and not isinstance(s.get("step"), bool)
        and isinstance(s.get("loss"), (int, float, str))
        and not isinstance(s.get("loss"), bool)
    ]
    if any(a[0] > b[0] for a, b in zip(points, points[1:])):
        points.sort(key=lambda p: p[0])
    if len(points) <= MAX_POINTS:
        return points
    k = -(-len(points) // MAX_POINTS)
    keep = {0, len(points) - 1, *range(0, len(points), k)}
    return [p for i, p in enumerate(points) if i in keep or isinstance(p[1], str)]
