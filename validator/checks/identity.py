"""ORV226-ORV227, ORV229, ORV260-ORV263: the model, GPU, layout and quantization a tool's output names are the
ones the recipe and the catalog say; a GPU's device names name one catalog GPU."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.evidence.identity import (
    Problem,
    architecture_problems,
    checkpoint_problem,
    device_key,
    gguf_problems,
    reported_gpu_problem,
    reported_layout_problems,
    reported_missing,
    reported_quant_problem,
)
from validator.models import InferenceRecipe
from validator.registry.layout import HARDWARE_PATH
from validator.registry.snapshot import Catalog, Snapshot


@check("ORV226", Severity.ERROR, "served checkpoint is not the recipe's model", related_by="r")
def served_checkpoint_is_the_model(snapshot: Snapshot) -> Iterator[Finding]:
    """
    The checkpoint an inference run served (vLLM's `model_id`, SGLang's `model`, AIPerf's model name,
    trtllm-bench's `engine.model`, stored as the run's `checkpoint`) is not one of the catalog model's checkpoints — e.g. a
    `meta-llama/Llama-3.1-8B-Instruct` benchmark attached to a Qwen recipe. When the catalog lists
    `checkpoints` for the model, the served one must be among them (a local path matches by its
    folder name), or be a `derived_checkpoints` entry (fine-tune, quantized export linked to its
    base) that the recipe names in `checkpoint`. When the catalog lists none, the checkpoint's name
    must mention the model's family, name or an alias. A llama-bench run names the GGUF it loaded:
    its file name must mention the model's name, an alias or a listed checkpoint, and llama.cpp's
    exact parameter count must be the catalog's within 10% (an 8B file on a 32B recipe is refused).

    Attach the run to the recipe of the model it served. A derived checkpoint is its own
    configuration: name it in the recipe's `checkpoint`, and have it linked to its base in
    catalog/models.yaml (a catalog pull request, with a source).
    """
    recipes_of = snapshot.references()
    for digest, run in sorted(snapshot.runs.items()):
        meta = run.meta
        if meta is not None and meta.synthetic is not None:  # llama-bench: the GGUF it loaded
            for found in gguf_problems(
                meta.model,
                snapshot.catalog.models.get(meta.model),
                meta.synthetic.model_filename,
                meta.synthetic.model_n_params,
            ):
                yield Finding(run.path, found.message, found.hint, at=tuple(found.field.split(".")))
        if meta is None or meta.checkpoint is None:
            continue
        spec = snapshot.catalog.models.get(meta.model)
        users = [entry.recipe for entry in recipes_of.get(digest, []) if isinstance(entry.recipe, InferenceRecipe)]
        named = next((r.checkpoint for r in users if r.checkpoint), None)
        problem = checkpoint_problem(meta.model, spec, meta.checkpoint, named)
        if problem is not None:
            yield Finding(run.path, problem.message, problem.hint, line=1, col=1)


@check("ORV227", Severity.ERROR, "trained model differs from the catalog model", scope="run-file")
def trained_architecture_is_the_model(run: Any, catalog: Catalog) -> Iterator[Finding]:
    """
    What a training log printed about the model (Megatron-LM's `num_layers`, `hidden_size`,
    `num_attention_heads`, `num_experts`, `moe_router_topk`, padded vocabulary and "Total number of
    parameters in billions", stored as the run's `architecture`) contradicts the catalog model the
    run claims — e.g. a 1.5B, 16-layer model's log attached to a 48-layer 30B recipe. Layers, hidden
    size, heads and expert counts must be equal; the vocabulary within 1%; the parameter count
    within 10% (Megatron's theoretical count against the catalog's rounded figure).

    Attach the log to the recipe of the model it trained. If the catalog is wrong, correct
    catalog/models.yaml in its own pull request, with a source.
    """
    meta = run.meta
    if meta is None or meta.kind != "training":
        return
    for problem in architecture_problems(meta.model, catalog.models.get(meta.model), meta):
        yield Finding(run.path, problem.message, problem.hint, at=tuple(problem.field.split(".")))


@check("ORV263", Severity.ERROR, "one device name listed for two catalog GPUs", scope="registry", per_file=True)
def device_names_name_one_gpu(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A GPU's `device_names` in catalog/hardware.yaml are the names its driver reports (nvidia-smi, CUDA's
    device name), which llama-bench's `gpu_info` and trtllm-bench's `machine.name` print. A spelling
    listed under two catalog entries would let a run of one back a recipe of the other (ORV249, ORV229):
    each spelling names exactly one GPU (compared with case and runs of spaces ignored). Keep the
    spelling on the entry of the GPU that reports it, with the output it was seen in.
    """
    owners: dict[str, list[str]] = {}
    for gpu_id, spec in sorted(snapshot.catalog.hardware.items()):
        for name in spec.device_names:
            owners.setdefault(device_key(name), []).append(gpu_id)
    for gpu_id, spec in sorted(snapshot.catalog.hardware.items()):
        for i, name in enumerate(spec.device_names):
            others = [o for o in owners[device_key(name)] if o != gpu_id]
            if others:
                yield Finding(
                    HARDWARE_PATH,
                    f"`{name}` is listed as a device name of `{gpu_id}` and of {', '.join(f'`{o}`' for o in others)}",
                    "keep the spelling only on the entry of the GPU that reports it (with its source)",
                    at=("hardware", gpu_id, "device_names", i),
                )


def _located(run: Any, found: Problem) -> Finding:
    return Finding(run.path, found.message, found.hint, at=tuple(found.field.split(".")))


@check("ORV262", Severity.ERROR, "trtllm-bench run without its report's setup", scope="run-file")
def trtllm_run_states_its_report(run: Any, catalog: Catalog) -> Iterator[Finding]:
    """
    A trtllm-bench run carries what its report (--report_json) states about the setup, unchanged, in
    `reported`: the GPU's device name (`machine.name`), the parallel layout (`world_info`: tp_size,
    pp_size, ep_size, world_size) and the engine's quantization and dtypes. Without it nothing the
    gate can read says which GPU, layout or quantization ran (ORV229, ORV260, ORV261). Only a
    trtllm-bench run has it. Store the run with `orv add-run --from trtllm-bench REQUESTS.json --report
    REPORT.json`, which copies them.
    """
    if run.meta is not None and (found := reported_missing(run.meta)) is not None:
        yield _located(run, found)


@check("ORV229", Severity.ERROR, "the GPU trtllm-bench names is not the run's", scope="run-file")
def trtllm_gpu_is_the_runs(run: Any, catalog: Catalog) -> Iterator[Finding]:
    """
    trtllm-bench's report names the GPU it ran on (`machine.name`, the device name nvidia-smi reports,
    e.g. `NVIDIA H100 80GB HBM3`), kept as the run's `reported.machine_name`. It must be one of the
    `device_names` of the run's catalog GPU (its recipe's), exactly: a B200's report does not back an H100
    recipe, and a name no catalog GPU lists cannot be checked. Attach the run to the recipe of the GPU it
    ran on, or add the GPU's spelling to its `device_names` in catalog/hardware.yaml with the output it
    was seen in (its own pull request).
    """
    if run.meta is not None and (found := reported_gpu_problem(run.meta, catalog.hardware)) is not None:
        yield _located(run, found)


@check("ORV260", Severity.ERROR, "trtllm-bench's parallel layout is not the run's", scope="run-file")
def trtllm_layout_is_the_runs(run: Any, catalog: Catalog) -> Iterator[Finding]:
    """
    trtllm-bench's report states its layout (`world_info`: tp_size, pp_size, world_size), kept in the
    run's `reported`. TensorRT-LLM runs tp_size × pp_size ranks, one per GPU, so tp_size × pp_size must
    equal world_size; world_size must be the run's GPU count (its recipe's), and tp/pp the run's
    `serving.tp`/`serving.pp` where it states them. A report saying tp_size 2 on world_size 1 was edited.
    Attach the run to the recipe of the layout it ran, or give the report trtllm-bench wrote.
    """
    if run.meta is not None:
        for found in reported_layout_problems(run.meta):
            yield _located(run, found)


@check("ORV261", Severity.ERROR, "trtllm-bench's quantization is not the run's", scope="run-file")
def trtllm_quant_is_the_runs(run: Any, catalog: Catalog) -> Iterator[Finding]:
    """
    trtllm-bench's report states the engine's quantization (`engine.quantization`: TensorRT-LLM's
    QuantAlgo, e.g. FP8, NVFP4, W4A16_AWQ; none when the weights run unquantized) and dtype, kept in the
    run's `reported`. The run's `quant` (its recipe's) must say the same: a quantized engine cannot back
    an unquantized (bf16, fp16) recipe — it is another configuration, with its own quality evidence —
    nor an unquantized engine a quantized recipe; a quantized recipe's quant begins with the algorithm's
    words (FP8 → `fp8`, W4A16_AWQ → `w4a16-awq`), an unquantized one is the engine's dtype (bfloat16 →
    `bf16`). A KV cache the engine quantized (`engine.kv_cache_dtype` FP8, INT8 …) under an unquantized
    quant is refused the same way (name it in quant, `bf16-fp8-kv`, with its quality evidence), and a
    report that states neither quantization nor dtype cannot be checked: it is refused, not trusted.
    Attach the run to the recipe of the model it served.
    """
    if run.meta is not None and (found := reported_quant_problem(run.meta)) is not None:
        yield _located(run, found)
