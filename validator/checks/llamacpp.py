"""ORV228, ORV248-ORV249: a llama-bench run was built from the llama.cpp the recipe pins (validator/stacks/llamacpp.py) and ran
on the hardware it states, a GPU or a CPU host, with the quantisation it states (validator/evidence/identity.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.evidence.identity import gguf_quant_problem, gpu_problem
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
    llama-bench writes the GPUs it saw (`gpu_info`: every GPU device's name as its driver reports it,
    joined by ", ", e.g. `NVIDIA GeForce RTX 3090, NVIDIA GeForce RTX 3090`) and the backends it was built
    with (`backends`: CUDA, Vulkan, ROCm, Metal, or CPU). The run's hardware (from its recipe) must be
    exactly what llama-bench names. On a GPU (catalog/hardware.yaml, `device: gpu`, the default)
    llama-bench must have used a GPU backend, every device it names must be the run's catalog GPU by one
    of its `device_names` (the exact spelling, not a model number inside it: `NVIDIA GeForce RTX 3090 Ti`
    is not an RTX 3090, an RTX PRO 6000 Max-Q is not the Workstation Edition), and it must name as many
    devices as the run's GPU count (a box of an RTX 5090 and an RTX 3090 is not one RTX 3090). A CPU-only
    run (backends CPU, BLAS or RPC; no GPU named) is evidence for a CPU host only: a catalog entry with
    `device: cpu`. A run that used a GPU backend cannot back a CPU host's recipe, and a GPU backend with
    no device named means the file was edited. Attach the run to the recipe of the hardware it ran on
    (measure with only the recipe's GPUs visible), or add the GPU's device name to its `device_names`
    with the output it was seen in.
    """
    meta = run.meta
    if meta is None or meta.synthetic is None:
        return
    found = gpu_problem(
        meta.hardware.gpu,
        catalog.hardware.get(meta.hardware.gpu),
        meta.hardware.count,
        meta.synthetic.gpu_info,
        meta.synthetic.backends,
        catalog.hardware,
    )
    if found is not None:
        yield Finding(run.path, found.message, found.hint, at=tuple(found.field.split(".")))


@check(
    "ORV228", Severity.ERROR, "llama-bench loaded a GGUF of another quantisation than the run states", scope="run-file"
)
def llama_bench_quant_is_the_runs(run: Any, catalog: Catalog) -> Iterator[Finding]:
    """
    llama-bench writes the GGUF's file type in `model_type` as llama.cpp names it (`qwen3 8B Q4_K -
    Medium`, `llama 7B Q2_K - Medium`, `... IQ4_XS - 4.25 bpw`, `... BF16`; llama.cpp's
    `llama_model_ftype_name`). The run's `quant` (its recipe's) must be that file type, written as
    llama.cpp's own name for it (q4_k_m, q2_k, iq4_xs, bf16, q8_0, f32; case, `-` and `_` are one, and
    llama-quantize's aliases q4_k = q4_k_m, q5_k = q5_k_m, q3_k = q3_k_m hold): a Q2_K file measured for a
    q4_k_m recipe is a smaller, faster model. Attach the run to the recipe of the file it loaded, or
    measure the file the recipe names.
    """
    meta = run.meta
    if meta is None or meta.synthetic is None:
        return
    found = gguf_quant_problem(meta.quant, meta.synthetic.model_type)
    if found is not None:
        yield Finding(run.path, found.message, found.hint, at=tuple(found.field.split(".")))
