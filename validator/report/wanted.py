"""`orv wanted`: where a contribution counts, from the boards document, with the command that starts each piece of work.

Five lists (issues 20, 28): models with no training recipe, GPUs of a training protocol with no
recipe yet (the "No recipe yet" cells), models whose training recipes wait for a convergence
reference, T2 recipes waiting for an independent reproduction, and recipes waiting for quality
evidence. The boards document (validator/boards/build.py) decides what is
wanted; this module only adds the command and renders. Pure: document in, text out.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from validator.adapters import KIND_OF
from validator.boards.build import GitStamp, build
from validator.evidence.tiers import derive, reference_command
from validator.quality.status import STATUS_WORDS
from validator.registry.snapshot import Analysis
from validator.stacks.engines import LLAMA_BENCH

KINDS = ("training", "inference")
# What `orv add-run --from` reads for each kind of run (validator/adapters FORMATS); llama-bench's tests
# are their own workloads (docs/protocols.md), so it is offered for those alone.
RUN_FORMATS = {kind: "|".join(f for f, k in KIND_OF.items() if k == kind and f != LLAMA_BENCH) for kind in KINDS}
NEW_TRAINING = "--count GPUS --framework NAME@VERSION --tp TP --pp PP"


def document_for(analysis: Analysis) -> dict[str, Any]:
    """The boards document `orv boards` would write for this registry (without the git stamp)."""
    return build(analysis.snapshot, derive(analysis.snapshot, analysis.diagnostics), GitStamp())


def _quote(value: Any) -> str:
    return shlex.quote(str(value))


def _paths(document: Mapping[str, Any]) -> dict[str, str]:
    """Recipe id -> its file, from every board row."""
    out: dict[str, str] = {}
    for rows in document.get("boards", {}).values():
        for row in rows:
            out.setdefault(row["recipe"], row["path"])
    return out


def _models(document: Mapping[str, Any]) -> dict[str, str]:
    """Recipe id -> its model, from every board row."""
    return {row["recipe"]: row["model"] for rows in document.get("boards", {}).values() for row in rows}


def _tools(document: Mapping[str, Any]) -> dict[str, str]:
    """Recipe id -> the tool of its run on record, from every board row that names one."""
    return {
        row["recipe"]: row["tool"] for rows in document.get("boards", {}).values() for row in rows if row.get("tool")
    }


def _recipe_arg(paths: Mapping[str, str], recipe: str) -> str:
    return _quote(paths.get(recipe, f"recipes/…/{recipe}.yaml"))


def wanted_items(document: Mapping[str, Any], kind: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """The wanted lists of a boards document, each item with `command`; `kind` keeps one kind's lists."""
    wanted = document.get("wanted", {})
    paths = _paths(document)
    out: dict[str, list[dict[str, Any]]] = {section: [] for section in SECTIONS[kind]}
    if kind in (None, "training"):
        for item in wanted.get("models", []):
            out["models"].append(
                {**item, "command": f"orv new training --model {_quote(item['model'])} --gpu GPU {NEW_TRAINING}"}
            )
        for model in document.get("models", []):
            for cell in model["gpus"]:
                if cell["recipe"] is not None:
                    continue
                out["cells"].append(
                    {
                        "model": model["model"],
                        "model_name": model["model_name"],
                        "gpu": cell["gpu"],
                        "gpu_name": cell["gpu_name"],
                        "workload": cell["workload"],
                        "command": (
                            f"orv new training --model {_quote(model['model'])} --gpu {_quote(cell['gpu'])} "
                            f"--workload {_quote(cell['workload'])} {NEW_TRAINING}"
                        ),
                    }
                )
        for item in wanted.get("references", []):
            # the baseline recipe names the stack the reference run was measured on (add-run needs one)
            out["references"].append(
                {**item, "command": reference_command(item["model"], item["workload"]) + " --recipe BASELINE.yaml"}
            )
    tools = _tools(document)
    for item in wanted.get("reproductions", []):
        if kind in (None, item["kind"]):
            fmt = LLAMA_BENCH if tools.get(item["recipe"]) == LLAMA_BENCH else RUN_FORMATS[item["kind"]]
            out["reproductions"].append(
                {
                    **item,
                    "command": (
                        f"orv add-run --from {fmt} OUTPUT --recipe {_recipe_arg(paths, item['recipe'])} --sign-with KEY"
                    ),
                }
            )
    if kind in (None, "inference"):
        models = _models(document)
        for item in wanted.get("quality", []):
            entry = {**item, "command": f"orv add-run --from lm-eval DIR --recipe {_recipe_arg(paths, item['recipe'])}"}
            if item.get("status") == "no-reference":  # the model needs its reference run first (docs/quality.md)
                entry["reference_command"] = (
                    f"orv add-run --from lm-eval DIR --reference-for "
                    f"{_quote(models.get(item['recipe'], 'MODEL'))} --quant bf16"
                )
            out["quality"].append(entry)
    return out


