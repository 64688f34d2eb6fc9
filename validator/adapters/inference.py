"""What vLLM's and SGLang's serving benchmarks share: per-request arrays -> samples, printed figures -> summary.

Both tools (SGLang's bench_serving was adapted from vLLM's benchmark_serving.py) save per-request
arrays indexed by request — `input_lens`, `output_lens`, `ttfts` (s), `itls` (s, per request) and
`errors` — plus their own means (`mean_ttft_ms`, `mean_tpot_ms`, `output_throughput`). A request
counts as completed when its error is empty and it produced output, as the tools count it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from validator.adapters.common import (
    JsonRecord,
    Problems,
    RunMetadata,
    common_fields,
    merge_mapping,
    ms,
    number,
    printed_matches,
    require,
    stated,
    tool_block,
)
from validator.science import bounds
from validator.science.throughput import RunFacts, inference_facts

PER_REQUEST = ("input_lens", "output_lens", "ttfts", "itls")
# The tools' own means, and the recomputed figure each must equal (docs/metrics.md).
PRINTED = (("mean_ttft_ms", "ttft_ms"), ("mean_tpot_ms", "tpot_ms"), ("output_throughput", "output_tok_s"))
EXACT = 1e-6  # float rounding between the tool's numpy means and orv's sums
# a request's latency and its TTFT + inter-token gaps are read from one clock: equal but for float rounding
LATENCY_ROUNDING_S = 1e-6
# the tool's own totals, under each tool's name, and the per-request array each sums (ORV215)
TOTALS = (
    (("completed",), None),
    (("total_input_tokens", "total_input"), "input_lens"),
    (("total_output_tokens", "total_output"), "output_lens"),
)
RECONSTRUCTED_E2E = 0.02  # see docs/metrics.md: e2e rebuilt as TTFT + sum(ITL) misses the stream's tail


@dataclass(frozen=True)
class Requests:
    """Per-request arrays of one result, where they live in it, and whether e2e latency was recorded."""

    record: JsonRecord
    arrays: dict[str, list[Any]]
    where: tuple[str, ...]  # () for top level, ("details",) for SGLang's nested form
    has_latencies: bool


def find_requests(record: JsonRecord, where: tuple[str, ...], problems: Problems, save_flag: str) -> Requests | None:
    """The per-request arrays, None for a summary-only result; findings for partial or ragged arrays."""
    container: Any = record.data
    for key in where:
        container = container.get(key) if isinstance(container, dict) else None
    if not isinstance(container, dict) or not any(k in container for k in PER_REQUEST):
        return None
    arrays: dict[str, list[Any]] = {}
    for key in PER_REQUEST + ("latencies", "errors", "start_times"):
        if key not in container:
            if key in PER_REQUEST:
                problems.add(
                    "ORV108",
                    f"per-request `{key}` is missing while other per-request arrays are present",
                    f"give the result file the benchmark wrote ({save_flag}), unchanged",
                    record.first_line,
                )
            continue
        value = container[key]
        if not isinstance(value, list):
            problems.add(
                "ORV104",
                f"`{key}` must be a list with one entry per request",
                "give the result file the benchmark wrote, unchanged",
                *record.locate(where + (key,)),
            )
            continue
        arrays[key] = value
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        problems.add(
            "ORV109",
            f"per-request arrays have different lengths: {lengths}",
            "the file was truncated or edited; give the file the benchmark wrote",
            *record.locate(where + ("ttfts",)),
        )
    return Requests(record, arrays, where, "latencies" in arrays)


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def build_samples(requests: Requests, problems: Problems) -> list[dict[str, Any]]:
    """One sample per completed request: {prompt_tokens, output_tokens, ttft_ms, e2e_ms[, start_ms]}."""
    a = requests.arrays
    count = len(a.get("ttfts", []))
    errors = a.get("errors") or [""] * count
    starts = a.get("start_times")
    first_start = min((s for s in starts if _is_number(s)), default=0.0) if starts else 0.0
    samples: list[dict[str, Any]] = []
    for i in range(count):
        prompt, output, ttft, itl = a["input_lens"][i], a["output_lens"][i], a["ttfts"][i], a["itls"][i]
        if errors[i] or output == 0:
            continue  # a failed request: the tools leave it out of every mean
        bad = _bad_request(prompt, output, ttft, itl)
        latency = a["latencies"][i] if requests.has_latencies else None
        if requests.has_latencies and not (_is_number(latency) and latency >= 0):
            bad = "latencies"
        if bad:
            problems.add(
                "ORV104",
                f"request {i}: `{bad}` holds {a[bad][i]!r}, not a valid value",
                "give the result file the benchmark wrote, unchanged",
                *requests.record.locate(requests.where + (bad, i)),
            )
            continue
        # Without recorded latencies, a request ends at its last token: TTFT + sum of inter-token gaps.
        last_token = ttft + math.fsum(itl)
        e2e = latency if latency is not None else last_token
        if e2e < last_token - LATENCY_ROUNDING_S:  # refused, never clamped (ORV216, as ORV214 for a document)
            problems.add(
                "ORV216",
                f"request {i}: `latencies` holds {e2e!r} s but its `ttfts` {ttft!r} s + Σ `itls` "
                f"{math.fsum(itl)!r} s = {last_token!r} s: it ends before its last token",
                "give the result file the benchmark wrote, unchanged",
                *requests.record.locate(requests.where + ("latencies", i)),
            )
            continue
        sample: dict[str, Any] = {
            "prompt_tokens": prompt,
            "output_tokens": output,
            "ttft_ms": ms(ttft),
            "e2e_ms": ms(e2e),
        }
        if starts and _is_number(starts[i]):
            sample["start_ms"] = ms(starts[i] - first_start)
        samples.append(sample)
    return samples


def _failed(requests: Requests) -> int:
    """Requests the tool counts as failed: an error message, or no output token (as build_samples skips)."""
    a = requests.arrays
    errors = a.get("errors") or [""] * len(a.get("ttfts", []))
    return sum(1 for i, error in enumerate(errors) if error or a["output_lens"][i] == 0)


def check_totals(requests: Requests, problems: Problems) -> None:
    """The tool's own count and token totals must equal what its per-request arrays give, over the
    requests it counts as completed (no error message), as vLLM's and SGLang's calculate_metrics sum them."""
    a = requests.arrays
    count = len(a.get("ttfts", []))
    errors = a.get("errors") or [""] * count
    done = [i for i in range(count) if not errors[i]]
    for names, array in TOTALS:
        name = next((n for n in names if n in requests.record.data), None)
        stated = requests.record.data.get(name) if name else None
        if name is None or not isinstance(stated, int) or isinstance(stated, bool):
            continue
        values = a.get(array) if array else None
        if array and (values is None or not all(isinstance(values[i], int) for i in done)):
            continue
        recomputed = sum(values[i] for i in done) if values is not None else len(done)
        if stated != recomputed:
            what = f"Σ `{array}`" if array else "the requests without an error"
            problems.add(
                "ORV215",
                f"`{name}` is {stated} but {what} over the {len(done)} completed requests is {recomputed}",
                "the per-request arrays were edited or the file mixes two runs; give the result file the "
                "benchmark wrote, unchanged",
                *requests.record.locate((name,)),
            )


def _bad_request(prompt: Any, output: Any, ttft: Any, itl: Any) -> str | None:
    if not isinstance(prompt, int) or isinstance(prompt, bool) or prompt < 0:
        return "input_lens"
    if not isinstance(output, int) or isinstance(output, bool) or output < 0:
        return "output_lens"
    if not _is_number(ttft) or ttft < 0:
        return "ttfts"
    if not isinstance(itl, list) or not all(_is_number(x) and x >= 0 for x in itl):
        return "itls"
    return None


def printed_summary(record: JsonRecord, problems: Problems) -> dict[str, float]:
    """The tool's own headline figures, as it saved them; decode_tok_s is 1000 / its mean TPOT."""
    summary: dict[str, float] = {}
    for key, name in PRINTED:
        value = number(record, key, problems)
        if value is not None and value > 0:
            summary[name] = value
    if "tpot_ms" in summary:
        summary["decode_tok_s"] = 1000.0 / summary["tpot_ms"]
    return summary


