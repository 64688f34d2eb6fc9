"""Adapters: a benchmark tool's own output -> a canonical run document (SPEC §3), for `orv add-run --from`.

Each adapter reads one real format (see its module docstring for the source it follows) and
returns the run document plus notes; metadata the output lacks comes from flags or a recipe
(validator/adapters/common.py states the precedence). Nothing here writes files: the CLI stores
the document with validator.registry.store.store_run_document.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from validator.adapters import aiperf, llamabench, megatron, sglang, trtllm, vllm
from validator.adapters.common import Converted, Problems, RunMetadata, Source
from validator.diagnostics import Diagnostic, Severity
from validator.errors import AdapterError, InputFileError, LoadError
from validator.evidence.agreement import metadata_mismatches
from validator.evidence.identity import (
    Problem,
    architecture_problems,
    checkpoint_problem,
    gguf_problems,
    gguf_quant_problem,
    gpu_problem,
    reported_gpu_problem,
    reported_layout_problems,
    reported_quant_problem,
)
from validator.load import schema as schemas
from validator.load.contributor import (
    LLAMA_BENCH as LLAMA_BENCH_OUTPUT,
)
from validator.load.contributor import (
    RECIPE,
    SERVING_RESULT,
    TOOL_OUTPUT,
    TRAINING_LOG,
    Budget,
    list_beside,
    read_inside,
    read_named,
)
from validator.load.documents import (
    Document,
    decode_utf8,
    parse_yaml,
)
from validator.load.pipeline import validate_run_data
from validator.models import (
    GpuSpec,
    InferenceRecipe,
    ModelSpec,
    RunMeta,
    TrainingRecipe,
    WorkloadSpec,
)
from validator.registry.catalog import catalog_entry, typed_entries
from validator.registry.layout import HARDWARE_PATH, MODELS_PATH, WORKLOADS_PATH
from validator.registry.snapshot import strip_samples
from validator.science.llamabench import facts as llama_bench_facts
from validator.science.throughput import inference_facts, training_facts
from validator.stacks.engines import LLAMA_BENCH

Adapter = Callable[[Source, RunMetadata], Converted]


@dataclass(frozen=True)
class Format:
    """One `--from` format of a tool's output: its adapter, the kind of run it makes, what add-run may read
    of it, and the software component whose version is the tool's when the tool ships with it (vLLM's
    bench client is part of vLLM; Megatron-LM's training loop is released with megatron-core)."""

    convert: Adapter
    kind: str
    budget: Budget
    tool_components: tuple[str, ...] = ()  # none: the tool states its own version or build


# The one list of adapter formats; the tables below and add-run's are derived from it.
FORMATS: dict[str, Format] = {
    "megatron": Format(megatron.convert_megatron, "training", TRAINING_LOG, ("megatron-core", "megatron-lm")),
    "nemo": Format(megatron.convert_nemo, "training", TRAINING_LOG, ("nemo",)),
    "vllm": Format(vllm.convert, "inference", SERVING_RESULT, ("vllm",)),
    "sglang": Format(sglang.convert, "inference", SERVING_RESULT, ("sglang",)),
    # clients that write two files of one run (per-request records and their summary): the second is a
    # companion Source (validator/adapters/common.py), from --report or, for AIPerf, beside the first
    "aiperf": Format(aiperf.convert, "inference", SERVING_RESULT),
    trtllm.TOOL: Format(trtllm.convert, "inference", SERVING_RESULT),
    # llama.cpp's llama-bench (validator/adapters/llamabench.py): its output states its own build
    LLAMA_BENCH: Format(llamabench.convert, "inference", LLAMA_BENCH_OUTPUT),
}
ADAPTER_BY_NAME: dict[str, Adapter] = {name: f.convert for name, f in FORMATS.items()}
KIND_OF = {name: f.kind for name, f in FORMATS.items()}
TOOL_COMPONENTS = {name: f.tool_components for name, f in FORMATS.items()}
REPORT_BESIDE = {"aiperf": aiperf.summary_path}

