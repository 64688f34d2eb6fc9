"""Is the model a tool's output names the model the recipe and the catalog say? (ORV226, ORV227, ORV235, add-run)

Served checkpoint (vLLM `model_id`, SGLang `model`, recorded as the run's `checkpoint`), against the
catalog model:
  - the catalog lists `checkpoints`: the served one must be one of them (Hugging Face ids; a local
    path matches by its last folder name), or one of its `derived_checkpoints` (fine-tune,
    quantized export, linked to a listed base) that the recipe names in its own `checkpoint`;
  - the catalog lists none: the checkpoint's name must contain the model's name or an alias (letters
    and digits only, case ignored) — `Qwen/Qwen3-14B` is no Qwen3.8-27B, whatever the family — and even
    then the run is only resembling, not proved: it reaches at most T1 (`unchecked_checkpoint`, tiers.py).
Printed architecture (Megatron-LM's arguments and parameter count, recorded as the run's
`architecture`), against the catalog: layers, hidden size, attention heads, experts and experts per
token exactly; the vocabulary within 1% (tokenizers and padded embedding tables differ by a few
hundred entries); the total parameter count within PARAMS_TOLERANCE.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from validator.models import DerivedCheckpoint, EngineReport, GpuSpec, ModelSpec, RunMeta
from validator.quality.status import kv_quantized
from validator.registry.layout import HARDWARE_PATH, MODELS_PATH
from validator.stacks.launch_args import UNQUANTIZED_KV
from validator.stacks.llamacpp import gguf_ftype, quant_ftype

PARAMS_TOLERANCE = 0.10  # Megatron's theoretical count vs the catalog's rounded figure (30 for 30.5B)
VOCAB_TOLERANCE = 0.01


@dataclass(frozen=True)
class Problem:
    field: str  # dotted path in the run file
    message: str
    hint: str


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _names(checkpoint: str) -> set[str]:
    """The forms a served checkpoint can match by: the id itself, and its last one or two path parts."""
    parts = [p for p in checkpoint.strip().rstrip("/").split("/") if p]
    out = {checkpoint.strip().lower()}
    if parts:
        out.add(parts[-1].lower())
    if len(parts) >= 2:
        out.add("/".join(parts[-2:]).lower())
    return out


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")  # owner/name, as the Hugging Face Hub spells a repository


def names_checkpoint(checkpoint: str, listed: str) -> bool:
    """Does a tool's model path or Hugging Face id name the listed checkpoint? Case ignored (the Hub
    resolves ids so). A Hub id names exactly its repository: `someone/Qwen3-8B` is not `Qwen/Qwen3-8B`,
    whoever's name it copies. A local path (absolute, or deeper than owner/name) names by its last one or
    two folders, the only part of it that says which model it holds."""
    served = checkpoint.strip().rstrip("/")
    if "/" in listed and _HUB_ID.fullmatch(served):
        return served.lower() == listed.lower()
    names = _names(served)
    return listed.lower() in names or listed.split("/")[-1].lower() in names


# Why a checkpoint is not a catalog model's (Mismatch.kind)
NOT_RECIPES = "not-recipes"  # not the checkpoint the recipe names (ORV235)
NOT_LISTED = "not-listed"  # not one of the model's `checkpoints`
UNNAMED_DERIVED = "unnamed-derived"  # derived from a listed one, but the recipe does not name it
OTHER_MODEL = "other-model"  # no `checkpoints` listed, and its name mentions no family, name or alias


@dataclass(frozen=True)
class Mismatch:
    kind: str
    derived: DerivedCheckpoint | None = None  # for UNNAMED_DERIVED


def checkpoint_mismatch(spec: ModelSpec, checkpoint: str, recipe_checkpoint: str | None) -> Mismatch | None:
    """The one rule for "is this checkpoint the catalog model's" (module docstring), or None when it is."""
    if spec.checkpoints:
        if any(names_checkpoint(checkpoint, c) for c in spec.checkpoints):
            return None
        derived = next((d for d in spec.derived_checkpoints if names_checkpoint(checkpoint, d.id)), None)
        if derived is not None and any(names_checkpoint(derived.base, c) for c in spec.checkpoints):
            if recipe_checkpoint and names_checkpoint(checkpoint, recipe_checkpoint):
                return None
            return Mismatch(UNNAMED_DERIVED, derived)
        return Mismatch(NOT_LISTED)
    # no list: the name must at least mention the model's own name or an alias (the family alone lets
    # Qwen/Qwen3-14B pass for Qwen3.8-27B); even then the run is unchecked and stays at T1 (unchecked_checkpoint)
    tokens = {_norm(t) for t in (spec.name, *spec.aliases) if _norm(t)}
    return None if any(t in _norm(checkpoint) for t in tokens) else Mismatch(OTHER_MODEL)


def unchecked_checkpoint(model_id: str, spec: ModelSpec | None, checkpoint: str | None) -> str | None:
    """Why a served checkpoint cannot be proved the catalog model's (tiers.py caps the run at T1), or None:
    only an exact repository the catalog lists (`checkpoints`, with its source) proves it; a model that
    lists none can only be matched by name, which is resemblance, not identity."""
    if checkpoint is None or spec is None or spec.checkpoints:
        return None
    return (
        f"catalog model `{model_id}` lists no `checkpoints` in {MODELS_PATH}, so the served `{checkpoint}` "
        "cannot be checked against its exact repository (T1 at most until the catalog names them, with a source)"
    )


def evaluated_mismatch(spec: ModelSpec | None, evaluated: str | None, recipe_checkpoint: str | None) -> Mismatch | None:
    """ORV235 (`orv add-run --from lm-eval` and `orv check`): the checkpoint a quality run evaluated must
    name the recipe's `checkpoint` when it names one; for a recipe without one, and for a model's
    reference run (recipe_checkpoint None), it must be the catalog model's by checkpoint_mismatch."""
    checkpoint = evaluated or ""
    if recipe_checkpoint:
        return None if names_checkpoint(checkpoint, recipe_checkpoint) else Mismatch(NOT_RECIPES)
    return checkpoint_mismatch(spec, checkpoint, None) if spec is not None else None


