"""Swept inference recipes for frontier tests: three configurations of one model × GPU, one run per
concurrency, with each point's figures recomputed here, independently of orv, from the samples."""

from __future__ import annotations

import random
from pathlib import Path

from tests.testing.factories import VLLM, inference_recipe, inference_run, store_run, write_recipe

CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64)
ENGINES = {"a": "0.30.0", "b": "0.30.1", "c": "0.31.0"}  # three configurations of one model × GPU


def samples_at(base_decode: float, slowdown: float, concurrency: int) -> tuple[list[dict[str, float]], float]:
    """Requests of 1,024-token prompts and 256-token answers (the test workload `fixed-1024-256`) whose
    per-stream rate falls as concurrency grows, with the noise
    a real measurement has (TTFT ±10%, each request's decode ±3%: independent runs, never one
    measurement rescaled, ORV304); the run lasts as long as its requests take in waves of
    `concurrency` (so aggregate ≤ concurrency × stream)."""
    rng = random.Random(f"{base_decode}-{slowdown}-{concurrency}")
    decode = base_decode / (1 + slowdown * (concurrency - 1))
    samples = []
    for _ in range(2 * concurrency + 6):
        ttft = round((80.0 + 3.0 * concurrency) * rng.uniform(0.9, 1.1), 3)
        samples.append(
            {
                "prompt_tokens": 1024,
                "output_tokens": 256,
                "ttft_ms": ttft,
                "e2e_ms": round(ttft + 255 * 1000.0 / (decode * rng.uniform(0.97, 1.03)), 3),
            }
        )
    waves = -(-len(samples) // concurrency)
    return samples, waves * max(s["e2e_ms"] for s in samples) / 1000.0


def independent_point(samples: list[dict[str, float]], duration: float, gpus: int) -> tuple[float, float]:
    tpot = sum((s["e2e_ms"] - s["ttft_ms"]) / (s["output_tokens"] - 1) for s in samples) / len(samples)
    return 1000.0 / tpot, sum(s["output_tokens"] for s in samples) / duration / gpus


def sweep_registry(
    root: Path,
    off_by: float = 1.0,
    stray: int | None = None,
    names: str = "abc",
    gpu: str = "rtx-3090",
    prefix: str = "cfg",
    speed: float = 1.0,
) -> dict[tuple[str, int], tuple[float, float]]:
    """Three configurations of one model × GPU, each one recipe swept over CONCURRENCIES with one run
    per point; returns each point's figures recomputed here, independently of orv, from the samples.
    `off_by` scales the claim at concurrency 8 of configuration a; `stray` adds a run at that concurrency.
    `gpu`, `prefix` (of the recipe ids) and `speed` (scales every stream's rate) sweep a second GPU."""
    expected: dict[tuple[str, int], tuple[float, float]] = {}
    shapes = {"a": (60.0, 0.02), "b": (45.0, 0.005), "c": (75.0, 0.08)}
    for name, version in ENGINES.items():
        if name not in names:
            continue
        software = {"engine": {**VLLM["engine"], "version": version}}
        recipe = inference_recipe(
            f"{prefix}-{name}",
            gpu=gpu,
            prefill=None,
            ttft=None,
            software=software,
            serving={"context_len": 8192, "concurrency": 1},
            workload="fixed-1024-256",
        )
        recipe["sweep"] = {"concurrency": list(CONCURRENCIES), "claimed": []}
        runs = []
        for c in CONCURRENCIES + ((stray,) if stray and name == "a" else ()):
            base, slowdown = shapes[name]
            samples, duration = samples_at(base * speed, slowdown, c)
            decode, per_gpu = independent_point(samples, duration, 2)
            claim = round(decode * (off_by if (name, c) == ("a", 8) else 1.0), 2)
            if c == 1:
                recipe["claimed"] = {"decode_tok_s": claim}
            elif c in CONCURRENCIES:
                recipe["sweep"]["claimed"].append({"concurrency": c, "decode_tok_s": claim})
            run = inference_run(
                recipe, decode, samples=False, duration_s=duration, serving={"context_len": 8192, "concurrency": c}
            )
            run["samples"] = samples
            runs.append(store_run(root, run))
            expected[(name, c)] = (decode, per_gpu)
        recipe["runs"] = runs
        write_recipe(root, recipe)
    return expected