def check_printed(record: JsonRecord, facts: RunFacts, has_latencies: bool, problems: Problems) -> None:
    """The tool's own means must follow from its own per-request arrays; else the file was altered."""
    for key, name in PRINTED:
        printed = record.data.get(key)
        recomputed = facts.headline.get(name)
        if not _is_number(printed) or printed <= 0 or recomputed is None:
            continue
        tolerance = RECONSTRUCTED_E2E if name == "tpot_ms" and not has_latencies else EXACT
        if not printed_matches(float(printed), recomputed, tolerance):
            problems.add(
                "ORV109",
                f"the file's own `{key}` is {printed!r} but its per-request arrays give {recomputed!r}",
                "the file was edited, truncated or mixes two runs; give the file the benchmark wrote",
                *record.locate((key,)),
            )


def inference_document(
    tool: str,
    fmt: str,
    meta: RunMetadata,
    summary: dict[str, float],
    samples: Sequence[dict[str, Any]] | None,
    duration_s: float | None,
    problems: Problems,
) -> dict[str, Any]:
    require(
        meta,
        ("model", "gpu", "gpus", "software", "quant", "serving", "measured_at", "measured_by", "tool_version"),
        problems,
        f"the {tool} result",
    )
    if not summary:
        problems.add(
            "ORV108",
            "the result has neither the tool's mean figures nor per-request samples",
            "give the result file the benchmark wrote, unchanged",
        )
    problems.raise_if_any()
    doc = common_fields("inference", meta)
    doc.update(
        {
            "tool": tool_block(tool, fmt, meta),
            "quant": meta.quant,
            "serving": dict(meta.serving or {}),
            "summary": summary,
        }
    )
    if duration_s:
        doc["duration_s"] = duration_s
    if samples:
        doc["samples"] = list(samples)
    return doc


