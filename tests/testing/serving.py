"""vLLM `bench serve --save-result --save-detailed` results built request by request, every field the tool
writes computed the way vLLM's calculate_metrics computes it (vllm/benchmarks/serve.py), so a test can
forge exactly one field and keep the rest as the tool would have written them."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tests.testing.registry import BASE
from validator.adapters import Source, convert, metadata


@dataclass(frozen=True)
class Request:
    prompt: int
    output: int
    ttft_s: float
    itl_s: float  # every inter-token gap of this request
    start_s: float

    @property
    def latency_s(self) -> float:
        return self.ttft_s + self.itl_s * (self.output - 1)


def vllm_result(requests: Sequence[Request], duration_s: float, max_concurrency: int | None) -> dict[str, Any]:
    """The result vLLM saves for these requests, its means and totals included."""
    tpots = [(r.latency_s - r.ttft_s) / (r.output - 1) for r in requests if r.output > 1]
    return {
        "date": "20261018-101500",
        "backend": "vllm",
        "model_id": "Qwen/Qwen3.8-27B",
        "tokenizer_id": "Qwen/Qwen3.8-27B",
        "num_prompts": len(requests),
        "request_rate": "inf",
        "max_concurrency": max_concurrency,
        "duration": duration_s,
        "completed": len(requests),
        "failed": 0,
        "total_input_tokens": sum(r.prompt for r in requests),
        "total_output_tokens": sum(r.output for r in requests),
        "output_throughput": sum(r.output for r in requests) / duration_s,
        "mean_ttft_ms": math.fsum(r.ttft_s for r in requests) / len(requests) * 1000.0,
        "mean_tpot_ms": math.fsum(tpots) / len(tpots) * 1000.0,
        "input_lens": [r.prompt for r in requests],
        "output_lens": [r.output for r in requests],
        "ttfts": [r.ttft_s for r in requests],
        "itls": [[r.itl_s] * (r.output - 1) for r in requests],
        "latencies": [r.latency_s for r in requests],
        "start_times": [r.start_s for r in requests],
        "errors": [""] * len(requests),
    }


def serial(
    count: int, prompt: int = 520, output: int = 64, ttft_s: float = 0.06, itl_s: float = 0.024
) -> list[Request]:
    """`count` requests one after another (concurrency 1), each starting 1 ms after the last ended."""
    out, start = [], 5000.0
    for i in range(count):
        request = Request(prompt + i % 7, output, ttft_s + 0.001 * (i % 3), itl_s, start)
        out.append(request)
        start += request.latency_s + 0.001
    return out


def in_waves(count: int, concurrency: int, **kwargs: Any) -> list[Request]:
    """`count` requests in waves of `concurrency` started together (an unlimited request rate)."""
    out: list[Request] = []
    for i, request in enumerate(serial(count, **kwargs)):
        wave = i // concurrency
        out.append(
            Request(request.prompt, request.output, request.ttft_s, request.itl_s, 5000.0 + wave * 1.8 + 0.0001 * i)
        )
    return out


def span_s(requests: Sequence[Request]) -> float:
    return max(r.start_s + r.latency_s for r in requests) - min(r.start_s for r in requests)


def convert_vllm(result: dict[str, Any], recipe_path: str) -> dict[str, Any]:
    """The run document `orv add-run --from vllm` makes of `result` (before add-run's own refusals)."""
    source = Source("result.json", json.dumps(result).encode())
    return convert("vllm", source, metadata("vllm", str(BASE), recipe_path, {})).document
