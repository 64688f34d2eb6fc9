"""An inference run's own fields checked against each other: what its samples measured bounds what it states.

A serving benchmark writes the same facts several times: the run's `duration` and the requests'
start and end times; the concurrency it was told to keep and the requests it really had in flight;
each request's end-to-end latency and its first token. orv recomputes the one from the other and
refuses a run whose fields disagree (docs/metrics.md, "Fields of each tool"):

  ORV212  duration_s against the measured span (first request's start to last request's end,
          from start_ms + e2e_ms): the tool's clock encloses every request it timed, so
          duration_s ≥ span − 1 ms (rounding); and it encloses little else (its start-up, failed
          requests left out of the samples), so duration_s ≤ 1.25 × span + 5 s. Without start
          times: duration_s ≥ the longest request (and ORV511 holds the aggregate to
          concurrency × one stream's rate, i.e. duration_s ≥ Σ e2e ÷ concurrency).
  ORV213  serving.concurrency against the requests in flight (from start_ms): with at least
          `concurrency` requests, all of it at the busiest instant (a benchmark at an unlimited
          request rate starts its first `concurrency` requests together), and (with
          2 × concurrency requests or more) at least half of it on average from the first start
          to the last (it refills a slot the moment one frees while requests wait): a run kept at
          one request in flight is not a measurement at 16. More in flight than stated
          is ORV243's (the run against its recipe's concurrency).
  ORV214  every request's e2e_ms ≥ ttft_ms, strictly when it produced more than one token: its
          last token cannot come before its first.
Each function is pure; the run-file checks (validator/checks/consistency.py) and `orv add-run` (both
a tool's output and a run document) call the same ones, so a run refused at add-run is refused
by `orv check` too, and a run file edited by hand is caught. The loader's decoded columns
(validator/science/samples.py) are read, not the samples again, and each honest-run test is one
C-level pass (a request-by-request loop runs only to word a fault).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import add, le, sub
from typing import Any, TypeGuard

from validator.science.samples import Columns
from validator.science.workload_fit import peak_in_flight

ROUNDING_MS = 1.0  # start_ms and e2e_ms are stored to the nanosecond; a tool's own clock reads to the µs
OVERHEAD_RATIO = 1.25  # duration may exceed the span by failed requests the samples leave out …
OVERHEAD_S = 5.0  # … and the tool's start-up and shut-down
FEWEST_IN_FLIGHT = 0.5  # of the stated concurrency, on average over the span
MEAN_NEEDS_ROUNDS = 2  # the average is asked of runs that refilled every slot at least once


@dataclass(frozen=True)
class Inconsistency:
    code: str  # ORV212 duration, ORV213 concurrency, ORV214 e2e vs TTFT
    field: str  # the field stated, as a dotted path (`duration_s`, `samples[3].e2e_ms`)
    at: tuple[str | int, ...]  # its JSON path, to locate it
    message: str  # names the field and both values
    hint: str


def _fig(value: float) -> str:
    return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:,.1f}"


def _number(value: Any) -> TypeGuard[float]:
    """A finite number a float can hold (an integer past 1e308 is the schema's ORV109, not a crash here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


_NUMBERS = frozenset({int, float})  # exactly: bool, and subclasses of either, take the general path


def _column(columns: Columns, key: str) -> list[float] | None:
    """A numeric column every sample has, as floats, else None (the schema reports a malformed sample).
    A JSON file's column is ints and floats: one C-level pass each for its types (read once by
    Columns), finiteness and the conversion; any other column is read value by value."""
    values, types = columns.get(key), columns.types(key)
    if values is None or not types <= _NUMBERS:
        return _column_of_values(columns.samples, key)
    try:
        if not all(map(math.isfinite, values)):
            return None
    except OverflowError:  # an integer past 1e308 is the schema's ORV109, not a number here
        return None
    return values if types == {float} else list(map(float, values))


def _column_of_values(samples: Sequence[Any], key: str) -> list[float] | None:
    out = []
    for sample in samples:
        value = sample.get(key) if isinstance(sample, Mapping) else None
        if not _number(value):
            return None
        out.append(float(value))
    return out


def measured_span_ms(starts: Sequence[float], e2es: Sequence[float]) -> float:
    """First request's start to the last request's end."""
    return max(map(add, starts, e2es)) - min(starts)


def mean_in_flight_queued(starts: Sequence[float], e2es: Sequence[float]) -> float | None:
    """Requests open on average while requests were still waiting to start: from the first start to the
    last. A benchmark at an unlimited request rate refills a slot the moment one frees, so every slot is
    busy until the queue is empty; the tail after the last start (one long request) does not count.
    None when every request started at once."""
    first, last = min(starts), max(starts)
    if last <= first:
        return None
    # max(0, min(s + e, last) - s) per request, in C
    busy = math.fsum(map(max, repeat(0.0), map(sub, map(min, map(add, starts, e2es), repeat(last)), starts)))
    return busy / (last - first)


def inconsistencies(document: Mapping[str, Any], columns: Columns | None = None) -> list[Inconsistency]:
    """Every disagreement between an inference run document's fields (empty for other kinds, for
    llama-bench's synthetic repetitions, and for runs without samples). `columns`, of the document's
    samples, when the caller has read them already (the loader has)."""
    samples = document.get("samples")
    if document.get("kind") != "inference" or "synthetic" in document or not isinstance(samples, list):
        return []
    if not samples:
        return []
    if columns is None or columns.samples is not samples:
        columns = Columns(samples)
    ttfts, e2es = _column(columns, "ttft_ms"), _column(columns, "e2e_ms")
    if ttfts is None or e2es is None:
        return []
    out = list(_e2e_before_ttft(samples, ttfts, e2es))
    starts = _column(columns, "start_ms")
    serving = document.get("serving")
    concurrency = serving.get("concurrency") if isinstance(serving, Mapping) else None
    concurrency = concurrency if isinstance(concurrency, int) and not isinstance(concurrency, bool) else None
    duration = document.get("duration_s")
    if _number(duration) and duration > 0:
        out.extend(_duration(float(duration), starts, e2es))
    if starts is not None and concurrency and concurrency > 0:
        out.extend(_concurrency(concurrency, starts, e2es))
    return out


def _e2e_before_ttft(samples: Sequence[Any], ttfts: Sequence[float], e2es: Sequence[float]) -> list[Inconsistency]:
    if not any(map(le, e2es, ttfts)):  # every request ends after its first token: nothing to word
        return []
    out = []
    for i, (ttft, e2e) in enumerate(zip(ttfts, e2es)):
        tokens = samples[i].get("output_tokens")
        many = isinstance(tokens, int) and tokens > 1
        if e2e < ttft or (many and e2e <= ttft):
            out.append(
                Inconsistency(
                    "ORV214",
                    f"samples[{i}].e2e_ms",
                    ("samples", i, "e2e_ms"),
                    f"request {i}: e2e_ms is {_fig(e2e)} but its ttft_ms is {_fig(ttft)}"
                    + (f" and it produced {tokens} tokens" if many else "")
                    + ": its last token cannot come "
                    + ("before" if e2e < ttft else "with")
                    + " its first",
                    "give each request's end-to-end latency as the tool measured it (request start to last "
                    "token); a request with no recorded latency is left out, not set to 0",
                )
            )
            if len(out) == 10:  # enough to name the fault; a count follows
                more = sum(1 for t, e in zip(ttfts[i + 1 :], e2es[i + 1 :]) if e < t)
                if more:
                    out.append(
                        Inconsistency(
                            "ORV214",
                            "samples",
                            ("samples",),
                            f"{more} more request(s) end before their first token",
                            "give each request's end-to-end latency as the tool measured it",
                        )
                    )
                break
    return out


def _duration(duration_s: float, starts: Sequence[float] | None, e2es: Sequence[float]) -> list[Inconsistency]:
    stated = duration_s * 1000.0
    hint = "give `duration` as the tool wrote it, in seconds; edit neither it nor the start or end times"
    if starts is not None:
        span = measured_span_ms(starts, e2es)
        if stated < span - ROUNDING_MS:
            why = "shorter than the requests it timed"
        elif stated > OVERHEAD_RATIO * span + OVERHEAD_S * 1000.0:
            why = f"more than {OVERHEAD_RATIO:g} × the span + {OVERHEAD_S:g} s (milliseconds given as seconds?)"
        else:
            return []
        return [
            Inconsistency(
                "ORV212",
                "duration_s",
                ("duration_s",),
                f"duration_s is {_fig(duration_s)} s but the requests' own start and end times span "
                f"{_fig(span / 1000.0)} s: {why}",
                hint,
            )
        ]
    longest = max(e2es)
    if stated < longest - ROUNDING_MS:
        return [
            Inconsistency(
                "ORV212",
                "duration_s",
                ("duration_s",),
                f"duration_s is {_fig(duration_s)} s but one request alone took {_fig(longest / 1000.0)} s",
                hint,
            )
        ]
    return []  # duration ≥ Σ e2e ÷ concurrency is ORV511's (aggregate ≤ concurrency × one stream's rate)


def _concurrency(concurrency: int, starts: Sequence[float], e2es: Sequence[float]) -> list[Inconsistency]:
    peak = peak_in_flight(starts, e2es)
    hint = (
        "state the concurrency the benchmark ran at (`--max-concurrency`, with an unlimited request rate), "
        "and give its start and end times unedited"
    )
    at: tuple[str | int, ...] = ("serving", "concurrency")
    if peak > concurrency or len(starts) < concurrency:  # more in flight than stated is ORV243's
        return []
    if peak < concurrency:  # an unlimited request rate starts the first `concurrency` requests at once
        message = (
            f"serving.concurrency is {concurrency} but the requests' own start and end times never have "
            f"more than {peak} in flight"
        )
        return [Inconsistency("ORV213", "serving.concurrency", at, message, hint)]
    floor = FEWEST_IN_FLIGHT * concurrency
    mean = mean_in_flight_queued(starts, e2es)
    if len(starts) >= MEAN_NEEDS_ROUNDS * concurrency and mean is not None and mean < floor:
        message = (
            f"serving.concurrency is {concurrency} but the requests' own start and end times have "
            f"{_fig(mean)} in flight on average from the first request's start to the last's (fewer than "
            f"{_fig(floor)}, half of it)"
        )
        return [Inconsistency("ORV213", "serving.concurrency", at, message, hint)]
    return []
