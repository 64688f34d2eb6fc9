"""Read from a registry what the site shows beyond boards.json: loss curves, reference curves, model order.

Everything here is best effort: a file that is missing or unreadable leaves its part of the site
out ("No loss curve recorded"); `orv check` is where broken files are reported.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import orjson
import yaml

from validator.site import SiteContext

try:  # libyaml's C loader when present (it is in the Action's lock); the pure-Python one otherwise
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


def _yaml(path: str) -> Any:
    try:
        with open(path, "rb") as fh:
            return yaml.load(fh, Loader=_Loader)  # noqa: S506 - a safe loader
    except (OSError, yaml.YAMLError):
        return None


def collect_context(root: str, boards: Mapping[str, Any]) -> SiteContext:
    models = _yaml(os.path.join(root, "catalog", "models.yaml"))
    model_order = list((models or {}).get("models") or {}) if isinstance(models, dict) else []
    hardware = _yaml(os.path.join(root, "catalog", "hardware.yaml"))
    gpu_order = list((hardware or {}).get("hardware") or {}) if isinstance(hardware, dict) else []
    workloads = _yaml(os.path.join(root, "catalog", "workloads.yaml"))
    references: dict[str, dict[str, Any]] = {}
    for wid, spec in ((workloads or {}).get("workloads") or {}).items() if isinstance(workloads, dict) else ():
        conv = spec.get("convergence") if isinstance(spec, dict) else None
        if isinstance(conv, dict) and isinstance(conv.get("reference"), list):
            points = [(p["step"], p["loss"]) for p in conv["reference"]
                      if isinstance(p, dict) and "step" in p and "loss" in p]
            references[str(wid)] = {"points": sorted(points), "tolerance": conv.get("tolerance"),
                                    "tolerance_kind": conv.get("tolerance_kind", "relative"),
                                    "window": conv.get("window")}
    losses: dict[str, list[tuple[int, Any]]] = {}
    for run in boards.get("runs") or []:
        if run.get("kind") != "training" or not run.get("run_file") or not run.get("samples"):
            continue
        path = os.path.join(root, *str(run["run_file"]).split("/"))
        try:
            with open(path, "rb") as fh:
                document = orjson.loads(fh.read())
        except (OSError, orjson.JSONDecodeError):
            continue
        samples = document.get("samples") if isinstance(document, dict) else None
        points = sorted((s["step"], s["loss"]) for s in samples or []
                        if isinstance(s, dict) and isinstance(s.get("step"), int) and "loss" in s
                        and isinstance(s["loss"], (int, float, str)))
        if points:
            losses[run["content_hash"]] = points
    return SiteContext(losses=losses, references=references, model_order=model_order,
                       gpu_order=gpu_order)