SECTIONS = {
    None: ("models", "cells", "references", "reproductions", "quality"),
    "training": ("models", "cells", "references", "reproductions"),
    "inference": ("reproductions", "quality"),
}
_TITLES = {
    "models": "Models with no training recipe",
    "cells": "GPUs of the training protocol with no recipe yet",
    "references": "Models whose training recipes wait for a convergence reference (no T2 without one)",
    "reproductions": "T2 recipes waiting for an independent reproduction (T3 needs a second measurer)",
    "quality": "Recipes waiting for verified quality evidence",
}


def _label(section: str, item: Mapping[str, Any]) -> str:
    if section == "models":
        return f"{item['model_name']} ({item['family']})"
    if section == "cells":
        return f"{item['model_name']} on {item['gpu'].upper()} ({item['workload']})"
    if section == "references":
        count = len(item["recipes"])
        return f"{item['model_name']} ({item['workload']}): {count} recipe{'s' if count != 1 else ''} waiting"
    if section == "reproductions":
        return f"{item['recipe']} ({item['kind']}, {item['tier']}): {'; '.join(item['needs'])}"
    status = STATUS_WORDS.get(item["status"], (None, f"quality {item['status'] or 'unknown'}"))[1]
    return f"{item['recipe']} ({status}): {'; '.join(item['needs'])}"


@dataclass(frozen=True)
class Scope:
    """`orv wanted --model/--gpu/--workload/--limit`: only the items about these (catalog ids), at most `limit`
    a list. An item that does not say (a model with no recipe yet names no GPU) is kept."""

    model: str | None = None
    gpu: str | None = None
    workload: str | None = None
    limit: int | None = None


def _rows(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Recipe id -> its board row (model, GPU, workload), from every board."""
    return {row["recipe"]: row for rows in document.get("boards", {}).values() for row in rows}


def scoped(
    items: Mapping[str, list[dict[str, Any]]], document: Mapping[str, Any], scope: Scope
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int]]:
    """The items `scope` keeps, and per list how many --limit left out."""
    rows = _rows(document)
    wanted = {"model": scope.model, "gpu": scope.gpu, "workload": scope.workload}

    def keeps(item: Mapping[str, Any]) -> bool:
        row = rows.get(item.get("recipe", ""), {})
        for field_name, value in wanted.items():
            stated = item.get(field_name, row.get(field_name))
            if value is not None and stated is not None and str(stated).lower() != value.lower():
                return False
        return True

    out, left = {}, {}
    for section, entries in items.items():
        kept = [item for item in entries if keeps(item)]
        if scope.limit is not None and len(kept) > scope.limit:
            left[section] = len(kept) - scope.limit
            kept = kept[: scope.limit]
        out[section] = kept
    return out, left


def render_text(items: Mapping[str, list[dict[str, Any]]], left: Mapping[str, int] | None = None) -> str:
    lines: list[str] = []
    for section, title in _TITLES.items():
        if section not in items:
            continue
        entries = items[section]
        lines.append(f"{title}: {len(entries)}" + ("" if entries else " (none)"))
        for item in entries:
            lines.append(f"  {_label(section, item)}")
            if "reference_command" in item:
                lines.append(f"    first the model's reference: $ {item['reference_command']}")
            if section == "references" and "orv add-run" not in item["why"]:
                lines.append(f"    first: {item['why']}")  # e.g. the workload has no rule to judge a curve by
            lines.append(f"    $ {item['command']}")
        if left and left.get(section):
            lines.append(f"  … and {left[section]} more (--limit)")
        lines.append("")
    lines.append(
        "GPUS, TP, PP, LOG, BASELINE, OUTPUT, DIR and KEY are yours to fill in; `orv new --help` and "
        "`orv add-run --help` say what each takes."
    )
    if items.get("reproductions"):
        lines.append(
            "KEY is your SSH private key (`ssh-keygen -t ed25519`): a reproduction counts toward T3 once its public "
            "half is registered, a line `NAME KEYTYPE PUBLICKEY` in measurers/allowed_signers, added in a pull "
            "request of its own that a maintainer checks (ORV607; docs/pull-requests.md)."
        )
    return "\n".join(lines) + "\n"


def render(document: Mapping[str, Any], kind: str | None = None, fmt: str = "text", scope: Scope | None = None) -> str:
    """`orv wanted` output: text for a terminal, or JSON with the same lists and commands."""
    items, left = scoped(wanted_items(document, kind), document, scope or Scope())
    if fmt == "json":
        return json.dumps(items, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return render_text(items, left)
