"""SGLang's serving benchmark output (`python -m sglang.bench_serving --output-file F [--output-details]`) -> run file.

Format read (python/sglang/bench_serving.py; python/sglang/benchmark/metrics.py): a JSON-lines
file, one line appended per benchmark run, each with `backend`, `dataset_name`, `request_rate`,
`max_concurrency`, `duration` (s), `completed`, `output_throughput`, `mean_ttft_ms`,
`mean_tpot_ms`, `mean_e2e_latency_ms`, ... With --output-details the per-request arrays
`input_lens`, `output_lens`, `ttfts` (s), `itls` (s), `generated_texts`, `errors` are added at the
top level (older versions) or under `details` (newer). SGLang saves no per-request end-to-end
latency, so e2e_ms is rebuilt as TTFT + sum(ITL) (docs/metrics.md), and the two means that read the
latencies it did measure are held by what it wrote twice: `mean_itl_ms` is the mean of every `itls` entry
(exact), and `mean_tpot_ms` exceeds the rebuilt mean TPOT only by the streams' tails after their last
token, whose total `mean_e2e_latency_ms` gives (ORV109). The file names neither the
model's catalog id, the GPUs, SGLang's version nor a date: those come from flags or the recipe.
"""

from __future__ import annotations

import math
from typing import Any

from validator.adapters.common import (
    Converted,
    JsonRecord,
    Problems,
    RunMetadata,
    Source,
    pick_record,
)
from validator.adapters.inference import EXACT, Requests, convert_result, find_requests, stated_meta

TOOL = "sglang"
FORMAT = "sglang-bench-serving-jsonl"
SAVE_FLAG = "`python -m sglang.bench_serving --output-file F --output-details`"


def convert(source: Source, meta: RunMetadata) -> Converted:
    problems = Problems(source)
    record = pick_record(source, meta, problems)
    notes: list[str] = []
    # The served model, when this SGLang version saves it (`model_id`, `model`, or the server's
    # `server_info.model_path`): it becomes the run's checkpoint, checked against the catalog (ORV226).
    server = record.data.get("server_info")
    served = next(
        (
            v
            for v in (
                record.data.get("model_id"),
                record.data.get("model"),
                server.get("model_path") if isinstance(server, dict) else None,
            )
            if isinstance(v, str) and v
        ),
        None,
    )
    meta = stated_meta(meta, TOOL, notes, checkpoint=served)
    where = ("details",) if isinstance(record.data.get("details"), dict) else ()
    requests = find_requests(record, where, problems, SAVE_FLAG)
    document = convert_result(TOOL, FORMAT, record, requests, meta, problems, notes, SAVE_FLAG)
    if requests is not None:
        check_latency_means(record, requests, problems)
        problems.raise_if_any()
    return Converted(document, tuple(notes))


def _completed(requests: Requests) -> list[int]:
    """The requests SGLang's calculate_metrics counts: no error and some output (build_samples keeps the same)."""
    a = requests.arrays
    errors = a.get("errors") or [""] * len(a["ttfts"])
    return [i for i, error in enumerate(errors) if not error and a["output_lens"][i]]


def check_latency_means(record: JsonRecord, requests: Requests, problems: Problems) -> None:
    """SGLang's means of the latencies it measured but did not save, against the per-request arrays it did:
    `mean_itl_ms` = mean of every ITL; the measured e2e ≥ TTFT + Σ ITL (the stream ends after its last token),
    so `mean_e2e_latency_ms` ≥ the rebuilt mean e2e and `mean_tpot_ms` lies between the rebuilt mean TPOT and
    that plus the tails' total spread over the fewest gaps of a request. Without these fields the rebuilt
    TPOT is held to 2% (inference.RECONSTRUCTED_E2E)."""
    a, done = requests.arrays, _completed(requests)
    if not done:
        return
    itls = [x for i in done for x in a["itls"][i]]
    rebuilt = [a["ttfts"][i] + math.fsum(a["itls"][i]) for i in done]
    many = [i for i in done if a["output_lens"][i] > 1]
    data: dict[str, Any] = record.data

    def refuse(key: str, why: str) -> None:
        problems.add(
            "ORV109",
            f"the file's own `{key}` is {data[key]!r} but {why}",
            "the file was edited, truncated or mixes two runs; give the file the benchmark wrote",
            *record.locate((key,)),
        )

    if _number(data.get("mean_itl_ms")) and itls:
        recomputed = math.fsum(itls) / len(itls) * 1000.0
        if not math.isclose(data["mean_itl_ms"], recomputed, rel_tol=EXACT, abs_tol=1e-9):
            refuse("mean_itl_ms", f"the mean of its per-request `itls` is {recomputed!r} ms")
    tail_ms = None  # Σ over requests of (measured e2e − TTFT − Σ ITL), from SGLang's mean e2e
    if _number(data.get("mean_e2e_latency_ms")):
        floor = math.fsum(rebuilt) / len(rebuilt) * 1000.0
        if data["mean_e2e_latency_ms"] < floor * (1 - EXACT):
            refuse("mean_e2e_latency_ms", f"its requests' TTFT + Σ ITL average {floor!r} ms: they end after that")
        else:
            tail_ms = max(0.0, data["mean_e2e_latency_ms"] - floor) * len(done)
    if _number(data.get("mean_tpot_ms")) and many and tail_ms is not None:
        tpot = math.fsum(math.fsum(a["itls"][i]) / (a["output_lens"][i] - 1) for i in many) / len(many) * 1000.0
        ceiling = tpot + tail_ms / (len(many) * min(a["output_lens"][i] - 1 for i in many))
        if not tpot * (1 - EXACT) <= data["mean_tpot_ms"] <= ceiling * (1 + EXACT):
            refuse(
                "mean_tpot_ms",
                f"its per-request `itls` give {tpot!r} ms and the streams' tails after their last token "
                f"(from `mean_e2e_latency_ms`) at most {ceiling!r} ms",
            )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