def checkpoint_problem(
    model_id: str, spec: ModelSpec | None, checkpoint: str, recipe_checkpoint: str | None
) -> Problem | None:
    """ORV226: why the served checkpoint is not (allowed as) model_id's, or None."""
    if spec is None:
        return None  # an unknown model id is ORV115's
    found = checkpoint_mismatch(spec, checkpoint, recipe_checkpoint)
    if found is None:
        return None
    if found.derived is not None:
        return Problem(
            "checkpoint",
            f"the run served `{checkpoint}`, a checkpoint derived from "
            f"`{found.derived.base}`, but the recipe does not name it",
            f"add `checkpoint: {found.derived.id}` to the recipe (a derived checkpoint is its own configuration)",
        )
    if found.kind == NOT_LISTED:
        return Problem(
            "checkpoint",
            f"the run served `{checkpoint}`, which is not a checkpoint of catalog model "
            f"`{model_id}` ({', '.join(spec.checkpoints)})",
            "attach the run to the recipe of the model it served; a fine-tune or quantized export needs a "
            f"`derived_checkpoints` entry in {MODELS_PATH} (its own pull request, with a source)",
        )
    return Problem(
        "checkpoint",
        f"the run served `{checkpoint}`, whose name does not mention catalog model "
        f"`{model_id}` ({spec.name}, family {spec.family})",
        "attach the run to the recipe of the model it served, or list the checkpoint under the model's "
        f"`checkpoints` in {MODELS_PATH} with its source",
    )


def architecture_problems(model_id: str, spec: ModelSpec | None, run: RunMeta) -> list[Problem]:
    """Each printed architecture figure that contradicts the catalog model."""
    stated = run.architecture
    if spec is None or stated is None:
        return []
    out: list[Problem] = []
    hint = (
        f"attach the log to the recipe of the model it trained; if {MODELS_PATH} is wrong about "
        f"`{model_id}`, correct it in its own pull request with a source"
    )
    arch = spec.architecture
    exact = [("layers", stated.layers, spec.layers)]
    if arch is not None:
        exact += [
            ("hidden_size", stated.hidden_size, arch.hidden_size),
            ("attention_heads", stated.attention_heads, arch.attention_heads),
            ("experts", stated.experts, arch.experts),
            ("experts_per_token", stated.experts_per_token, arch.experts_per_token),
        ]
    for name, printed, known in exact:
        if printed is not None and known is not None and printed != known:
            out.append(
                Problem(
                    f"architecture.{name}",
                    f"the log trained a model with {name} {printed}; catalog model `{model_id}` has {known}",
                    hint,
                )
            )
    if stated.experts is not None and spec.moe is False:
        out.append(
            Problem(
                "architecture.experts",
                f"the log trained {stated.experts} experts; catalog model `{model_id}` is dense",
                hint,
            )
        )
    if (
        arch is not None
        and arch.vocab_size
        and stated.vocab_size
        and abs(stated.vocab_size - arch.vocab_size) > VOCAB_TOLERANCE * arch.vocab_size
    ):
        out.append(
            Problem(
                "architecture.vocab_size",
                f"the log's vocabulary has {stated.vocab_size} entries; catalog "
                f"model `{model_id}` has {arch.vocab_size}",
                hint,
            )
        )
    if spec.params_b and stated.params_b and abs(stated.params_b - spec.params_b) > PARAMS_TOLERANCE * spec.params_b:
        out.append(
            Problem(
                "architecture.params_b",
                f"the log's model has {stated.params_b:g}B parameters; catalog "
                f"model `{model_id}` has {spec.params_b:g}B (tolerance "
                f"{PARAMS_TOLERANCE:.0%})",
                hint,
            )
        )
    return out