PLACEHOLDER_CLAIM = {"training": {"tokens_per_s_per_gpu": 1.0}, "inference": {"decode_tok_s": 1.0}}
# The recomputed figures a recipe's claim holds (schema/recipe-*.schema.json `claimed`).
CLAIM_FIELDS = {"training": ("tokens_per_s_per_gpu",), "inference": ("decode_tok_s", "prefill_tok_s", "ttft_ms")}

__all__ = ["ADAPTER_BY_NAME", "AdapterError", "Converted", "RunMetadata", "Source", "convert", "metadata", "recomputed"]


def records_in(path: str, fmt: str | None) -> str | None:
    """The records file inside a tool's output folder that add-run takes whole (AIPerf's artifact folder);
    InputFileError for a folder named through a link (docs/limits.md: orv lists no folder through one)."""
    if fmt not in (None, "aiperf"):
        return None
    if os.path.islink(path):
        raise InputFileError(
            "ORV114",
            path,
            f"{path} is a symbolic link (to {os.readlink(path)}); orv lists no folder through a link",
            f"pass the folder itself: {os.path.realpath(path)}",
        )
    names = list_beside(path)
    return os.path.join(path, aiperf.RECORDS) if aiperf.RECORDS in names else None


def with_report(fmt: str, path: str, raw: bytes, report: str | None) -> Source:
    """The tool's output with its second file: `report` as named, else where the tool writes it beside
    `path` (AIPerf); a file that cannot be read within its budget is a finding (docs/limits.md)."""
    where = report or (REPORT_BESIDE[fmt](path) if fmt in REPORT_BESIDE and path != "-" else None)
    if where is None:
        return Source(path, raw)
    if not report and not os.path.lexists(where):
        return Source(path, raw)  # the adapter says what is missing and how to give it
    try:
        data = read_named(where, TOOL_OUTPUT) if report else read_inside(where, TOOL_OUTPUT)
    except InputFileError as exc:
        raise AdapterError([exc.diagnostic()]) from None
    return Source(path, raw, {"report": Source(where, data)})


def _fail(path: str, code: str, message: str, hint: str, line: int = 1, col: int = 1) -> AdapterError:
    return AdapterError([Diagnostic(code, Severity.ERROR, path, line, col, message, hint)])


def load_recipe(path: str) -> TrainingRecipe | InferenceRecipe:
    """A recipe file read for its metadata; its own problems are reported where they are."""
    try:
        text = decode_utf8(read_named(path, RECIPE))
        data = parse_yaml(text)
    except InputFileError as exc:
        raise AdapterError([exc.diagnostic()]) from None
    except LoadError as exc:
        raise _fail(path, exc.code, exc.message, exc.hint, exc.line, exc.col) from None
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind not in ("training", "inference"):
        raise _fail(
            path,
            "ORV109",
            "not a recipe: `kind` must be training or inference",
            "pass --recipe recipes/<kind>/<model>/<id>.yaml",
        )
    if not data.get("claimed"):
        # A new recipe (`orv new`) has no claim until its first run: add-run reads only the recipe's
        # metadata and fills the claim from the run (--write-recipe), so stand in a figure here.
        data = {**data, "claimed": dict(PLACEHOLDER_CLAIM[kind])}
    issues = schemas.validate(f"recipe-{kind}", data)
    if issues:
        doc = Document(path, data, text)
        raise AdapterError(
            Diagnostic(i.code, Severity.ERROR, path, *doc.locate(i.path), i.message, i.hint) for i in issues
        )
    model = TrainingRecipe if kind == "training" else InferenceRecipe
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _fail(
            path,
            "ORV900",
            f"schema accepted the recipe but the model did not: {exc.errors()[0]['msg']}",
            "this is a bug in orv; please report it",
        ) from None


def load_workload(root: str, workload_id: str) -> WorkloadSpec | None:
    """The workload from the registry's catalog, or None when the catalog does not define it (or is broken:
    `orv check` reports that; add-run just lacks the protocol)."""
    entry: WorkloadSpec | None = catalog_entry(root, WORKLOADS_PATH, workload_id)
    return entry


