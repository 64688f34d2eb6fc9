"""A llama.cpp build as a pin: the build tag `b<build_number>` plus its commit (docs/versions.md).

llama-bench states both for the build that ran (`build_number`, `build_commit`: cmake/build-info.cmake
takes them from `git rev-list --count HEAD` and `git rev-parse --short HEAD`). A recipe's engine pins
llama.cpp as `version: b<N>` and optionally `commit`; a llama-bench run backs it only when the two name
the same build (ORV248; add-run refuses such a run before it is stored).
"""

from __future__ import annotations

from validator.models import Component
from validator.stacks.engines import LLAMA_BENCH, LLAMA_CPP_NAMES

TOOL = LLAMA_BENCH


def build_tag(build_number: int) -> str:
    return f"b{build_number}"


def same_commit(a: str, b: str) -> bool:
    """Short and full hashes of one commit agree on their common prefix (git prints 7 to 12 characters)."""
    a, b = a.lower(), b.lower()
    return len(min(a, b, key=len)) >= 7 and (a.startswith(b) or b.startswith(a))


def pin_problem(engine: Component | None, tool_version: str, tool_commit: str | None) -> str | None:
    """Why a llama-bench build (tool_version `b<N>`, tool_commit) is not the recipe's engine pin, or None."""
    built = f"{tool_version}" + (f" (commit {tool_commit})" if tool_commit else "")
    if engine is None:
        return f"the recipe names no engine; the llama-bench output was built from llama.cpp {built}"
    if engine.name.lower() not in LLAMA_CPP_NAMES:
        return f"the recipe's engine is {engine.name}, but llama-bench measures llama.cpp (build {built})"
    if engine.version is not None and engine.version != tool_version:
        return f"the recipe pins llama.cpp {engine.version}, the llama-bench output was built from {built}"
    if engine.commit and tool_commit and not same_commit(engine.commit, tool_commit):
        return (
            f"the recipe pins llama.cpp commit {engine.commit}, the llama-bench output was built from "
            f"commit {tool_commit} ({tool_version})"
        )
    return None


# ---- a GGUF's quantisation as llama.cpp names it ----
# llama-bench's `model_type` is llama.cpp's `llama_model_desc`: "<arch> <size> <ftype name>", where the
# ftype name is `llama_model_ftype_name` (src/llama-model-loader.cpp), e.g. "qwen3 8B Q4_K - Medium",
# "llama ?B all F32"; a file type llama.cpp guessed (the GGUF states none) ends in " (guessed)". Each
# name below is that function's, mapped to the file type's own name (LLAMA_FTYPE_MOSTLY_<X>, lower case),
# which is what llama-quantize takes and what a recipe's `quant` writes (q4_k_m, iq4_xs, bf16).
GGUF_FTYPE_NAMES: dict[str, str] = {
    "all F32": "f32",
    "F16": "f16",
    "BF16": "bf16",
    "Q4_0": "q4_0",
    "Q4_1": "q4_1",
    "Q5_0": "q5_0",
    "Q5_1": "q5_1",
    "Q8_0": "q8_0",
    "MXFP4 MoE": "mxfp4_moe",
    "NVFP4": "nvfp4",
    "Q2_K - Medium": "q2_k",
    "Q2_K - Small": "q2_k_s",
    "Q3_K - Small": "q3_k_s",
    "Q3_K - Medium": "q3_k_m",
    "Q3_K - Large": "q3_k_l",
    "Q4_K - Small": "q4_k_s",
    "Q4_K - Medium": "q4_k_m",
    "Q5_K - Small": "q5_k_s",
    "Q5_K - Medium": "q5_k_m",
    "Q6_K": "q6_k",
    "TQ1_0 - 1.69 bpw ternary": "tq1_0",
    "TQ2_0 - 2.06 bpw ternary": "tq2_0",
    "IQ2_XXS - 2.0625 bpw": "iq2_xxs",
    "IQ2_XS - 2.3125 bpw": "iq2_xs",
    "IQ2_S - 2.5 bpw": "iq2_s",
    "IQ2_M - 2.7 bpw": "iq2_m",
    "IQ3_XS - 3.3 bpw": "iq3_xs",
    "IQ3_XXS - 3.0625 bpw": "iq3_xxs",
    "IQ1_S - 1.5625 bpw": "iq1_s",
    "IQ1_M - 1.75 bpw": "iq1_m",
    "IQ4_NL - 4.5 bpw": "iq4_nl",
    "IQ4_XS - 4.25 bpw": "iq4_xs",
    "IQ3_S - 3.4375 bpw": "iq3_s",
    "IQ3_S mix - 3.66 bpw": "iq3_m",
}
GUESSED = " (guessed)"
# llama-quantize's own aliases (tools/quantize/quantize.cpp QUANT_OPTIONS: "Q3_K", "Q4_K", "Q5_K" are
# Q3_K_M, Q4_K_M, Q5_K_M), and the spellings of full precision a recipe uses
QUANT_ALIASES = {"q3_k": "q3_k_m", "q4_k": "q4_k_m", "q5_k": "q5_k_m", "fp32": "f32", "fp16": "f16"}


def gguf_ftype(model_type: str) -> str | None:
    """The file type's name (q4_k_m) in llama-bench's `model_type`, or None when it names none llama.cpp has."""
    desc = model_type.strip()
    desc = desc[: -len(GUESSED)] if desc.endswith(GUESSED) else desc
    found = [name for name in GGUF_FTYPE_NAMES if desc == name or desc.endswith(" " + name)]
    return GGUF_FTYPE_NAMES[max(found, key=len)] if found else None


def quant_ftype(quant: str) -> str:
    """A recipe's `quant` as a GGUF file type's name: case folded, `-` and `.` read as `_`, aliases resolved."""
    name = quant.strip().lower().replace("-", "_").replace(".", "_")
    return QUANT_ALIASES.get(name, name)