# ---- llama-bench: the GGUF it loaded and the devices it saw (validator/adapters/llamabench.py) ----

CPU_BACKENDS = frozenset({"CPU", "BLAS", "RPC"})  # llama-bench's `backends` that use no GPU of the host


def gguf_problems(model_id: str, spec: ModelSpec | None, filename: str, n_params: int) -> list[Problem]:
    """Why a GGUF llama-bench loaded (its file name, its exact parameter count) is not model_id's.

    A GGUF file is named after the model by the people who quantise it (`Qwen3-8B-Q4_K_M.gguf`), so its
    name must contain the model's name, an alias or the last part of a listed checkpoint (letters and
    digits only, case ignored); and llama.cpp counts its weights exactly (`model_n_params`), which must be
    the catalog's parameter count within PARAMS_TOLERANCE — the family alone would let an 8B file back
    a 32B recipe."""
    if spec is None:
        return []  # an unknown model id is ORV115's
    out: list[Problem] = []
    base = filename.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    names = {_norm(t) for t in (spec.name, *spec.aliases, *(c.split("/")[-1] for c in spec.checkpoints)) if _norm(t)}
    if not any(n in _norm(base) for n in names):
        out.append(
            Problem(
                "synthetic.model_filename",
                f"llama-bench loaded `{base}`, whose name does not mention catalog model `{model_id}` ({spec.name})",
                "attach the run to the recipe of the model it loaded, or name the GGUF file after its "
                "model (as its publisher did)",
            )
        )
    if spec.params_b and abs(n_params / 1e9 - spec.params_b) > PARAMS_TOLERANCE * spec.params_b:
        out.append(
            Problem(
                "synthetic.model_n_params",
                f"llama-bench's model has {n_params:,} parameters; catalog "
                f"model `{model_id}` has {spec.params_b:g}B (tolerance "
                f"{PARAMS_TOLERANCE:.0%})",
                "attach the run to the recipe of the model it loaded",
            )
        )
    return out


def gpu_problem(
    gpu_id: str,
    spec: GpuSpec | None,
    count: int,
    gpu_info: str,
    backends: str,
    hardware: Mapping[str, GpuSpec],
) -> Problem | None:
    """Why the devices llama-bench saw (`gpu_info`: the GPU descriptions, `backends`: the non-CPU backends
    it was built with, or `CPU`) are not the recipe's hardware. A run that used no GPU backend is evidence
    for a CPU host only (a catalog entry with `device: cpu`): a GPU recipe is not measured by it, and a
    CPU recipe is not measured by a run that used a GPU."""
    gpu_backends = [b.strip() for b in backends.split(",") if b.strip() and b.strip() not in CPU_BACKENDS]
    info = gpu_info.strip()
    if gpu_backends and not info:
        return Problem(
            "synthetic.gpu_info",
            f"llama-bench used the {', '.join(gpu_backends)} backend but names no GPU",
            "give the output llama-bench wrote, unchanged",
        )
    if spec is None:
        return None  # an unknown hardware id is ORV115's
    if spec.device == "cpu":
        if gpu_backends or info:
            ran = f"the {', '.join(gpu_backends)} backend on `{info}`" if gpu_backends else f"`{info}`"
            return Problem(
                "hardware.gpu",
                f"llama-bench used {ran}; the run's hardware (its recipe's) `{gpu_id}` ({spec.name}) is a CPU host",
                "attach the run to the recipe of the GPU it ran on, or measure the CPU host with a "
                "CPU-only llama.cpp build",
            )
        return None
    if not gpu_backends:
        named = f"names `{info}` but " if info else "names no GPU and "
        return Problem(
            "hardware.gpu",
            f"llama-bench {named}used no GPU backend (backends: {backends or 'none'}): "
            f"it ran on the CPU, and the run's hardware (its recipe's) `{gpu_id}` "
            f"({spec.name}) is a GPU",
            f"attach the run to the recipe of the CPU host it ran on (a {HARDWARE_PATH} entry with "
            "`device: cpu`), or rerun llama-bench built with the GPU's backend (-DGGML_CUDA=ON, "
            "-DGGML_VULKAN=ON, -DGGML_HIP=ON; Metal on Apple)",
        )
    return devices_problem("synthetic.gpu_info", "llama-bench", gpu_id, spec, count, gpu_info_devices(info), hardware)