def _recipe_values(recipe: TrainingRecipe | InferenceRecipe) -> dict[str, Any]:
    values: dict[str, Any] = {
        "kind": recipe.kind,
        "model": recipe.model,
        "checkpoint": getattr(recipe, "checkpoint", None),
        "gpu": recipe.hardware.gpu,
        "gpus": recipe.hardware.count,
        "software": {
            role: c.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
            for role, c in recipe.software.items()
        },
        "measured_at": recipe.measured,
        "measured_by": recipe.author,
    }
    if isinstance(recipe, TrainingRecipe):
        values.update(workload=recipe.workload, layout=recipe.layout.model_dump(mode="json", exclude_none=True))
    else:
        values.update(
            quant=recipe.quant,
            serving=recipe.serving.model_dump(mode="json", exclude_none=True),
            workload=recipe.workload,
        )
    return values


def metadata(fmt: str, root: str, recipe_path: str | None, flags: Mapping[str, Any]) -> RunMetadata:
    """Recipe values, then flags over them, then the workload's protocol and the tool's version."""
    meta = RunMetadata()
    if recipe_path:
        recipe = load_recipe(recipe_path)
        if recipe.kind != KIND_OF[fmt]:
            raise _fail(
                recipe_path,
                "ORV109",
                f"--from {fmt} produces a {KIND_OF[fmt]} run, but the recipe is a {recipe.kind} recipe",
                "pass the recipe this run backs",
            )
        meta = meta.with_values("recipe", **_recipe_values(recipe))
    meta = meta.with_values("flag", **dict(flags))
    if meta.workload and KIND_OF[fmt] == "training":
        workload = load_workload(root, meta.workload)
        if workload is not None:
            meta = meta.with_values(
                "workload",
                seq_len=workload.seq_len,
                global_batch=workload.global_batch,
                dtype=workload.dtype,
                warmup_steps=workload.warmup_steps or 0,
            )
    if meta.workload and fmt == "llama-bench":  # the test the recipe's workload names picks the file's test
        workload = load_workload(root, meta.workload)
        if workload is not None and workload.is_llama_bench:
            meta = meta.with_values("workload", llama_bench_test=(workload.n_prompt, workload.n_gen, workload.n_depth))
    if meta.tool_version is None and meta.software:
        for role, component in meta.software.items():
            if component.get("name") in TOOL_COMPONENTS[fmt] and component.get("version"):
                meta = meta.with_values(f"recipe's `{role}`", tool_version=component["version"])
                break
    return meta


def convert(fmt: str, source: Source, meta: RunMetadata) -> Converted:
    """Adapt, then hold the result to the run-file schema (a failure here names the flag to fix)."""
    converted = ADAPTER_BY_NAME[fmt](source, meta)
    issues = validate_run_data(converted.document)
    if issues:
        problems = Problems(source)
        for issue in issues:
            field = ".".join(str(p) for p in issue.path) or "the run"
            problems.add(
                issue.code,
                f"the run's `{field}` is invalid: {issue.message}",
                f"check the value given for it (flag or recipe); {issue.hint}",
            )
        problems.raise_if_any()
    notes = converted.notes
    if meta.origin.get("tool_version", "").startswith("recipe"):
        notes += (
            f"tool version {meta.tool_version} taken from the {meta.origin['tool_version']} component; "
            f"pass --tool-version if the benchmark client was a different build",
        )
    return Converted(converted.document, notes, converted.stated)


@dataclass(frozen=True)
class Recomputed:
    """A run's headline as orv recomputes it from the raw samples (docs/metrics.md), for add-run to print."""

    kind: str
    headline: dict[str, float]
    samples: int
    excluded: tuple[str, ...]  # what the figures leave out, in words
    unit: str | None = None  # what a sample is, when not the kind's usual (optimizer steps, requests)

    def claim(self) -> dict[str, float]:
        """The figures a recipe's `claimed:` holds, at 4 significant digits (well inside the 1% check)."""
        return {k: float(f"{self.headline[k]:.4g}") for k in CLAIM_FIELDS[self.kind] if k in self.headline}


