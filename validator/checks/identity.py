"""ORV226-ORV227: the model a tool's output names is the model the recipe and the catalog say."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.evidence.identity import architecture_problems, checkpoint_problem, gguf_problems
from validator.models import InferenceRecipe
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
