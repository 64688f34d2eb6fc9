"""Property: an honest serving run's every derived field recomputes within the tool's precision, and moving any
one field the tool wrote by 1% or more is refused (at add-run or by `orv check`) or moves nothing orv shows.

Honest runs are drawn request by request (tests/testing/serving.py for vLLM; trtllm-bench's request records
from their three stamps), written as the tools write them; a mutation edits one field of that output.
"Refused" is what `orv add-run` and the gate do with it: the adapter's findings (ORV109, ORV215, ORV216),
the run's own consistency (ORV212-ORV214, validator/science/consistency.py) or more requests in flight than
the run states (ORV243). "Moves nothing" compares every figure the boards take from a run (the tool's
summary, the figures recomputed from the samples, the stated concurrency) with the honest run's.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import fuzz_examples
from tests.testing.registry import TOOLS, make_registry
from tests.testing.serving import Request, span_s, vllm_result
from validator.adapters import Source, convert, metadata, trtllm
from validator.errors import AdapterError
from validator.science.consistency import inconsistencies
from validator.science.throughput import inference_facts
from validator.science.workload_fit import peak_in_flight

RECIPE = """\
id: qwen3-8-27b-h100-vllm-fp8-c{c}
kind: inference
model: qwen3.8-27b
hardware: {{gpu: h100, count: 1}}
author: ATTUNE
measured: "2026-10-18"
software:
  engine: {{name: {engine}, version: "{version}"}}
quant: fp8
serving: {{context_len: 8192, concurrency: {c}}}
workload: random-512-64
claimed: {{}}
runs: []
"""
PROPERTY = settings(
    max_examples=fuzz_examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_registry(tmp_path_factory.mktemp("consistency") / "registry")


def recipe(root: Path, concurrency: int, engine: str = "vllm", version: str = "0.11.0") -> str:
    path = root / f"recipe-{engine}-c{concurrency}.yaml"
    path.write_text(RECIPE.format(c=concurrency, engine=engine, version=version), encoding="utf-8")
    return str(path)


# --------------------------------------------------------------------------- honest runs


@st.composite
def served(draw: Any) -> tuple[list[Request], float, int]:
    """Requests as a benchmark at an unlimited request rate sends them: `concurrency` slots, each request
    started a fraction of a millisecond after a slot frees; and the duration the tool's clock gives (the
    span and a little start-up)."""
    concurrency = draw(st.integers(1, 6))
    count = draw(st.integers(2 * concurrency + 2, 40))
    free = [5000.0 + 1e-4 * i for i in range(concurrency)]  # when each slot can next start a request
    requests = []
    for _ in range(count):
        slot = min(range(concurrency), key=free.__getitem__)
        prompt = draw(st.integers(16, 2048))
        rate = draw(st.floats(1000.0, 20000.0))  # prefill tok/s: well inside one H100's compute
        ttft = prompt / rate + draw(st.floats(0.0, 0.05))
        request = Request(prompt, draw(st.integers(2, 200)), ttft, draw(st.floats(0.005, 0.05)), free[slot])
        requests.append(request)
        free[slot] = request.start_s + request.latency_s + draw(st.floats(0.0001, 0.002))
    return requests, span_s(requests) + draw(st.floats(0.0005, 0.05)), concurrency


def converted(
    fmt: str, raw: dict[str, Any] | list[Any], path: str, report: dict[str, Any] | None = None
) -> dict[str, Any]:
    companions = {"report": Source("report.json", json.dumps(report).encode())} if report is not None else {}
    source = Source("result.json", json.dumps(raw).encode(), companions)
    return convert(fmt, source, metadata(fmt, "", path, {})).document


def refused(convert_it: Callable[[], dict[str, Any]]) -> tuple[bool, dict[str, Any] | None]:
    """(refused?, the document when it converted): what add-run and the gate would say."""
    try:
        document = convert_it()
    except AdapterError:
        return True, None
    samples = document.get("samples") or []
    stated = document["serving"].get("concurrency")
    if inconsistencies(document):
        return True, document
    if stated and samples and "start_ms" in samples[0]:  # ORV243: more in flight than the run states
        if peak_in_flight([s["start_ms"] for s in samples], [s["e2e_ms"] for s in samples]) > stated:
            return True, document
    return False, document


def shown(document: dict[str, Any]) -> dict[str, float]:
    """Every figure the boards take from a run: the tool's summary, the recomputed ones, the concurrency."""
    facts = inference_facts(document["samples"], document.get("duration_s"))
    figures = {f"summary.{k}": v for k, v in document["summary"].items()}
    figures.update({f"recomputed.{k}": v for k, v in facts.headline.items()})
    figures["serving.concurrency"] = document["serving"]["concurrency"]
    return figures