def gpu_info_devices(gpu_info: str) -> list[str]:
    """llama-bench's `gpu_info`: every GPU device's description joined by ", " (llama-bench.cpp
    `get_gpu_info`: each ggml device of type GPU or IGPU, `ggml_backend_dev_description`, which is the
    driver's device name, e.g. CUDA's `cudaDeviceProp.name`)."""
    return [d.strip() for d in gpu_info.split(", ") if d.strip()]


# ---- the devices a tool names, against catalog/hardware.yaml's `device_names` ----


def device_key(name: str) -> str:
    """A device name compared as a driver prints it: case and runs of white space ignored, nothing else
    (`RTX 3090` is not `NVIDIA GeForce RTX 3090`, and `NVIDIA GeForce RTX 3090 Ti` is another GPU)."""
    return " ".join(name.split()).casefold()


def gpus_named(device: str, hardware: Mapping[str, GpuSpec]) -> list[str]:
    """The catalog GPUs whose `device_names` hold this exact spelling: one when the catalog is sound (ORV263)."""
    key = device_key(device)
    return sorted(gid for gid, spec in hardware.items() if any(device_key(n) == key for n in spec.device_names))


def _spelled(gpu_id: str, spec: GpuSpec) -> str:
    if spec.device_names:
        return f"`{gpu_id}` ({spec.name}) reports itself as " + " or ".join(f"`{n}`" for n in spec.device_names)
    return f"`{gpu_id}` ({spec.name}) lists no `device_names` in {HARDWARE_PATH}"


def devices_problem(
    field: str,
    tool: str,
    gpu_id: str,
    spec: GpuSpec,
    count: int | None,
    devices: Sequence[str],
    hardware: Mapping[str, GpuSpec],
) -> Problem | None:
    """Why the devices a tool names are not the run's `count` × `gpu_id`, or None when they are. Each device
    must be one catalog GPU by its exact device name, that GPU the run's; a tool that lists every device
    it saw (llama-bench) must list `count` of them (count None: the tool names one device for all, as
    trtllm-bench's `machine.name` does, and the count is checked from its world size instead)."""
    shown = ", ".join(devices)
    for device in devices:
        ids = gpus_named(device, hardware)
        if not ids:
            return Problem(
                field,
                f"{field}: {tool} names the device `{device}`, which is no catalog GPU's device name; "
                f"the run's GPU {_spelled(gpu_id, spec)}",
                "attach the run to the recipe of the GPU it ran on; if that GPU is in the catalog under another "
                f"spelling, add the spelling to its `device_names` in {HARDWARE_PATH} with the output it was seen "
                "in (`device_names_source`), in its own pull request",
            )
        if ids != [gpu_id]:
            other = ", ".join(f"`{i}`" for i in ids)
            return Problem(
                field,
                f"{field}: {tool} ran on `{shown}`; `{device}` is catalog GPU {other}, the run's GPU (its "
                f"recipe's) is `{gpu_id}` ({spec.name})",
                "attach the run to the recipe of the GPU it ran on",
            )
    if count is not None and len(devices) != count:
        return Problem(
            field,
            f"{field}: {tool} saw {len(devices)} × `{gpu_id}` (`{shown}`); the run's hardware (its recipe's) "
            f"is {count} × `{gpu_id}`",
            f"attach the run to the recipe of {len(devices)} GPUs, or measure again with only the recipe's "
            f"{count} GPU(s) visible (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES)",
        )
    return None


