"""Headline figures recomputed from a run's raw samples; definitions are documented in docs/metrics.md.

Training: tokens/s/GPU = sum(tokens) / sum(time_s) / GPUs over the steps after the workload's
warm-up steps (step time, not wall clock between log lines, so logging gaps do not count).
Inference (per request i with prompt p_i, output o_i, TTFT t_i ms, end-to-end e_i ms), as vLLM's
`bench serve` and SGLang's `bench_serving` define them:
  ttft_ms       = mean(t_i)
  tpot_ms       = mean over requests with o_i > 1 of (e_i - t_i) / (o_i - 1)
  decode_tok_s  = per-stream decode rate = 1000 / tpot_ms
  prefill_tok_s = per-stream prefill rate = sum(p_i) / sum(t_i) * 1000
  output_tok_s  = aggregate = sum(o_i) / duration_s (only when the run records its duration)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Mapping, Optional, Sequence

from validator.convergence import ConvergenceResult, check_convergence
from validator.models import Convergence


@dataclass(frozen=True)
class RunFacts:
    """What a run's raw samples prove, kept after the samples themselves are dropped.

    The samples are reduced while the file is in memory (the convergence verdict included), so a
    registry of 10,000 runs never holds their millions of samples at once.
    """

    sample_count: int = 0
    headline: Mapping[str, float] = field(default_factory=dict)  # recomputed figures
    convergence: Optional[ConvergenceResult] = None  # training runs, when the workload has a reference
    problems: tuple[str, ...] = ()  # why a figure could not be recomputed

    @property
    def has_samples(self) -> bool:
        return self.sample_count > 0


def _loss_value(value: Any) -> float:
    if isinstance(value, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(value.lower(), math.nan)
    return float(value)


def training_facts(samples: Sequence[Mapping[str, Any]], gpus: int, warmup_steps: int,
                   convergence: Optional[Convergence] = None) -> RunFacts:
    steps = list(map(itemgetter("step"), samples))
    if steps != sorted(steps):  # logs are normally in step order; sorting then costs O(n)
        samples = sorted(samples, key=itemgetter("step"))
        steps = list(map(itemgetter("step"), samples))
    timed = samples[warmup_steps:]
    problems: list[str] = []
    headline: dict[str, float] = {}
    if not timed:
        problems.append(f"no steps left after the {warmup_steps} warm-up steps")
    else:
        seconds = math.fsum(map(itemgetter("time_s"), timed))
        tokens = sum(map(itemgetter("tokens"), timed))
        if seconds > 0 and gpus > 0:
            headline["tokens_per_s_per_gpu"] = tokens / seconds / gpus
    verdict = None
    if convergence is not None:
        losses = list(zip(steps, map(_loss_value, map(itemgetter("loss"), samples))))
        verdict = check_convergence(losses, convergence)
    return RunFacts(len(samples), headline, verdict, tuple(problems))


def inference_facts(samples: Sequence[Mapping[str, Any]], duration_s: float | None) -> RunFacts:
    headline: dict[str, float] = {}
    problems: list[str] = []
    done = [s for s in samples if s["output_tokens"] > 0]
    if not done:
        return RunFacts(len(samples), headline, None, ("no request produced output tokens",))
    ttfts = list(map(itemgetter("ttft_ms"), done))
    headline["ttft_ms"] = math.fsum(ttfts) / len(done)
    tpots = [(s["e2e_ms"] - s["ttft_ms"]) / (s["output_tokens"] - 1) for s in done if s["output_tokens"] > 1]
    if tpots:
        tpot = math.fsum(tpots) / len(tpots)
        if tpot > 0:
            headline["tpot_ms"] = tpot
            headline["decode_tok_s"] = 1000.0 / tpot
    else:
        problems.append("no request produced more than one output token; decode rate undefined")
    ttft_total = math.fsum(ttfts)
    if ttft_total > 0:
        headline["prefill_tok_s"] = sum(map(itemgetter("prompt_tokens"), done)) / ttft_total * 1000.0
    if duration_s:
        headline["output_tok_s"] = sum(map(itemgetter("output_tokens"), done)) / duration_s
    return RunFacts(len(samples), headline, None, tuple(problems))


def relative_gap(claimed: float, recomputed: float) -> float:
    return abs(claimed - recomputed) / recomputed if recomputed else math.inf
