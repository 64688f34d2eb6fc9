"""Does an inference run's raw samples prove the workload its recipe names (docs/protocols.md)?

A run file holds every completed request's prompt and output length (and, from vLLM's and SGLang's
detailed results, its start time), so the workload a run really used is checked, not trusted:
  ORV241  every request's prompt and output length inside the workload's range, [⌊ratio·L⌋, L],
          widened by `length_slack` × L for re-tokenisation drift (outputs only from above when
          the workload does not ignore EOS: an answer may end early);
  ORV242  enough measured requests: the workload's min_prompts and prompts_per_concurrency × the
          recipe's concurrency (warm-ups are not in a run's samples);
  ORV243  the stated concurrency: the workload's fixed concurrency if it has one, a concurrency on
          the recipe at all, and never more requests in flight than it (from start_ms).
The samples are reduced to LengthStats while the run's bytes are in memory (load/pipeline.py).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from operator import add, sub

from validator.models import SyntheticTest, WorkloadSpec


@dataclass(frozen=True)
class LengthStats:
    """Completed requests' length statistics: all the workload checks need once samples are dropped."""

    requests: int
    prompt_mean: float
    prompt_min: int
    prompt_max: int
    output_mean: float
    output_min: int
    output_max: int
    peak_in_flight: int | None = None  # most requests open at once; None without start times


def length_stats(
    prompts: Sequence[int], outputs: Sequence[int], starts: Sequence[float] | None, e2es: Sequence[float]
) -> LengthStats | None:
    """Over completed requests (output > 0), as the tools' own means are; None when there are none."""
    if outputs and min(outputs) > 0:  # the usual case: every request completed, no copies to make
        p, o, s, e = prompts, outputs, starts, e2es
    else:
        done = [i for i, o in enumerate(outputs) if o > 0]
        if not done:
            return None
        p, o = [prompts[i] for i in done], [outputs[i] for i in done]
        s, e = ([starts[i] for i in done] if starts is not None else None), [e2es[i] for i in done]
    peak = peak_in_flight(s, e) if s is not None else None
    return LengthStats(len(o), math.fsum(p) / len(p), min(p), max(p), math.fsum(o) / len(o), min(o), max(o), peak)


def peak_in_flight(starts: Sequence[float], e2es: Sequence[float]) -> int:
    """The most requests open at one instant; a request ending when another starts does not overlap it.

    The count rises only at a start, so the peak is reached just after some start time t: the
    requests started by t less those ended by t (an end at t closes before a start at t opens).
    Two sorts and a bisection per start, all in C (a Python loop over 2n events cost ~10x more).
    """
    if not starts:
        return 0
    opened, ended = sorted(starts), sorted(map(add, starts, e2es))
    return max(0, max(map(sub, map(partial(bisect_right, opened), opened), map(partial(bisect_right, ended), opened))))


@dataclass(frozen=True)
class Misfit:
    code: str  # ORV241 lengths, ORV242 prompts, ORV243 concurrency
    message: str
    hint: str


def _tokens(value: float) -> str:
    return f"{value:,.0f}" if abs(value - round(value)) < 0.05 else f"{value:,.1f}"


def _length_misfit(
    what: str, stats_mean: float, low: int, high: int, workload: WorkloadSpec, wid: str, nominal: int, check_low: bool
) -> str | None:
    bound_low, bound_high = workload.length_bounds(nominal)
    slack = math.ceil(workload.length_slack * nominal)
    expected = (
        f"{_tokens(bound_low)}–{_tokens(bound_high)} tokens per request ({nominal} with range ratio "
        f"{workload.range_ratio:g})"
        if bound_low != bound_high
        else f"{_tokens(nominal)} tokens per request"
    )
    where = f"workload `{wid}` ({workload.display()}) expects {expected}"
    mean_off = (check_low and stats_mean < bound_low - slack) or stats_mean > bound_high + slack
    if mean_off:
        gap = bound_low - stats_mean if stats_mean < bound_low else stats_mean - bound_high
        side = "below" if stats_mean < bound_low else "above"
        return f"mean {what} length {_tokens(stats_mean)} tokens, {_tokens(gap)} {side} the range; {where}"
    if check_low and low < bound_low - slack:
        return (
            f"shortest {what} {_tokens(low)} tokens, {_tokens(bound_low - low)} below the range "
            f"(mean {_tokens(stats_mean)}); {where}"
        )
    if high > bound_high + slack:
        return (
            f"longest {what} {_tokens(high)} tokens, {_tokens(high - bound_high)} above the range "
            f"(mean {_tokens(stats_mean)}); {where}"
        )
    return None