def gguf_quant_problem(quant: str | None, model_type: str) -> Problem | None:
    """Why the GGUF llama-bench loaded is not quantised as the run (its recipe) says: llama.cpp's file type
    in `model_type` (validator/stacks/llamacpp.py, `gguf_ftype`) must equal the run's `quant` read as a file
    type's name (`quant_ftype`): a Q2_K file is not a q4_k_m recipe's evidence."""
    ftype = gguf_ftype(model_type)
    if ftype is None:
        return Problem(
            "synthetic.model_type",
            f"synthetic.model_type: llama-bench's `{model_type}` names no GGUF file type llama.cpp has, so the "
            f"run's quant `{quant}` cannot be checked",
            "give the output llama-bench wrote, unchanged; a file type newer than orv's table "
            "(validator/stacks/llamacpp.py) needs the table extended first",
        )
    if quant is None or quant_ftype(quant) != ftype:
        return Problem(
            "synthetic.model_type",
            f"synthetic.model_type: llama-bench loaded a {ftype} GGUF (`{model_type}`); the run's quant (its "
            f"recipe's) is `{quant}`",
            f"attach the run to the recipe of the {ftype} file (`quant: {ftype}`), or measure the file the "
            "recipe names",
        )
    return None


# ---- trtllm-bench: what its report states about the setup (the run's `reported`, adapters/trtllm.py) ----

TRTLLM_BENCH = "trtllm-bench"
# a recipe's `quant` for weights left in their trained precision (no quantization algorithm)
UNQUANTIZED = frozenset({"bf16", "bfloat16", "fp16", "f16", "float16", "fp32", "f32", "float32", "none", "full"})
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "f16": "fp16", "float32": "fp32", "f32": "fp32"}


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", name.lower()) if t]


def reported_missing(run: RunMeta) -> Problem | None:
    """ORV262: a trtllm-bench run states its report's setup (`reported`), and only a trtllm-bench run does."""
    if run.tool.name == TRTLLM_BENCH and run.reported is None:
        return Problem(
            "tool",
            "reported: the trtllm-bench run has no `reported` block, so the GPU, layout and quantization its "
            "report states cannot be compared with the recipe",
            "store the run with `orv add-run --from trtllm-bench REQUESTS.json --report REPORT.json`, which "
            "copies them from the report",
        )
    if run.reported is not None and run.tool.name != TRTLLM_BENCH:
        return Problem(
            "reported",
            f"reported: the block is trtllm-bench's report, but the run's tool is `{run.tool.name}`",
            "give the run file its tool wrote, unchanged",
        )
    return None


def reported_gpu_problem(run: RunMeta, hardware: Mapping[str, GpuSpec]) -> Problem | None:
    """ORV229: trtllm-bench's `machine.name` (the first GPU's device name) must be the run's catalog GPU."""
    spec = hardware.get(run.hardware.gpu)
    if run.reported is None or spec is None:
        return None  # ORV262; an unknown hardware id is ORV115's
    return devices_problem(
        "reported.machine_name", TRTLLM_BENCH, run.hardware.gpu, spec, None, [run.reported.machine_name], hardware
    )


def reported_layout_problems(run: RunMeta) -> list[Problem]:
    """ORV260: the report's layout must be whole (tp_size × pp_size = world_size, TensorRT-LLM's Mapping)
    and the run's: world_size GPUs, and the tp/pp the run's serving states."""
    rep = run.reported
    if rep is None:
        return []
    out: list[Problem] = []
    if rep.tp_size * rep.pp_size != rep.world_size:
        out.append(
            Problem(
                "reported.world_size",
                f"reported.world_size: trtllm-bench's report states tp_size {rep.tp_size} × pp_size {rep.pp_size} "
                f"= {rep.tp_size * rep.pp_size} GPUs but world_size {rep.world_size}",
                "give the --report_json file trtllm-bench wrote, unchanged",
            )
        )
    if rep.world_size != run.hardware.count:
        out.append(
            Problem(
                "reported.world_size",
                f"reported.world_size: trtllm-bench ran on {rep.world_size} GPU(s); the run's hardware (its "
                f"recipe's) is {run.hardware.count} × `{run.hardware.gpu}`",
                f"attach the run to the recipe of {rep.world_size} GPU(s)",
            )
        )
    serving = run.serving
    for key, stated in (("tp", rep.tp_size), ("pp", rep.pp_size)):
        own = getattr(serving, key, None) if serving is not None else None
        if own is not None and own != stated:
            out.append(
                Problem(
                    f"reported.{key}_size",
                    f"reported.{key}_size: trtllm-bench's report states {key}_size {stated}; the run's serving.{key} "
                    f"is {own}",
                    "attach the run to the recipe of the layout it ran",
                )
            )
    return out


