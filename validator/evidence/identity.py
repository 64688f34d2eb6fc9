"""Is the model a tool's output names the model the recipe and the catalog say? (ORV226, ORV227, ORV235, add-run)

Served checkpoint (vLLM `model_id`, SGLang `model`, recorded as the run's `checkpoint`), against the
catalog model:
  - the catalog lists `checkpoints`: the served one must be one of them (Hugging Face ids; a local
    path matches by its last folder name), or one of its `derived_checkpoints` (fine-tune,
    quantized export, linked to a listed base) that the recipe names in its own `checkpoint`;
  - the catalog lists none: the checkpoint's name must contain the model's family, name or an
    alias (letters and digits only, case ignored) — `meta-llama/Llama-3.1-8B-Instruct` is no Qwen.
Printed architecture (Megatron-LM's arguments and parameter count, recorded as the run's
`architecture`), against the catalog: layers, hidden size, attention heads, experts and experts per
token exactly; the vocabulary within 1% (tokenizers and padded embedding tables differ by a few
hundred entries); the total parameter count within PARAMS_TOLERANCE.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from validator.models import DerivedCheckpoint, GpuSpec, ModelSpec, RunMeta
from validator.registry.layout import HARDWARE_PATH, MODELS_PATH

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


def names_checkpoint(checkpoint: str, listed: str) -> bool:
    """Does a tool's model path or Hugging Face id name the listed checkpoint? Case ignored; a local path
    by its last one or two folders."""
    names = _names(checkpoint)
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
    tokens = {_norm(t) for t in (spec.family, spec.name, *spec.aliases) if _norm(t)}
    return None if any(t in _norm(checkpoint) for t in tokens) else Mismatch(OTHER_MODEL)


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


def _model_number(name: str) -> str:
    """The part of a GPU's catalog name that tells it from its neighbours: the first word with a digit
    (`NVIDIA GeForce RTX 3090` -> 3090, `NVIDIA H100 SXM5 80GB` -> h100); the whole name without one."""
    return next((_norm(w) for w in name.split() if any(ch.isdigit() for ch in w)), _norm(name))


def gpu_problem(gpu_id: str, spec: GpuSpec | None, gpu_info: str, backends: str) -> Problem | None:
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
    if _model_number(spec.name) not in _norm(info):
        return Problem(
            "hardware.gpu",
            f"llama-bench ran on `{info}`; the run's GPU (its recipe's) is `{gpu_id}` ({spec.name})",
            "attach the run to the recipe of the GPU it ran on",
        )
    return None
