"""TensorRT-LLM's `trtllm-bench throughput --streaming --request_json R --report_json P` -> run file.

Formats read from NVIDIA/TensorRT-LLM's source (through the code index; trtllm-bench needs a GPU and
TensorRT-LLM's wheel is not on PyPI, so nothing here ran it):
- `--request_json` (tensorrt_llm/bench/benchmark/throughput.py @000a01de, `throughput_command`:
  `json.dumps(report_utility.get_request_info(tokenizer))`): a JSON list, one object per request,
  `RequestRecord.model_dump()` (tensorrt_llm/bench/dataclasses/statistics.py @77d7fe1e) with the
  decoded `output` and `output_tokens` (= len(tokens)) added by `ReportUtility.get_request_info`
  (tensorrt_llm/bench/dataclasses/reporting.py @02499765): `num_input_tokens`, and the
  `time.perf_counter_ns()` stamps `start_timestamp`, `first_token_timestamp`, `end_timestamp`
  (tensorrt_llm/bench/benchmark/utils/asynchronous.py @00c7a534, `LlmManager._process_single_request`).
  Without --streaming no first token is stamped: `first_token_timestamp` stays -1 and TTFT is 0.
- `--report_json` (`ReportUtility.get_statistics_dict`, reporting.py @02499765): `engine` {model,
  model_path, version, backend, dtype, kv_cache_dtype, quantization}, `world_info` {tp_size, pp_size,
  ep_size, world_size, max_batch_size, …}, `request_info` {num_requests, avg_input_length,
  avg_output_length}, `performance` {total_latency_ms (last end − first start), avg_request_latency_ms,
  system_output_throughput_tok_s (total output tokens / total latency), …} and, only when it
  streamed, `streaming_metrics` {avg_ttft_ms, avg_tpot_ms, ttft_percentiles, tpot_percentiles}
  (`PercentileStats.from_iterable`: `average` = sum / count, converted ns -> ms by × 1e-6).
Recomputed from the requests and compared within 1e-9 relative: total latency, mean request latency,
output throughput, request count, mean input/output length and, streaming, the TTFT and TPOT
percentiles' averages (TPOT per request: (end − first token) / (output tokens − 1)). `avg_ttft_ms` and
`avg_tpot_ms` come from statistics properties not in the indexed statistics.py, so they are carried,
not compared. A run without streaming is refused: its TTFT is not measured (the report has no
`streaming_metrics`, the requests no first-token stamp), and a report claiming TTFT over requests
without first-token stamps is refused too.
Carried into the run: `engine.version` as the TensorRT-LLM pin (and the tool's version: trtllm-bench
ships with TensorRT-LLM), `world_info` tp/pp/ep as the serving layout and world_size as the GPU count
(compared with the recipe, ORV206), `engine.model` as the served checkpoint (identity, ORV226), and the
report's own `machine.name`, `world_info` sizes and `engine` quantization/dtypes unchanged as the run's
`reported` block, which the gate compares with the recipe (ORV229 the GPU, ORV260 the layout, ORV261 the
quantization; a trtllm-bench run without it is ORV262).

`orv add-run --from trtllm-bench REQUESTS.json --report REPORT.json`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
from validator.science.throughput import inference_facts
from validator.stacks.engines import TRT_LLM_ENGINES

TOOL = "trtllm-bench"
FORMAT = "trtllm-bench-request-json"
SAVE_FLAG = "`trtllm-bench … throughput --streaming --request_json R --report_json P`"
RECOMPUTED = 1e-9
STAMPS = ("start_timestamp", "first_token_timestamp", "end_timestamp")


def _int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _one_json(source: Source, problems: Problems, what: str) -> JsonRecord | None:
    """The file's one JSON document; `problems` collects findings about this file (its own path)."""
    records = json_records(source, problems) if source.raw.strip() else []
    if problems.found:
        return None
    if len(records) != 1:
        problems.add("ORV104", f"{what} must be one JSON document", f"give {SAVE_FLAG}'s file unchanged")
        return None
    return records[0]


