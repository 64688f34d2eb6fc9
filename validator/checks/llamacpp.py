"""ORV248: a llama-bench run was built from the llama.cpp the recipe pins (validator/llamacpp.py)."""

from __future__ import annotations

from typing import Iterator

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.llamacpp import TOOL, pin_problem
from validator.registry import Snapshot


@check("ORV248", Severity.ERROR, "llama-bench build differs from the recipe's llama.cpp pin", related_by="r")
def llama_bench_build_is_the_engine_pin(snapshot: Snapshot) -> Iterator[Finding]:
    """
    llama-bench records the llama.cpp build it was compiled from: `build_number` and `build_commit`,
    stored as the run's tool version `b<build_number>` and commit. A llama.cpp build is pinned as
    that tag plus its commit (docs/versions.md), so the recipe's engine must be llama.cpp with the
    same `version: b<N>` (and, when both state one, the same commit: a short hash matches its full
    form). A run of build b6800 attached to a recipe pinned to b7000 measured other code. Pin the
    recipe's engine to the build that ran, or attach the run to the recipe of that build.
    """
    for entry, recipe, i, run in snapshot.recipe_runs():
        tool = run.meta.tool
        if tool.name != TOOL:
            continue
        why = pin_problem(recipe.software.get("engine"), tool.version, tool.commit)
        if why:
            yield Finding(entry.path, f"run sha256:{run.name_digest[:12]}…: {why}",
                          f"set `software.engine: {{name: llama.cpp, version: {tool.version}"
                          + (f", commit: {tool.commit}" if tool.commit else "") + "}` or attach the run to the "
                          "recipe of that build", at=("runs", i))