def recomputed(document: Mapping[str, Any], meta: RunMetadata) -> Recomputed:
    """The headline of a converted run document, and what it excludes (warm-up steps; failed requests are
    named in the adapter's notes)."""
    samples = document.get("samples") or []
    if document["kind"] == "training":
        warmup = meta.warmup_steps
        facts = training_facts(samples, document["hardware"]["count"], warmup) if samples else None
        excluded = (
            (
                f"the first {warmup} warm-up step{'s' if warmup != 1 else ''} of {len(samples)} "
                "(the workload's protocol)",
            )
            if warmup and samples
            else ()
        )
    elif document.get("synthetic"):  # llama-bench: its mean of per-repetition rates (science/llamabench.py)
        facts = llama_bench_facts(samples, document["synthetic"]) if samples else None
        excluded = ()
    else:
        facts = inference_facts(samples, document.get("duration_s")) if samples else None
        excluded = ()
    headline = dict(facts.headline) if facts else {}
    unit = "llama-bench repetitions" if document.get("synthetic") else None
    return Recomputed(document["kind"], headline, len(samples), excluded, unit)


def load_model(root: str, model_id: str) -> ModelSpec | None:
    """The catalog's ModelSpec for model_id, or None when the catalog does not define it (or is broken)."""
    entry: ModelSpec | None = catalog_entry(root, MODELS_PATH, model_id)
    return entry


def load_gpu(root: str, gpu_id: str) -> GpuSpec | None:
    """The catalog's entry for a hardware id (its name, whether it is a GPU or a CPU host), or None when the
    catalog lacks it or cannot be read (`orv check` reports a broken catalog)."""
    entry: GpuSpec | None = catalog_entry(root, HARDWARE_PATH, gpu_id)
    return entry


def check_identity(root: str, recipe_path: str | None, source: Source, converted: Converted) -> None:
    """add-run's gate: what the tool's output states about the model and hardware must agree with the
    recipe (ORV206) and the catalog (ORV226, ORV227) — errors, never notes (validator/evidence/identity.py)."""
    try:
        run = RunMeta.model_validate(strip_samples(converted.document), strict=False)
    except ValidationError:
        return  # convert() already held the document to the schema
    problems = Problems(source)
    spec = load_model(root, run.model)
    hardware = typed_entries(root, HARDWARE_PATH)
    recipe = load_recipe(recipe_path) if recipe_path else None
    if recipe is not None:
        for m in metadata_mismatches(recipe, run):
            # a field the recipe leaves out is not a contradiction: --write-recipe adds what the tool states
            if m.field.startswith(("hardware", "layout", "serving", "model")) and m.recipe_value is not None:
                problems.add(
                    "ORV206",
                    f"the output states {m.field} = {m.run_value!r}, the recipe says {m.recipe_value!r}",
                    "attach the output to the recipe it measured, or fix the recipe",
                )
    named = recipe.checkpoint if isinstance(recipe, InferenceRecipe) else None
    found: Problem | None
    if run.synthetic is not None:  # llama-bench: the GGUF it loaded and the GPU it saw (validator/evidence/identity.py)
        for found in gguf_problems(run.model, spec, run.synthetic.model_filename, run.synthetic.model_n_params):
            problems.add("ORV226", found.message, found.hint)
        found = gpu_problem(
            run.hardware.gpu,
            hardware.get(run.hardware.gpu),
            run.hardware.count,
            run.synthetic.gpu_info,
            run.synthetic.backends,
            hardware,
        )
        if found is not None:
            problems.add("ORV249", found.message, found.hint)
        found = gguf_quant_problem(run.quant, run.synthetic.model_type)
        if found is not None:
            problems.add("ORV228", found.message, found.hint)
    for served in (run.checkpoint, converted.stated.get("tokenizer_id")):  # vLLM: model_id, then tokenizer_id
        found = checkpoint_problem(run.model, spec, served, named) if served else None
        if found is not None:
            problems.add("ORV226", found.message, found.hint)
    for found in architecture_problems(run.model, spec, run):
        problems.add("ORV227", found.message, found.hint)
    # trtllm-bench: the GPU, layout and quantization its report states (the run's `reported`)
    for code, found in (
        ("ORV229", reported_gpu_problem(run, hardware)),
        *(("ORV260", p) for p in reported_layout_problems(run)),
        ("ORV261", reported_quant_problem(run)),
    ):
        if found is not None:
            problems.add(code, found.message, found.hint)
    problems.raise_if_any()
