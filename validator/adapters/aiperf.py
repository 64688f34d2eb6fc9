"""AIPerf's per-request export and its summary (`aiperf profile --streaming --export-level records`) -> run file.

Formats read from AIPerf's own source, the release `aiperf==0.13.0` (PyPI; its files, paths as in
github.com/ai-dynamo/aiperf under `aiperf/`), the run fixtures made with it here
(tests/fixtures/tools/aiperf/make_fixture.sh). The same record fields are in the GitHub snapshot read
with `fetch` (ai-dynamo/aiperf @db4f6397, after tag v0.1.1: aiperf/common/models/record_models.py
`MetricRecordMetadata`, aiperf/common/config/config_defaults.py `PROFILE_EXPORT_FILE`):
- `profile_export.jsonl` (config/artifacts.py `OutputDefaults.PROFILE_EXPORT_JSONL_FILE`), one
  `MetricRecordInfo` per line (common/models/record_models.py): `metadata` (`MetricRecordMetadata`:
  `request_start_ns` / `request_end_ns` wall clock, `benchmark_phase` "warmup" | "profiling",
  `was_cancelled`), `metrics` {tag: {value, unit}} (`time_to_first_token` ms, `request_latency` ms,
  `inter_token_latency` ms, `input_sequence_length` / `output_sequence_length` tokens) and `error`.
  Warm-up records are in the same file (0.13.0 writes both phases): only the profiling phase counts.
- `profile_export_aiperf.json` (`PROFILE_EXPORT_AIPERF_JSON_FILE`), the summary: `aiperf_version`,
  `input_config` (models, `endpoint.streaming`, phases with their concurrency), `was_cancelled`, and
  per metric tag {unit, avg, …, count, sum}.
AIPerf's aggregates, recomputed here the way its code computes them (metrics/types/*.py):
  request_count            profiling records without an error (an error is `error` or a cancellation)
  time_to_first_token.avg  mean of the records' TTFT; likewise request_latency, inter_token_latency,
                           input/output_sequence_length (their `sum` too)
  benchmark_duration       max(start + request latency) − min(start) (BenchmarkDurationMetric, from
                           Min/MaxRequestTimestampMetric); AIPerf keeps timestamps in float64 columns
                           (metrics/column_store.py), so the two ends are rounded to float64 first
Each must equal AIPerf's summary within 1e-9 relative, or the files were edited or mixed (ORV109).
AIPerf 0.13.0's `output_token_throughput` divides Σ output tokens by the profiling phase's window
(metrics/metric_dicts.py `observation_duration`: the phase's start and end, not the records'), which
the summary gives only to the microsecond (`start_time`, `end_time`): it is compared within that
rounding (1 µs / window). orv's own output_tok_s is Σ output tokens / benchmark_duration.
Without `--streaming` AIPerf records no TTFT (TTFTMetric is STREAMING_TOKENS_ONLY): such a run is
refused, it cannot back a TTFT or decode figure.

`orv add-run --from aiperf PATH`: PATH is AIPerf's artifact folder or its `profile_export.jsonl`;
the summary is read beside it (`<stem>_aiperf.json` for the default stem, `<prefix>.json` for a
`--profile-export-prefix`), or from `--report PATH`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeGuard

from validator.adapters.common import (
    Converted,
    JsonRecord,
    Problems,
    RunMetadata,
    Source,
    json_records,
    merge_mapping,
    ms,
    printed_matches,
    raise_if_any,
)
from validator.adapters.inference import inference_document, stated_meta

TOOL = "aiperf"
FORMAT = "aiperf-profile-export-jsonl"
RECORDS = "profile_export.jsonl"
SUMMARY = "profile_export_aiperf.json"
SAVE_FLAG = "`aiperf profile --streaming --export-level records`"
RECOMPUTED = 1e-9  # AIPerf's means and sums are numpy's over the same values
NS_PER_MS = 1_000_000


def summary_path(records_path: str) -> str:
    """Where AIPerf writes the summary beside its records (config/artifacts.py: one prefix for both)."""
    folder, name = os.path.split(records_path)
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
    return os.path.join(folder, SUMMARY if stem == RECORDS[: -len(".jsonl")] else f"{stem}.json")


def _metric(record: dict[str, Any], tag: str) -> Any:
    entry = (record.get("metrics") or {}).get(tag)
    return entry.get("value") if isinstance(entry, dict) else None


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _summary_value(summary: JsonRecord, tag: str, stat: str = "avg") -> float | None:
    entry = summary.data.get(tag)
    value = entry.get(stat) if isinstance(entry, dict) else None
    return float(value) if _is_number(value) else None


def _read_summary(source: Source, problems: Problems) -> tuple[JsonRecord | None, Problems]:
    """The summary, and the findings located in it (they name the summary's own path)."""
    report = source.companions.get("report")
    if report is None:
        problems.add(
            "ORV108",
            f"AIPerf's summary ({SUMMARY}) was not given",
            f"pass AIPerf's artifact folder, keep {SUMMARY} beside {RECORDS}, or pass --report PATH",
        )
        return None, Problems(source)
    about = Problems(report)
    records = json_records(report, about) if report.raw.strip() else []
    if not about.found and (len(records) != 1 or not isinstance(records[0].data, dict)):
        about.add("ORV104", "AIPerf's summary must be one JSON object", f"give AIPerf's {SUMMARY} unchanged")
    return (records[0] if not about.found else None), about


class _Phases:
    """The records split by phase, with what AIPerf would count."""

    def __init__(self, records: Sequence[JsonRecord], problems: Problems) -> None:
        self.profiling: list[JsonRecord] = []
        self.warmup = 0
        self.failed: list[JsonRecord] = []  # profiling records with an error or cancelled
        for record in records:
            data = record.data
            meta = data.get("metadata") if isinstance(data, dict) else None
            if not isinstance(meta, dict) or not isinstance(data.get("metrics"), dict):
                problems.add(
                    "ORV104",
                    "an AIPerf record must be an object with `metadata` and `metrics`",
                    f"give AIPerf's {RECORDS} unchanged",
                    record.first_line,
                )
                continue
            if meta.get("benchmark_phase") != "profiling":
                self.warmup += 1
            elif meta.get("was_cancelled") or data.get("error"):
                self.failed.append(record)
            else:
                self.profiling.append(record)


def _samples(done: Sequence[JsonRecord], problems: Problems) -> list[dict[str, Any]]:
    """One sample per completed profiling request; TTFT and latency are AIPerf's own (perf-counter) values."""
    first = min(
        (
            r.data["metadata"].get("request_start_ns")
            for r in done
            if isinstance(r.data["metadata"].get("request_start_ns"), int)
        ),
        default=0,
    )
    out = []
    for record in done:
        data, meta = record.data, record.data["metadata"]
        values = {
            tag: _metric(data, tag)
            for tag in ("input_sequence_length", "output_sequence_length", "time_to_first_token", "request_latency")
        }
        start = meta.get("request_start_ns")
        if values["time_to_first_token"] is None:
            problems.add(
                "ORV108",
                "a profiling record has no `time_to_first_token`: AIPerf measures TTFT only when it streams",
                f"run {SAVE_FLAG} (TTFT and decode rates need --streaming)",
                record.first_line,
            )
            continue
        bad = next(
            (
                tag
                for tag, v in values.items()
                if not _is_number(v) or v < 0 or (tag.endswith("length") and not isinstance(v, int))
            ),
            None,
        )
        if bad is None and values["request_latency"] < values["time_to_first_token"]:
            bad = "request_latency"  # a request ends after its first token
        if bad or not isinstance(start, int) or isinstance(start, bool):
            problems.add(
                "ORV104",
                f"`{bad or 'metadata.request_start_ns'}` is not a valid value in this record",
                f"give AIPerf's {RECORDS} unchanged",
                record.first_line,
            )
            continue
        if _contradicted(record, values, problems):
            continue
        out.append(
            {
                "prompt_tokens": values["input_sequence_length"],
                "output_tokens": values["output_sequence_length"],
                "ttft_ms": values["time_to_first_token"],
                "e2e_ms": values["request_latency"],
                "start_ms": ms((start - first) / 1e9),
            }
        )
    return out


def _contradicted(record: JsonRecord, values: dict[str, Any], problems: Problems) -> bool:
    """A record's output length must agree with the other fields that state it (ORV216): AIPerf's own
    inter_token_latency is (request_latency − TTFT) ÷ (output_sequence_length − 1) (its
    InterTokenLatencyMetric), and output_token_count counts the same tokens when no reasoning is split out."""
    data, osl = record.data, values["output_sequence_length"]
    found = []
    itl = _metric(data, "inter_token_latency")
    if _is_number(itl) and osl > 1:
        decode = values["request_latency"] - values["time_to_first_token"]
        if not printed_matches(itl * (osl - 1), decode, RECOMPUTED * 1000):
            found.append(
                f"`output_sequence_length` {osl} but its `inter_token_latency` {itl!r} ms × {osl - 1} gaps is "
                f"{itl * (osl - 1)!r} ms against `request_latency` − `time_to_first_token` = {decode!r} ms "
                f"(implying {decode / itl + 1:.1f} tokens)"
            )
    count = _metric(data, "output_token_count")
    if isinstance(count, int) and _metric(data, "reasoning_token_count") is None and count != osl:
        found.append(f"`output_sequence_length` {osl} but `output_token_count` {count}")
    for text in found:
        problems.add(
            "ORV216",
            f"a profiling record states {text}",
            f"the record's token count was edited; give AIPerf's {RECORDS} unchanged",
            record.first_line,
        )
    return bool(found)


def benchmark_duration_s(done: Sequence[JsonRecord]) -> float:
    """AIPerf's benchmark_duration: last response − first request, both ends as float64 nanoseconds."""
    starts = [r.data["metadata"]["request_start_ns"] for r in done]
    ends = [s + round(_metric(r.data, "request_latency") * NS_PER_MS) for s, r in zip(starts, done)]
    return (float(max(ends)) - float(min(starts))) / 1e9


def _check_counts(summary: JsonRecord, phases: _Phases, problems: Problems) -> None:
    """AIPerf's summary counts the profiling phase's completed requests only; anything else is refused."""
    counted = _summary_value(summary, "request_count")
    if summary.data.get("was_cancelled") is True:
        problems.add(
            "ORV109",
            "AIPerf's summary says the benchmark was cancelled before it finished",
            "run the benchmark to the end; a cut-short run is not evidence",
            *summary.locate(("was_cancelled",)),
        )
    if counted is not None and counted != len(phases.profiling):
        extra = []
        if phases.warmup:
            extra.append(f"{phases.warmup} warm-up")
        if phases.failed:
            extra.append(f"{len(phases.failed)} cancelled or failed")
        problems.add(
            "ORV109",
            f"AIPerf's summary counts {counted:g} requests, but the records hold "
            f"{len(phases.profiling)} completed profiling requests"
            + (f" (besides {' and '.join(extra)})" if extra else ""),
            "the summary counts warm-up or cancelled records, or the files come from different runs; "
            "give AIPerf's own two files of one run",
            *summary.locate(("request_count",)),
        )


def _check_summary(summary: JsonRecord, done: Sequence[JsonRecord], problems: Problems) -> None:
    """Every aggregate AIPerf computed from these records must come out again (RECOMPUTED)."""
    recomputed: dict[tuple[str, str], float] = {}
    for tag in (
        "time_to_first_token",
        "request_latency",
        "inter_token_latency",
        "input_sequence_length",
        "output_sequence_length",
    ):
        values = [_metric(r.data, tag) for r in done]
        if values and all(_is_number(v) for v in values):
            recomputed[(tag, "avg")] = math.fsum(values) / len(values)
            if tag.endswith("length"):
                recomputed[(tag, "sum")] = math.fsum(values)
    recomputed[("benchmark_duration", "avg")] = benchmark_duration_s(done)
    tolerance = dict.fromkeys(recomputed, RECOMPUTED)
    window = _phase_window_s(summary)
    if window and ("output_sequence_length", "sum") in recomputed:
        # the phase's window is printed to the microsecond: both ends may be 0.5 µs off
        recomputed[("output_token_throughput", "avg")] = recomputed[("output_sequence_length", "sum")] / window
        tolerance[("output_token_throughput", "avg")] = 1e-6 / window + RECOMPUTED
    for (tag, stat), value in recomputed.items():
        printed = _summary_value(summary, tag, stat)
        if printed is not None and not printed_matches(printed, value, tolerance[(tag, stat)]):
            problems.add(
                "ORV109",
                f"AIPerf's summary gives {tag}.{stat} = {printed!r}, but its records give {value!r}",
                "the summary was edited or belongs to another run; give AIPerf's own two files of one run",
                *summary.locate((tag, stat)),
            )


def _phase_window_s(summary: JsonRecord) -> float | None:
    """The profiling phase's window from the summary's `start_time` / `end_time` (ISO, microseconds)."""
    try:
        start, end = (datetime.fromisoformat(summary.data[k]) for k in ("start_time", "end_time"))
        window = (end - start).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None
    return window if window > 0 else None


def _started(summary: JsonRecord) -> str | None:
    """When the profiling phase began (the summary's `start_time`), to the second: the run's measured_at."""
    try:
        return datetime.fromisoformat(summary.data["start_time"]).strftime("%Y-%m-%dT%H:%M:%S")
    except (KeyError, TypeError, ValueError):
        return None


def _at(data: Any, path: Sequence[str]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _stated(summary: JsonRecord) -> tuple[str | None, bool | None, int | None]:
    """The served model, whether it streamed, and the profiling phase's concurrency, from input_config."""
    config = summary.data.get("input_config")
    config = config if isinstance(config, dict) else {}
    # 0.13: models.items[].name and phases[]; 0.1 (GitHub @db4f6397): endpoint.model_names, loadgen.concurrency
    names = [
        m.get("name")
        for m in _list(_at(config, ("models", "items")))
        if isinstance(m, dict) and isinstance(m.get("name"), str)
    ]
    names = names or [m for m in _list(_at(config, ("endpoint", "model_names"))) if isinstance(m, str)]
    streaming = _at(config, ("endpoint", "streaming"))
    streaming = streaming if isinstance(streaming, bool) else None
    phases = [p for p in _list(config.get("phases")) if isinstance(p, dict) and p.get("kind") == "profiling"]
    concurrency = phases[0].get("concurrency") if len(phases) == 1 else _at(config, ("loadgen", "concurrency"))
    valid = isinstance(concurrency, int) and not isinstance(concurrency, bool) and concurrency > 0
    return (names[0] if len(names) == 1 else None), streaming, (concurrency if valid else None)


def _printed(summary: JsonRecord) -> dict[str, float]:
    """AIPerf's own headline figures as its summary gives them; decode_tok_s is 1000 / its mean ITL."""
    out = {
        name: value
        for name, tag in (
            ("ttft_ms", "time_to_first_token"),
            ("tpot_ms", "inter_token_latency"),
            ("output_tok_s", "output_token_throughput"),
        )
        if (value := _summary_value(summary, tag)) is not None and value > 0
    }
    if "tpot_ms" in out:
        out["decode_tok_s"] = 1000.0 / out["tpot_ms"]
    return out


def convert(source: Source, meta: RunMetadata) -> Converted:
    problems = Problems(source)
    records = json_records(source, problems) if source.raw.strip() else []
    summary, about_summary = _read_summary(source, problems)
    if not records:
        problems.add("ORV108", "the file holds no AIPerf record", f"give AIPerf's {RECORDS} ({SAVE_FLAG})")
    raise_if_any(problems, about_summary)
    assert summary is not None
    notes: list[str] = []
    phases = _Phases(records, problems)
    model, streaming, concurrency = _stated(summary)
    if streaming is not True:  # AIPerf's summary leaves `streaming` out when it is off (its default)
        about_summary.add(
            "ORV108",
            "AIPerf ran without --streaming: it measured no TTFT, so no TTFT or decode figure can be recomputed",
            f"run {SAVE_FLAG}",
            *summary.locate(("input_config",)),
        )
    _check_counts(summary, phases, about_summary)
    raise_if_any(problems, about_summary)
    samples = _samples(phases.profiling, problems)
    if not samples and not problems.found:
        problems.add("ORV108", "the profiling phase completed no request", f"run {SAVE_FLAG} to completion")
    raise_if_any(problems)
    _check_summary(summary, phases.profiling, about_summary)
    raise_if_any(about_summary)
    version = summary.data.get("aiperf_version")
    meta = stated_meta(
        meta,
        TOOL,
        notes,
        checkpoint=model,
        tool_version=version if isinstance(version, str) and version else None,
        measured_at=_started(summary),  # the tool's own date, as the vLLM and llama-bench adapters take it
    )
    if concurrency is not None:
        meta = merge_mapping(meta, "serving", {"concurrency": concurrency}, TOOL, notes)
    if phases.warmup:
        notes.append(
            f"{phases.warmup} warm-up record(s) left out (AIPerf's warm-up phase; its summary leaves them out too)"
        )
    if phases.failed:
        notes.append(
            f"{len(phases.failed)} profiling request(s) failed or were cancelled and are excluded "
            "(AIPerf leaves them out of its means too)"
        )
    duration = benchmark_duration_s(phases.profiling)
    document = inference_document(TOOL, FORMAT, meta, _printed(summary), samples, duration, problems)
    return Converted(document, tuple(notes))