def _requests(record: JsonRecord, problems: Problems) -> list[dict[str, Any]]:
    if not isinstance(record.data, list) or not record.data:
        problems.add(
            "ORV104",
            "--request_json must be a non-empty JSON list, one object per request",
            f"give the file {SAVE_FLAG} wrote",
            record.first_line,
        )
        return []
    out = []
    for i, request in enumerate(record.data):
        bad = None if isinstance(request, dict) else "the request"
        if bad is None:
            bad = next((k for k in ("num_input_tokens", "output_tokens", *STAMPS) if not _int(request.get(k))), None)
        if bad is None and not (
            request["num_input_tokens"] >= 0
            and request["output_tokens"] >= 1
            and 0 <= request["start_timestamp"] <= request["end_timestamp"]
        ):
            bad = "num_input_tokens/output_tokens/timestamps"
        if bad:
            problems.add(
                "ORV104",
                f"request {i}: `{bad}` is missing or not a valid value",
                f"give the file {SAVE_FLAG} wrote, unchanged",
                *record.locate((i,)),
            )
            continue
        out.append(request)
    return out


def _streamed(requests: Sequence[dict[str, Any]]) -> bool:
    """Every request has a first-token stamp inside its span (non-streaming leaves -1: statistics.py)."""
    return all(
        r["start_timestamp"] <= r["first_token_timestamp"] <= r["end_timestamp"] and r["first_token_timestamp"] > 0
        for r in requests
    )


def _stated_twice(r: dict[str, Any]) -> list[tuple[str, Any, float, str]]:
    """(field, stated, recomputed, from what) for each fact a streamed RequestRecord states twice: its
    properties (statistics.py) are computed from the three stamps and the token count, so each must match."""
    start, first, end, tokens = r["start_timestamp"], r["first_token_timestamp"], r["end_timestamp"], r["output_tokens"]
    pairs: list[tuple[str, Any, float, str]] = [
        ("num_total_output_tokens", r.get("num_total_output_tokens"), tokens, "`output_tokens`"),
        ("num_generated_tokens", r.get("num_generated_tokens"), tokens - 1, "`output_tokens` − 1"),
        ("time_to_first_token", r.get("time_to_first_token"), first - start, "first_token − start stamps"),
        ("end_to_end_latency", r.get("end_to_end_latency"), end - start, "end − start stamps"),
        ("generation_time", r.get("generation_time"), end - first, "end − first_token stamps"),
    ]
    if tokens > 1:
        pairs.append(
            ("intertoken_latency", r.get("intertoken_latency"), (end - first) / (tokens - 1), "generation time ÷ gaps")
        )
    return [(k, v, want, how) for k, v, want, how in pairs if _number(v)]


def _check_requests(record: JsonRecord, requests: Sequence[dict[str, Any]], problems: Problems) -> None:
    """Each request's redundant fields agree with its stamps and token count (ORV216): an edited output
    count or latency shows against the fields left as trtllm-bench wrote them."""
    for i, r in enumerate(requests):
        for key, stated, recomputed, how in _stated_twice(r):
            if not printed_matches(float(stated), float(recomputed), RECOMPUTED):
                problems.add(
                    "ORV216",
                    f"request {i}: `{key}` is {stated!r} but its {how} give {recomputed!r}",
                    f"a request's fields were edited; give {SAVE_FLAG}'s file unchanged",
                    *record.locate((i, key)),
                )


