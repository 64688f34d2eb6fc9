"""ORV248-ORV249: a llama-bench run was built from the llama.cpp the recipe pins (validator/stacks/llamacpp.py) and ran
on the hardware it states, a GPU or a CPU host (validator/evidence/identity.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.evidence.identity import gpu_problem
from validator.registry.snapshot import Catalog, Snapshot
from validator.stacks.llamacpp import TOOL, pin_problem


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
        assert run.meta is not None  # recipe_runs() yields only runs whose metadata loaded
        tool = run.meta.tool
        if tool.name != TOOL:
            continue
        why = pin_problem(recipe.software.get("engine"), tool.version, tool.commit)
        if why:
            yield Finding(
                entry.path,
                f"run sha256:{run.name_digest[:12]}…: {why}",
                f"set `software.engine: {{name: llama.cpp, version: {tool.version}"
                + (f", commit: {tool.commit}" if tool.commit else "")
                + "}` or attach the run to the "
                "recipe of that build",
                at=("runs", i),
            )


@check("ORV249", Severity.ERROR, "llama-bench ran on other hardware than the run states", scope="run-file")
def llama_bench_gpu_is_the_runs(run: Any, catalog: Catalog) -> Iterator[Finding]:
    """
    llama-bench writes the GPUs it used (`gpu_info`, e.g. `NVIDIA GeForce RTX 3090`) and the
    backends it was built with (`backends`: CUDA, Vulkan, ROCm, Metal, or CPU). The run's
    hardware (from its recipe) must be what llama-bench names. On a GPU (catalog/hardware.yaml,
    `device: gpu`, the default) llama-bench must have used a GPU backend, and the model number of
    the catalog GPU's name (`3090`, `H100`) must appear in `gpu_info`. A CPU-only run (backends CPU,
    BLAS or RPC; no GPU named) is evidence for a CPU host only: a catalog entry with `device: cpu`.
    A run that used a GPU backend cannot back a CPU host's recipe, and a GPU backend with no device
    named means the file was edited. Attach the run to the recipe of the hardware it ran on, or
    rerun llama-bench built with the GPU's backend.
    """
    meta = run.meta
    if meta is None or meta.synthetic is None:
        return
    found = gpu_problem(
        meta.hardware.gpu, catalog.hardware.get(meta.hardware.gpu), meta.synthetic.gpu_info, meta.synthetic.backends
    )
    if found is not None:
        yield Finding(run.path, found.message, found.hint, at=tuple(found.field.split(".")))