def reported_quant_problem(run: RunMeta) -> Problem | None:
    """ORV261: the engine's quantization (TensorRT-LLM's QuantAlgo name, none when unquantized) must be the
    run's `quant` (its recipe's): an FP8 engine does not back a bf16 recipe, nor a bf16 engine an FP8
    one. A quantized recipe's quant must begin with the algorithm's words (FP8 → fp8, W4A16_AWQ →
    w4a16-awq, NVFP4 → nvfp4); an unquantized one must be the engine's dtype (bfloat16 → bf16)."""
    rep = run.reported
    if rep is None or run.quant is None:
        return None
    quant = run.quant
    algo = rep.quantization if rep.quantization and rep.quantization.strip().lower() not in ("none", "null") else None
    if algo is None and not rep.dtype:  # the report always states one of them: a run without both was edited
        return Problem(
            "reported.dtype",
            f"reported: trtllm-bench's report states neither the engine's quantization nor its dtype, so the run "
            f"cannot be checked against its quant `{quant}`",
            "store the run from trtllm-bench's --report_json output as written (`orv add-run --from trtllm-bench "
            "… --report REPORT`); never remove fields from a run file",
        )
    return _quant_problem(rep, algo, quant) or _kv_problem(rep, quant)


def _kv_problem(rep: EngineReport, quant: str) -> Problem | None:
    """A KV cache the engine quantized (FP8, INT8 …) under an unquantized quant: the run measured another
    configuration (ORV255 says the same of a launch's --kv-cache-dtype)."""
    kv = (rep.kv_cache_dtype or "").strip().lower()
    if kv and kv not in UNQUANTIZED_KV and kv not in ("none", "null") and quant.lower() in UNQUANTIZED:
        if not kv_quantized(quant):
            return Problem(
                "reported.kv_cache_dtype",
                f"reported.kv_cache_dtype: trtllm-bench's engine quantized its KV cache ({rep.kv_cache_dtype}); the "
                f"run's quant (its recipe's) is `{quant}`, unquantized",
                f"attach the run to a recipe whose quant states the quantized KV cache (`{quant}-{kv}-kv`), with "
                "its quality evidence, or measure with the model's own KV-cache precision",
            )
    return None


def _quant_problem(rep: EngineReport, algo: str | None, quant: str) -> Problem | None:
    if algo is None:
        dtype = _DTYPES.get((rep.dtype or "").lower(), (rep.dtype or "").lower())
        want = _DTYPES.get(quant.lower(), quant.lower())
        if quant.lower() not in UNQUANTIZED:
            return Problem(
                "reported.quantization",
                f"reported.quantization: trtllm-bench's engine ran unquantized (dtype {rep.dtype}); the run's quant "
                f"(its recipe's) is `{quant}`",
                "attach the run to the recipe of the unquantized model, or build the engine with the recipe's "
                "quantization",
            )
        if dtype and want not in ("none", "full") and dtype != want:
            return Problem(
                "reported.dtype",
                f"reported.dtype: trtllm-bench's engine ran in {rep.dtype}; the run's quant (its recipe's) is `{quant}`",
                f"attach the run to the recipe of `quant: {dtype}`",
            )
        return None
    if quant.lower() in UNQUANTIZED:
        return Problem(
            "reported.quantization",
            f"reported.quantization: trtllm-bench's engine is quantized ({algo}); the run's quant (its recipe's) "
            f"is `{quant}`, unquantized",
            f"attach the run to the recipe of the {algo} model (a quantized model is its own configuration, with "
            "its own quality evidence), or measure the unquantized engine",
        )
    algo_words = _tokens(algo)
    if _tokens(quant)[: len(algo_words)] != algo_words:
        return Problem(
            "reported.quantization",
            f"reported.quantization: trtllm-bench's engine is quantized with {algo}; the run's quant (its "
            f"recipe's) is `{quant}`",
            f"attach the run to the recipe of the {algo} model (`quant: {'-'.join(algo_words)}`)",
        )
    return None