def _samples(requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    first = min(r["start_timestamp"] for r in requests)
    return [
        {
            "prompt_tokens": r["num_input_tokens"],
            "output_tokens": r["output_tokens"],
            "ttft_ms": ms((r["first_token_timestamp"] - r["start_timestamp"]) / 1e9),
            "e2e_ms": ms((r["end_timestamp"] - r["start_timestamp"]) / 1e9),
            "start_ms": ms((r["start_timestamp"] - first) / 1e9),
        }
        for r in requests
    ]


def recomputed_report(requests: Sequence[dict[str, Any]], streamed: bool) -> dict[tuple[str, ...], float]:
    """The report's figures as ReportUtility computes them from these requests (module docstring)."""
    n = len(requests)
    total_ns = max(r["end_timestamp"] for r in requests) - min(r["start_timestamp"] for r in requests)
    outputs = sum(r["output_tokens"] for r in requests)
    figures: dict[tuple[str, ...], float] = {
        ("request_info", "num_requests"): n,
        ("request_info", "avg_input_length"): sum(r["num_input_tokens"] for r in requests) / n,
        ("request_info", "avg_output_length"): outputs / n,
        ("performance", "total_latency_ms"): total_ns * 1.0e-6,
        ("performance", "avg_request_latency_ms"): float(
            sum(r["end_timestamp"] - r["start_timestamp"] for r in requests)
        )
        / n
        * 1.0e-6,
        ("performance", "system_output_throughput_tok_s"): outputs / total_ns * 1.0e9,
    }
    if streamed:
        ttfts = [r["first_token_timestamp"] - r["start_timestamp"] for r in requests]
        tpots = [
            (r["end_timestamp"] - r["first_token_timestamp"]) / (r["output_tokens"] - 1)
            if r["output_tokens"] > 1
            else 0.0
            for r in requests
        ]
        figures[("streaming_metrics", "ttft_percentiles", "average")] = float(sum(ttfts)) / n * 1.0e-6
        figures[("streaming_metrics", "tpot_percentiles", "average")] = float(sum(tpots)) / n * 1.0e-6
    return figures


def _at(data: Any, path: Sequence[str]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _check_report(report: JsonRecord, requests: Sequence[dict[str, Any]], streamed: bool, problems: Problems) -> None:
    for path, value in recomputed_report(requests, streamed).items():
        printed = _at(report.data, path)
        if _number(printed) and not printed_matches(float(printed), value, RECOMPUTED):
            problems.add(
                "ORV109",
                f"the report's {'.'.join(path)} is {printed!r}, but its requests give {value!r}",
                "the report was edited or belongs to another run; give both files of one trtllm-bench run",
                *report.locate(path),
            )


def _engine_pin(meta: RunMetadata, version: str | None, problems: Problems, report: JsonRecord) -> RunMetadata:
    """The report's TensorRT-LLM version is the run's engine pin; a recipe pinning another is refused."""
    if not version:
        return meta
    software = {role: dict(c) for role, c in (meta.software or {}).items()}
    role = next((r for r, c in software.items() if str(c.get("name", "")).lower() in TRT_LLM_ENGINES), None)
    if role is not None and software[role].get("version") not in (None, version):
        problems.add(
            "ORV206",
            f"trtllm-bench ran TensorRT-LLM {version}, the recipe pins "
            f"{software[role]['name']} {software[role]['version']}",
            "attach the run to the recipe of the version it measured, or fix the recipe's pin",
            *report.locate(("engine", "version")),
        )
    role = role or "engine"
    software[role] = {**software.get(role, {"name": "tensorrt-llm"}), "version": version}
    return meta.with_values(meta.origin.get("software", "recipe"), software=software)


def convert(source: Source, meta: RunMetadata) -> Converted:
    problems = Problems(source)
    report_source = source.companions.get("report")
    if report_source is None:
        problems.add(
            "ORV108",
            "trtllm-bench's report (--report_json) was not given",
            "pass it with --report PATH: it states TensorRT-LLM's version, the layout and whether it streamed",
        )
        problems.raise_if_any()
    assert report_source is not None
    about_report = Problems(report_source)  # findings located in the report name the report's path
    requests_record = _one_json(source, problems, "--request_json")
    report = _one_json(report_source, about_report, "--report_json")
    if report is not None and (not isinstance(report.data, dict) or not isinstance(report.data.get("engine"), dict)):
        about_report.add(
            "ORV104", "not a trtllm-bench report (no `engine` object)", f"pass the --report_json file of {SAVE_FLAG}"
        )
    raise_if_any(problems, about_report)
    assert requests_record is not None and report is not None
    requests = _requests(requests_record, problems)
    if requests and max(r["end_timestamp"] for r in requests) <= min(r["start_timestamp"] for r in requests):
        problems.add(
            "ORV109",
            "the requests span no time (every end stamp at or before the first start)",
            f"give the file {SAVE_FLAG} wrote, unchanged",
            requests_record.first_line,
        )
    problems.raise_if_any()
    streamed = _streamed(requests)
    claims_streaming = isinstance(report.data.get("streaming_metrics"), dict)
    if claims_streaming and not streamed:
        about_report.add(
            "ORV109",
            "the report has streaming_metrics (TTFT, TPOT) but the requests carry no "
            "first-token time: trtllm-bench did not stream this run",
            "give both files of one trtllm-bench run",
            *report.locate(("streaming_metrics",)),
        )
    elif not streamed:
        problems.add(
            "ORV108",
            "trtllm-bench ran without --streaming: it measured no TTFT, so no TTFT or decode figure can be recomputed",
            f"run {SAVE_FLAG}",
            requests_record.first_line,
        )
    raise_if_any(problems, about_report)
    _check_report(report, requests, streamed, about_report)
    _check_requests(requests_record, requests, problems)
    raise_if_any(problems, about_report)
    notes: list[str] = []
    engine, world = report.data["engine"], report.data.get("world_info")
    world = world if isinstance(world, dict) else {}
    version = engine.get("version") if isinstance(engine.get("version"), str) else None
    model = engine.get("model") if isinstance(engine.get("model"), str) and engine.get("model") else None
    meta = _engine_pin(meta, version, about_report, report)
    raise_if_any(about_report)
    world_size = world.get("world_size")
    meta = stated_meta(
        meta,
        TOOL,
        notes,
        checkpoint=model,
        tool_version=version,
        gpus=world_size if _int(world_size) and world_size > 0 else None,
    )
    layout = {k: world.get(f"{k}_size") for k in ("tp", "pp", "ep")}
    meta = merge_mapping(
        meta, "serving", {k: v for k, v in layout.items() if _int(v) and v > 0 and (v > 1 or k != "ep")}, TOOL, notes
    )
    reported = _reported(report, engine, world, about_report)
    raise_if_any(about_report)
    samples = _samples(requests)
    streaming = report.data["streaming_metrics"] if claims_streaming else {}
    summary = {
        k: float(v)
        for k, v in (
            ("ttft_ms", streaming.get("avg_ttft_ms")),
            ("tpot_ms", streaming.get("avg_tpot_ms")),
            ("output_tok_s", _at(report.data, ("performance", "system_output_throughput_tok_s"))),
        )
        if _number(v) and v > 0
    }
    if "tpot_ms" in summary:
        summary["decode_tok_s"] = 1000.0 / summary["tpot_ms"]
    duration = (max(r["end_timestamp"] for r in requests) - min(r["start_timestamp"] for r in requests)) / 1e9
    if not summary:  # the report's own figures were left out: the run still needs a headline (schema)
        summary = dict(inference_facts(samples, duration).headline)
    document = inference_document(TOOL, FORMAT, meta, summary, samples, duration or None, problems)
    document["reported"] = reported  # compared with the recipe by ORV229, ORV260, ORV261 (evidence/identity.py)
    return Converted(document, tuple(notes))


def _reported(report: JsonRecord, engine: dict[str, Any], world: dict[str, Any], problems: Problems) -> dict[str, Any]:
    """The report's own statement of the setup, copied unchanged into the run (schema `reported`): the GPU's
    device name, the parallel layout and the engine's quantization and dtypes."""
    machine = report.data.get("machine")
    name = machine.get("name") if isinstance(machine, dict) else None
    out: dict[str, Any] = {"tool": TOOL}
    if isinstance(name, str) and name.strip():
        out["machine_name"] = name
    else:
        problems.add(
            "ORV108",
            "the report names no GPU (`machine.name`): the run cannot be matched to the recipe's GPU",
            f"give the --report_json file {SAVE_FLAG} wrote, unchanged",
            *report.locate(("machine",) if isinstance(machine, dict) else ()),
        )
    for key in ("tp_size", "pp_size", "ep_size", "world_size"):
        value = world.get(key)
        if _int(value) and value > 0:
            out[key] = value
        elif key != "ep_size":
            problems.add(
                "ORV108",
                f"the report's world_info.{key} is {value!r}: the run's parallel layout cannot be checked",
                f"give the --report_json file {SAVE_FLAG} wrote, unchanged",
                *report.locate(("world_info",) if world else ()),
            )
    for key in ("quantization", "dtype", "kv_cache_dtype"):
        value = engine.get(key)
        if isinstance(value, str) and value.strip():
            out[key] = value[:100]
    return out
