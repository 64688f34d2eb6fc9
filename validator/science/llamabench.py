"""llama-bench's own figures, recomputed as llama-bench computes them (docs/metrics.md).

llama.cpp tools/llama-bench/llama-bench.cpp (b11312, commit 0c1e57098), `struct test`:
  get_ts()   per repetition i: 1e9 * (n_prompt + n_gen) / samples_ns[i]      tokens per second
  avg_ts()   avg(get_ts()): the mean of the per-repetition rates (not total tokens / total time)
  stdev_ts() stdev(get_ts()): sqrt(sum(x²) / (n - 1) - mean² · n / (n - 1)), n − 1 in the denominator
The depth (-d) is processed before each repetition's clock starts, so it is context, not timed tokens.
A `pp` test (n_gen 0) is prefill; a `tg` test (n_prompt 0) is one stream's decode: they become the
run's prefill_tok_s and decode_tok_s. llama-bench has no time to first token.

A run file keeps each repetition as a sample whose e2e_ms is samples_ns / 1e6 to the nanosecond, so
the nanoseconds come back exactly (round(e2e_ms · 1e6)) and the figure is recomputed bit for bit.
The sums below run left to right as std::accumulate and std::inner_product do, in doubles.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from validator.science.throughput import RunFacts

HEADLINE_OF = {"pp": "prefill_tok_s", "tg": "decode_tok_s"}


def ns_to_ms(ns: int) -> float:
    return round(ns / 1e6, 6)


def ms_to_ns(ms: float) -> int:
    return round(ms * 1e6)


def rates(samples_ns: Sequence[int], n_tokens: int) -> list[float]:
    """get_ts(): 1e9 * n_tokens / t for each repetition."""
    return [1e9 * n_tokens / t for t in samples_ns]


def _accumulate(values: Sequence[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return total


def avg(values: Sequence[float]) -> float:
    return _accumulate(values) / len(values) if values else 0.0


def stdev(values: Sequence[float]) -> float:
    """llama-bench's stdev(): 0 for fewer than two values, else its one-pass n − 1 formula."""
    n = len(values)
    if n <= 1:
        return 0.0
    mean = avg(values)
    sq_sum = _accumulate([v * v for v in values])
    return math.sqrt(max(sq_sum / (n - 1) - mean * mean * n / (n - 1), 0.0))


def avg_ns(samples_ns: Sequence[int]) -> int:
    """avg_ns(): the uint64 mean, integer division."""
    return sum(samples_ns) // len(samples_ns) if samples_ns else 0


def facts(samples: Sequence[Mapping[str, Any]], synthetic: Mapping[str, Any]) -> RunFacts:
    """What a llama-bench run's repetitions prove: its avg_ts as the test's headline, and the lengths."""
    ns = [ms_to_ns(s["e2e_ms"]) for s in samples]
    n_prompt, n_gen = synthetic["n_prompt"], synthetic["n_gen"]
    headline: dict[str, float] = {}
    problems: tuple[str, ...] = ()
    if (synthetic["test"] == "tg") != (n_prompt == 0 and n_gen > 0) or (synthetic["test"] == "pp") != (
        n_gen == 0 and n_prompt > 0
    ):
        problems = (
            f"a `{synthetic['test']}` test with n_prompt {n_prompt} and n_gen {n_gen} is not one: "
            "pp times prompt tokens only, tg generated tokens only",
        )
    elif any(s["prompt_tokens"] != n_prompt or s["output_tokens"] != n_gen for s in samples):
        problems = (f"a repetition's token counts differ from the test's (n_prompt {n_prompt}, n_gen {n_gen})",)
    elif ns and all(t > 0 for t in ns) and n_prompt + n_gen > 0:
        headline[HEADLINE_OF[synthetic["test"]]] = avg(rates(ns, n_prompt + n_gen))
    else:
        problems = ("a repetition took no time or timed no tokens: the rate is undefined",)
    lifetime = math.fsum(s["e2e_ms"] for s in samples)
    tokens = n_gen * len(samples)  # one stream's decode rate over every repetition (ORV511's bound)
    stream = tokens / lifetime * 1000.0 if tokens > 0 and lifetime > 0 else None
    return RunFacts(len(samples), headline, None, problems, stream_tok_s=stream)