def same(a: dict[str, float], b: dict[str, float]) -> bool:
    return a.keys() == b.keys() and all(math.isclose(a[k], b[k], rel_tol=1e-9) for k in a)


# --------------------------------------------------------------------------- vLLM


@PROPERTY
@given(served())
def test_an_honest_vllm_run_recomputes_every_derived_field(root: Path, run: tuple[list[Request], float, int]) -> None:
    requests, duration, concurrency = run
    result = vllm_result(requests, duration, concurrency)
    is_refused, document = refused(lambda: converted("vllm", result, recipe(root, concurrency)))
    assert not is_refused and document is not None
    facts = inference_facts(document["samples"], document["duration_s"])
    # the tool's own derived fields, within its precision (float means of the same values; orv stores times
    # to the nanosecond, the adapter's EXACT)
    assert math.isclose(facts.headline["ttft_ms"], result["mean_ttft_ms"], rel_tol=1e-6)
    assert math.isclose(facts.headline["tpot_ms"], result["mean_tpot_ms"], rel_tol=1e-6)
    assert math.isclose(facts.headline["output_tok_s"], result["output_throughput"], rel_tol=1e-6)
    samples = document["samples"]
    assert len(samples) == result["completed"]
    assert sum(s["prompt_tokens"] for s in samples) == result["total_input_tokens"]
    assert sum(s["output_tokens"] for s in samples) == result["total_output_tokens"]
    ends = [s["start_ms"] + s["e2e_ms"] for s in samples]
    assert max(ends) - min(s["start_ms"] for s in samples) <= document["duration_s"] * 1000 + 1e-3
    assert peak_in_flight([s["start_ms"] for s in samples], [s["e2e_ms"] for s in samples]) == concurrency


def _scaled(value: Any, factor: float) -> Any:
    if isinstance(value, list):
        return [_scaled(v, factor) for v in value]
    if isinstance(value, int):
        moved = round(value * factor)
        return moved if moved != value else value + (1 if factor > 1 else -1)
    return value * factor


def _start_times(result: dict[str, Any], factor: float) -> None:
    first = min(result["start_times"])
    result["start_times"] = [first + (s - first) * factor for s in result["start_times"]]


# One field of vLLM's result moved by `factor`; every field vLLM writes that orv reads.
VLLM_FIELDS: dict[str, Callable[[dict[str, Any], float], None]] = {
    key: (lambda k: lambda r, f: r.__setitem__(k, _scaled(r[k], f)))(key)
    for key in (
        "duration",
        "completed",
        "total_input_tokens",
        "total_output_tokens",
        "output_throughput",
        "mean_ttft_ms",
        "mean_tpot_ms",
        "max_concurrency",
        "input_lens",
        "output_lens",
        "ttfts",
        "itls",
        "latencies",
    )
}
VLLM_FIELDS["start_times"] = _start_times
FACTORS = st.one_of(st.floats(1.01, 3.0), st.floats(0.34, 0.99))


@PROPERTY
@given(served(), st.sampled_from(sorted(VLLM_FIELDS)), FACTORS)
def test_moving_any_vllm_field_by_one_percent_is_refused_or_moves_nothing(
    root: Path, run: tuple[list[Request], float, int], field: str, factor: float
) -> None:
    requests, duration, concurrency = run
    honest = vllm_result(requests, duration, concurrency)
    forged = copy.deepcopy(honest)
    VLLM_FIELDS[field](forged, factor)
    path = recipe(root, concurrency)
    is_refused, document = refused(lambda: converted("vllm", forged, path))
    if is_refused:
        return
    assert document is not None
    _, original = refused(lambda: converted("vllm", honest, path))
    assert original is not None
    assert same(shown(document), shown(original)), f"{field} × {factor} moved a figure and was accepted"


