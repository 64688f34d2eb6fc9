"""Headline figures recomputed from a run's raw samples; definitions are documented in docs/metrics.md.

Training (one sample per optimizer step {step, time_s, tokens, loss}):
  tokens_per_s_per_gpu = sum(tokens) / sum(time_s) / GPUs over the steps after the workload's
  warm-up steps (the first `warmup_steps` samples in step order). Step time, not wall clock between
  log lines, so logging and checkpointing gaps do not count.
Inference (per completed request i: prompt p_i, output o_i, TTFT t_i ms, end-to-end e_i ms), as
vLLM's `bench serve` and SGLang's `bench_serving` define them (requests with o_i = 0 produced no
first token and are left out):
  ttft_ms       = mean(t_i)                                        (vLLM/SGLang "Mean TTFT")
  tpot_ms       = mean over requests with o_i > 1 of (e_i - t_i) / (o_i - 1)   ("Mean TPOT")
  decode_tok_s  = 1000 / tpot_ms            per-stream decode rate: one request's tokens/s
  prefill_tok_s = sum(p_i) / sum(t_i) * 1000    per-stream prefill rate (TTFT includes queueing)
  output_tok_s  = sum(o_i) / duration_s     aggregate over all streams ("Output token throughput"),
                                            only when the run records its duration
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter, sub, truediv
from typing import Any

from validator.models import Convergence
from validator.science.loss_curve import ConvergenceResult, check_convergence
from validator.science.samples import Columns
from validator.science.workload_fit import LengthStats, length_stats


@dataclass(frozen=True)
class RunFacts:
    """What a run's raw samples prove, kept after the samples themselves are dropped.

    The samples are reduced while the file is in memory (the convergence verdict included), so a
    registry of 10,000 runs never holds their millions of samples at once.
    """

    sample_count: int = 0
    headline: Mapping[str, float] = field(default_factory=dict)  # recomputed figures
    convergence: ConvergenceResult | None = None  # training runs, when the workload has a reference
    problems: tuple[str, ...] = ()  # why a figure could not be recomputed, or is doubtful
    fingerprint: tuple[
        Any, ...
    ] = ()  # of the timing columns, to tell copies from reproductions (science/independence.py)
    # inference: one stream's rate over every request, Σ output tokens ÷ Σ e2e time (ORV511's bound)
    stream_tok_s: float | None = None
    # inference: completed requests' lengths, concurrency and count, to prove the workload (workload_fit.py)
    lengths: LengthStats | None = None

    @property
    def has_samples(self) -> bool:
        return self.sample_count > 0


def _loss_value(value: Any) -> float:
    """A sample's loss as a float; the strings "nan"/"inf"/"-inf" record a diverged step."""
    if isinstance(value, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(value.lower(), math.nan)
    return float(value)


SKIPPED = "skipped"  # an iteration the fp16 loss scaler skipped (gradient overflow): no update, no loss


def is_skipped(sample: Mapping[str, Any]) -> bool:
    return sample.get("loss") == SKIPPED


def training_losses(samples: Sequence[Mapping[str, Any]]) -> list[tuple[int, float]]:
    """(step, loss) in step order; a diverged step's "nan"/"inf" becomes the float it stands for.
    Skipped iterations (fp16 overflow) have no loss and are left out (skipped_steps lists them)."""
    ordered = sorted(samples, key=itemgetter("step"))
    losses = list(map(itemgetter("loss"), ordered))
    if not set(map(type, losses)) <= {int, float}:  # only a diverged or fp16 run logs strings
        kept = [s for s in ordered if not is_skipped(s)]
        return list(zip(map(itemgetter("step"), kept), map(_loss_value, map(itemgetter("loss"), kept))))
    return list(zip(map(itemgetter("step"), ordered), losses))


def skipped_steps(samples: Sequence[Mapping[str, Any]]) -> frozenset[int]:
    return frozenset(s["step"] for s in samples if is_skipped(s))


def warmup_end(samples: Sequence[Mapping[str, Any]], warmup_steps: int) -> int:
    """Index of the first timed sample: after `warmup_steps` steps that updated the model. Skipped
    iterations (fp16 loss-scale calibration) before that do not use up the warm-up (docs/metrics.md)."""
    if warmup_steps <= 0:
        return 0
    advanced = 0
    for i, sample in enumerate(samples):
        if not is_skipped(sample):
            advanced += 1
            if advanced == warmup_steps:
                return i + 1
    return len(samples)


def _step_problems(steps: Sequence[int]) -> list[str]:
    """Repeated or missing optimizer steps: the samples are then not 'every optimizer step'."""
    problems: list[str] = []
    if not steps or (len(set(steps)) == len(steps) and steps[-1] - steps[0] == len(steps) - 1):
        return problems  # sorted, distinct and spanning exactly len(steps) values: consecutive
    repeated = sorted({s for s, nxt in zip(steps, steps[1:]) if s == nxt})
    if repeated:
        problems.append(f"step {repeated[0]} appears more than once")
    missing = next((s + 1 for s, nxt in zip(steps, steps[1:]) if nxt > s + 1), None)
    if missing is not None:
        problems.append(f"step {missing} is missing: samples must cover every optimizer step")
    return problems


def _column(columns: Columns, key: str) -> list[Any]:
    """A column every sample must have (a sample without it raises KeyError, as indexing it would)."""
    values = columns.get(key)
    return values if values is not None else list(map(itemgetter(key), columns.samples))


def _columns_of(samples: Sequence[Any], columns: Columns | None) -> Columns:
    return columns if columns is not None and columns.samples is samples else Columns(samples)


def training_facts(
    samples: Sequence[Mapping[str, Any]],
    gpus: int,
    warmup_steps: int,
    convergence: Convergence | None = None,
    columns: Columns | None = None,
) -> RunFacts:
    """`columns`, of these samples, when the caller has read them already (validator/science/samples.py)."""
    cols = _columns_of(samples, columns)
    steps = _column(cols, "step")
    if steps != sorted(steps):  # logs are normally in step order; sorting then costs O(n)
        samples = sorted(samples, key=itemgetter("step"))
        cols = Columns(samples)
        steps = _column(cols, "step")
    problems = _step_problems(steps)
    losses = cols.get("loss")
    # only a diverged or fp16 run logs a string loss; without "skipped" no sample is skipped
    numeric = losses is not None and cols.types("loss") <= {int, float}
    maybe_skipped = losses is None or (not numeric and SKIPPED in losses)
    start = warmup_end(samples, warmup_steps) if maybe_skipped else max(0, min(warmup_steps, len(samples)))
    headline: dict[str, float] = {}
    if start >= len(samples):
        problems.append(f"no steps left after the {warmup_steps} warm-up steps")
    else:
        seconds = math.fsum(_column(cols, "time_s")[start:])
        tokens = sum(_column(cols, "tokens")[start:])
        if seconds > 0 and gpus > 0:
            headline["tokens_per_s_per_gpu"] = tokens / seconds / gpus
    verdict = None
    if convergence is not None:
        if numeric:  # steps are in order already: training_losses without sorting again
            verdict = check_convergence(list(zip(steps, losses)), convergence, frozenset())  # type: ignore[arg-type]
        else:
            verdict = check_convergence(
                training_losses(samples), convergence, skipped_steps(samples) if maybe_skipped else frozenset()
            )
    return RunFacts(len(samples), headline, verdict, tuple(problems))


def inference_facts(
    samples: Sequence[Mapping[str, Any]], duration_s: float | None, columns: Columns | None = None
) -> RunFacts:
    """`columns`, of these samples, when the caller has read them already (validator/science/samples.py)."""
    headline: dict[str, float] = {}
    problems: list[str] = []
    cols = _columns_of(samples, columns)
    outputs = _column(cols, "output_tokens")
    lengths = length_stats(_column(cols, "prompt_tokens"), outputs, cols.get("start_ms"), _column(cols, "e2e_ms"))
    tokens, lifetime_ms = sum(outputs), math.fsum(_column(cols, "e2e_ms"))  # every request's
    stream = tokens / lifetime_ms * 1000.0 if tokens > 0 and lifetime_ms > 0 else None
    fewest = min(outputs) if outputs else 0
    if fewest <= 0:
        done = [s for s in samples if s["output_tokens"] > 0]
        if not done:
            return RunFacts(
                len(samples),
                headline,
                None,
                ("no request produced output tokens",),
                stream_tok_s=stream,
                lengths=lengths,
            )
        cols = Columns(done)
        outputs = _column(cols, "output_tokens")
        fewest = min(outputs)
    ttfts = _column(cols, "ttft_ms")
    ttft_total = math.fsum(ttfts)
    headline["ttft_ms"] = ttft_total / len(outputs)
    e2es = _column(cols, "e2e_ms")
    if fewest > 1:  # the usual case, in C: (e2e - ttft) / (output - 1) per request
        tpots = list(map(truediv, map(sub, e2es, ttfts), map(sub, outputs, repeat(1))))
    else:
        tpots = [(e2e - ttft) / (out - 1) for e2e, ttft, out in zip(e2es, ttfts, outputs) if out > 1]
    if tpots:
        tpot = math.fsum(tpots) / len(tpots)
        if tpot > 0:
            headline["tpot_ms"] = tpot
            headline["decode_tok_s"] = 1000.0 / tpot
        else:
            problems.append("mean time per output token is not positive; decode rate undefined")
    else:
        problems.append("no request produced more than one output token; decode rate undefined")
    if ttft_total > 0:
        headline["prefill_tok_s"] = sum(_column(cols, "prompt_tokens")) / ttft_total * 1000.0
    if duration_s:
        headline["output_tok_s"] = sum(outputs) / duration_s
    return RunFacts(len(samples), headline, None, tuple(problems), stream_tok_s=stream, lengths=lengths)


def relative_gap(claimed: float, recomputed: float) -> float:
    """|claimed - recomputed| / recomputed: the recomputed figure is the reference."""
    return abs(claimed - recomputed) / recomputed if recomputed else math.inf