def convert_result(
    tool: str,
    fmt: str,
    record: JsonRecord,
    requests: Requests | None,
    meta: RunMetadata,
    problems: Problems,
    notes: list[str],
    save_flag: str,
) -> dict[str, Any]:
    """The common path once a tool-specific adapter has found its record and per-request arrays."""
    duration = number(record, "duration", problems, required=True)
    if duration is not None and duration <= 0:
        problems.add(
            "ORV109",
            f"`duration` must be positive, not {duration!r}",
            "give the result file the benchmark wrote, unchanged",
            *record.locate(("duration",)),
        )
    problems.raise_if_any()  # samples are only built from complete, equally long per-request arrays
    concurrency = record.data.get("max_concurrency")
    why = bounds.out_of_bounds(concurrency, bounds.CONCURRENCY) if concurrency is not None else None
    if why:  # a count orv would record and compute with: within physics, or a finding naming it
        problems.add(
            "ORV109",
            f"`max_concurrency` {why}",
            "give the result file the benchmark wrote, unchanged",
            *record.locate(("max_concurrency",)),
        )
        problems.raise_if_any()
    if isinstance(concurrency, int) and not isinstance(concurrency, bool) and concurrency > 0:
        meta = merge_mapping(meta, "serving", {"concurrency": concurrency}, tool, notes)
    elif meta.serving and "concurrency" in meta.serving:
        notes.append(
            f"the {tool} run set no --max-concurrency (requests were not limited); serving.concurrency "
            f"{meta.serving['concurrency']} is taken from the {meta.origin.get('serving', 'metadata')}"
        )
    if requests is not None:
        check_totals(requests, problems)
    samples = build_samples(requests, problems) if requests else None
    summary = printed_summary(record, problems)
    problems.raise_if_any()
    if requests is None:
        notes.append(
            f"the result has no per-request samples (run the benchmark with {save_flag}): "
            f"this run can support tier T1 only"
        )
    else:
        failed = _failed(requests)
        if failed:  # counted, never dropped silently: the figures below leave these requests out
            total = len(requests.arrays.get("ttfts", []))
            notes.append(
                f"{failed} of {total} requests failed and {'is' if failed == 1 else 'are'} excluded "
                f"(an error or no output; {tool} leaves them out of its means too)"
            )
    if requests is not None and samples:
        facts = inference_facts(samples, duration)
        check_printed(record, facts, requests.has_latencies, problems)
        if not requests.has_latencies:
            notes.append(
                "the result records no per-request end-to-end latency; e2e_ms is TTFT + sum of "
                "inter-token latencies (docs/metrics.md)"
            )
    return inference_document(tool, fmt, meta, summary, samples, duration, problems)


def stated_meta(meta: RunMetadata, tool: str, notes: list[str], **values: Any) -> RunMetadata:
    for name, value in values.items():
        meta = stated(meta, name, value, tool, notes)
    return meta
