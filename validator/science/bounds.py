"""How large a number a contributor states may be before orv computes with it (docs/limits.md has the table).

Each bound is the largest real figure known, with headroom: a number past it is not a model or a
run that exists, so it is a finding naming the field, checked before any arithmetic, loop or
allocation uses it (a layer split for 10^9 pipeline stages is refused here, not enumerated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Bound:
    what: str
    high: int
    largest_real: str  # the figure the bound leaves headroom over, and where it is from
    low: int = 1


LAYERS = Bound("layers", 1024, "126 (Llama 3.1 405B); the catalog's most: 94 (Qwen3-235B-A22B)")
PIPELINE = Bound("pipeline stages", 1024, "at most one stage per layer (the layers bound); 16 for Llama 3.1 405B")
VIRTUAL_PIPELINE = Bound("virtual pipeline stages", 1024, "at most one chunk per layer (the layers bound)")
PARALLEL = Bound(
    "a parallel size (tp, cp, dp, ep, etp, GPUs)",
    1_048_576,
    "about 100,000 GPUs in the largest training clusters (2025)",
)
HIDDEN = Bound("hidden size", 131_072, "16,384 (Llama 3.1 405B)")
VOCAB = Bound("vocabulary", 4_194_304, "262,208 (Gemma 3)")
HEADS = Bound("attention heads", 4096, "128 (Llama 3.1 405B, DeepSeek-V3)")
HEAD_DIM = Bound("head dimension", 4096, "256 (Gemma 2, Gemma 3)")
MLP = Bound("MLP width", 1_048_576, "53,248 (Llama 3.1 405B)")
EXPERTS = Bound("experts", 16_384, "384 (Kimi K2)")
RANK = Bound("a low-rank width (q_lora_rank, kv_lora_rank)", 131_072, "1,536 (DeepSeek-V3's q_lora_rank)")
SEQ_LEN = Bound("sequence length", 16_777_216, "10,485,760 (Llama 4 Scout's context)")
GLOBAL_BATCH = Bound("global batch (sequences)", 1_048_576, "2,048 (Llama 3.1 405B: 16M tokens of 8,192)")
CONCURRENCY = Bound("concurrency", 65_536, "serving sweeps stop at a few thousand concurrent requests (2,048)")
DOCUMENTS = Bound(
    "documents of an evaluation task", 100_000_000, "tens of thousands (MMLU 14,042, HellaSwag 10,042)", low=0
)
ITERATION = Bound("an iteration number", 10**15 - 1, "about 1,000,000 (a long pre-training run)", low=0)
BOUNDS = (
    LAYERS,
    PIPELINE,
    VIRTUAL_PIPELINE,
    PARALLEL,
    HIDDEN,
    VOCAB,
    HEADS,
    HEAD_DIM,
    MLP,
    EXPERTS,
    RANK,
    SEQ_LEN,
    GLOBAL_BATCH,
    CONCURRENCY,
    DOCUMENTS,
    ITERATION,
)


def shown(value: Any) -> str:
    """A stated value for a message, short even when it is 4,000 digits long (str() of one may raise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if abs(value) < 10**15:
        return f"{value:,}" if isinstance(value, int) else f"{value:g}"
    digits = int(abs(value)).bit_length() * 0.30103 if isinstance(value, int) else math.log10(abs(value))
    return f"{'-' if value < 0 else ''}about 10^{int(digits)}"


def out_of_bounds(value: Any, bound: Bound) -> str | None:
    """Why `value` cannot be this number (not an integer, or past the bound), or None when it can."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be an integer, not {shown(value)}"
    if value < bound.low:
        return f"is {shown(value)}; {bound.what} cannot be below {bound.low:,}"
    if value > bound.high:
        return (
            f"is {shown(value)}, beyond {bound.high:,}, the bound for {bound.what} "
            f"(largest real: {bound.largest_real}; docs/limits.md)"
        )
    return None