def synthetic_misfits(
    synthetic: SyntheticTest | None, repetitions: int, workload: WorkloadSpec, wid: str
) -> list[Misfit]:
    """llama-bench's synthetic tests against the workloads (docs/protocols.md): a llama-bench workload is
    proven only by a llama-bench run of the same test with enough repetitions, and a llama-bench run
    proves no served workload (a synthetic single-sequence test is not a served benchmark)."""
    if synthetic is None:
        if not workload.is_llama_bench:
            return []
        return [
            Misfit(
                "ORV247",
                f"workload `{wid}` is llama-bench's {workload.llama_bench_test()} test; the run is "
                "not a llama-bench run",
                f"measure with `llama-bench -p {workload.n_prompt} -n "
                f"{workload.n_gen} -d {workload.n_depth} -r "
                f"{workload.min_repetitions} -o json` (`orv reproduce "
                "RECIPE` prints it)",
            )
        ]
    if not workload.is_llama_bench:
        return [
            Misfit(
                "ORV247",
                f"the run is llama-bench's synthetic test (n_prompt {synthetic.n_prompt}, n_gen "
                f"{synthetic.n_gen}, n_depth {synthetic.n_depth}); workload `{wid}` is a served "
                "benchmark",
                "attach the run to a recipe whose workload is that llama-bench test, or "
                "measure the served workload (`orv reproduce RECIPE`)",
            )
        ]
    out: list[Misfit] = []
    ran = (synthetic.n_prompt, synthetic.n_gen, synthetic.n_depth)
    wanted = (workload.n_prompt, workload.n_gen, workload.n_depth)
    if ran != wanted:
        differ = ", ".join(
            f"{name} {a} (workload: {b})" for name, a, b in zip(("n_prompt", "n_gen", "n_depth"), ran, wanted) if a != b
        )
        out.append(
            Misfit(
                "ORV247",
                f"the run is a different llama-bench test: {differ}; workload `{wid}` is {workload.llama_bench_test()}",
                "attach the run to the recipe of the test it ran, or run llama-bench with "
                f"-p {workload.n_prompt} -n {workload.n_gen} -d {workload.n_depth}",
            )
        )
    need = workload.min_repetitions or 1
    if repetitions < need:
        out.append(
            Misfit(
                "ORV242",
                f"the run kept {repetitions} llama-bench repetition(s); workload `{wid}` needs at least {need}",
                f"run llama-bench with -r {need} or more",
            )
        )
    return out


def workload_misfits(
    stats: LengthStats | None,
    workload: WorkloadSpec,
    wid: str,
    concurrency: int | None,
    synthetic: SyntheticTest | None = None,
    repetitions: int = 0,
) -> list[Misfit]:
    """Why the run's samples are not a measurement of `workload` at `concurrency` (empty: they are)."""
    out: list[Misfit] = []
    if workload.is_llama_bench or synthetic is not None:
        out = synthetic_misfits(synthetic, repetitions, workload, wid)
        if out or not workload.is_llama_bench:
            return out
        if workload.concurrency is not None and concurrency != workload.concurrency:
            out.append(
                Misfit(
                    "ORV243",
                    f"workload `{wid}` fixes concurrency {workload.concurrency}, the recipe states "
                    f"{concurrency if concurrency is not None else 'none'}",
                    f"set `serving.concurrency: {workload.concurrency}`",
                )
            )
        return out
    if not workload.is_inference or workload.input_len is None or workload.output_len is None:
        return out
    if workload.concurrency is not None and concurrency != workload.concurrency:
        out.append(
            Misfit(
                "ORV243",
                f"workload `{wid}` fixes concurrency {workload.concurrency}, the recipe states "
                f"{concurrency if concurrency is not None else 'none'}",
                f"set `serving.concurrency: {workload.concurrency}` and measure at it, or name a "
                "workload that allows this concurrency",
            )
        )
    elif concurrency is None:
        out.append(
            Misfit(
                "ORV243",
                f"workload `{wid}` is measured at a stated concurrency, and the recipe states none",
                "set `serving.concurrency:` to the benchmark's --max-concurrency",
            )
        )
    if stats is None:
        return out
    rerun = (
        "measure again with the workload's settings (`orv reproduce RECIPE` prints the benchmark command), "
        "or name the workload this run used"
    )
    for what, mean, low, high, nominal, check_low in (
        ("input", stats.prompt_mean, stats.prompt_min, stats.prompt_max, workload.input_len, True),
        (
            "output",
            stats.output_mean,
            stats.output_min,
            stats.output_max,
            workload.output_len,
            bool(workload.ignore_eos),
        ),
    ):
        why = _length_misfit(what, mean, low, high, workload, wid, nominal, check_low)
        if why:
            out.append(Misfit("ORV241", why, rerun))
    need = workload.required_prompts(concurrency)
    if stats.requests < need:
        rule = (
            f"{workload.prompts_per_concurrency} × concurrency {concurrency}"
            if workload.prompts_per_concurrency and concurrency and need > (workload.min_prompts or 0)
            else "its minimum"
        )
        out.append(
            Misfit(
                "ORV242",
                f"the run completed {stats.requests} measured request(s); workload `{wid}` needs at "
                f"least {need} ({rule}), warm-ups not counted",
                f"run the benchmark with --num-prompts {need} or more (warm-ups on top)",
            )
        )
    if concurrency is not None and stats.peak_in_flight is not None and stats.peak_in_flight > concurrency:
        out.append(
            Misfit(
                "ORV243",
                f"the run had up to {stats.peak_in_flight} requests in flight; the recipe states "
                f"concurrency {concurrency}",
                f"run the benchmark with --max-concurrency {concurrency}, or state the concurrency it was run at",
            )
        )
    return out