def rederived(result: dict[str, Any]) -> dict[str, Any]:
    """The result with every field vLLM derives recomputed from its (forged) per-request arrays: a forger who
    edits the summary to match."""
    requests = [
        Request(p, o, t, (lat - t) / (o - 1), s)
        for p, o, t, lat, s in zip(
            result["input_lens"], result["output_lens"], result["ttfts"], result["latencies"], result["start_times"]
        )
    ]
    again = vllm_result(requests, result["duration"], result["max_concurrency"])
    again.update({k: result[k] for k in ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times")})
    return again


# The edits that flatter a run, with the tool's summary edited to match: each must be refused. (Prompt and
# output lengths raised, or TTFTs lowered, with every copy edited to match leave vLLM's result no redundant
# field: only the compute and bandwidth bounds (ORV512-ORV514) and the workload's lengths (ORV241) hold them.)
FLATTERING: dict[str, tuple[Callable[[dict[str, Any], float], None], Any]] = {
    "duration": (VLLM_FIELDS["duration"], st.floats(0.34, 0.99)),  # a shorter run: more tokens per second
    "latencies": (VLLM_FIELDS["latencies"], st.floats(0.34, 0.99)),  # faster decode
    "start_times": (VLLM_FIELDS["start_times"], st.one_of(st.floats(1.01, 3.0), st.floats(0.34, 0.99))),
    "max_concurrency": (VLLM_FIELDS["max_concurrency"], st.one_of(st.floats(1.01, 3.0), st.floats(0.34, 0.99))),
}


@PROPERTY
@given(served(), st.sampled_from(sorted(FLATTERING)), st.data())
def test_a_flattering_vllm_edit_with_the_summary_edited_to_match_is_refused(
    root: Path, run: tuple[list[Request], float, int], field: str, data: st.DataObject
) -> None:
    requests, duration, concurrency = run
    mutate, factors = FLATTERING[field]
    forged = vllm_result(requests, duration, concurrency)
    mutate(forged, data.draw(factors))
    is_refused, _ = refused(lambda: converted("vllm", rederived(forged), recipe(root, concurrency)))
    assert is_refused


# --------------------------------------------------------------------------- trtllm-bench

TRT_REPORT = json.loads((TOOLS / "trtllm" / "streaming-report.json").read_text())
TRT_REQUESTS = json.loads((TOOLS / "trtllm" / "streaming-requests.json").read_text())
TRT_VERSION = TRT_REPORT["engine"]["version"]


def trtllm_files(requests: list[Request]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The request records and the report trtllm-bench writes for these requests (statistics.py's properties
    from the three perf_counter_ns stamps; the report's figures as its ReportUtility derives them)."""
    records = []
    for i, r in enumerate(requests):
        start = round(r.start_s * 1e9)
        first, end = start + round(r.ttft_s * 1e9), start + round(r.latency_s * 1e9)
        record = copy.deepcopy(TRT_REQUESTS[0])
        record.update(
            id=i,
            num_input_tokens=r.prompt,
            start_timestamp=start,
            first_token_timestamp=first,
            end_timestamp=end,
            decode_iteration=r.output - 1,
            num_total_output_tokens=r.output,
            num_generated_tokens=r.output - 1,
            generation_time=end - first,
            time_to_first_token=first - start,
            intertoken_latency=(end - first) / (r.output - 1),
            end_to_end_latency=end - start,
            output_tokens=r.output,
        )
        records.append(record)
    report = copy.deepcopy(TRT_REPORT)
    for path, value in trtllm.recomputed_report(records, True).items():
        node = report
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return records, report


@PROPERTY
@given(served())
def test_an_honest_trtllm_run_recomputes_every_derived_field(root: Path, run: tuple[list[Request], float, int]) -> None:
    requests, _, concurrency = run
    records, report = trtllm_files(requests)
    path = recipe(root, concurrency, "tensorrt-llm", TRT_VERSION)
    is_refused, document = refused(lambda: converted("trtllm-bench", records, path, report))
    assert not is_refused and document is not None
    facts = inference_facts(document["samples"], document["duration_s"])
    assert math.isclose(
        facts.headline["output_tok_s"], report["performance"]["system_output_throughput_tok_s"], rel_tol=1e-9
    )
    assert len(document["samples"]) == report["request_info"]["num_requests"]


TRT_FIELDS = (
    "num_input_tokens",
    "output_tokens",
    "start_timestamp",
    "first_token_timestamp",
    "end_timestamp",
    "num_total_output_tokens",
    "time_to_first_token",
    "end_to_end_latency",
    "intertoken_latency",
)


@PROPERTY
@given(served(), st.sampled_from(TRT_FIELDS), FACTORS)
def test_moving_any_trtllm_request_field_by_one_percent_is_refused_or_moves_nothing(
    root: Path, run: tuple[list[Request], float, int], field: str, factor: float
) -> None:
    requests, _, concurrency = run
    records, report = trtllm_files(requests)
    forged = copy.deepcopy(records)
    for record in forged:  # every request's field, the report left as it was
        if field.endswith("_timestamp"):  # a stamp moves by 1% of the request's own span
            record[field] += round((record["end_timestamp"] - record["start_timestamp"]) * (factor - 1))
        else:
            record[field] = _scaled(record[field], factor)
    path = recipe(root, concurrency, "tensorrt-llm", TRT_VERSION)
    is_refused, document = refused(lambda: converted("trtllm-bench", forged, path, report))
    if is_refused:
        return
    assert document is not None
    _, original = refused(lambda: converted("trtllm-bench", records, path, report))
    assert original is not None
    assert same(shown(document), shown(original)), f"{field} × {factor} moved a figure and was accepted"
