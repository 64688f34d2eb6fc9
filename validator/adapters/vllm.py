"""vLLM's serving benchmark result JSON (`vllm bench serve --save-result [--save-detailed]`) -> run file.

Formats read (vllm/benchmarks/serve.py; the older benchmarks/benchmark_serving.py):
- top level: `date` ("%Y%m%d-%H%M%S"), `backend`, `model_id`, `max_concurrency`, `request_rate`,
  `duration` (s), `completed`, `output_throughput`, `mean_ttft_ms`, `mean_tpot_ms`, ...
- per request (only with --save-detailed in vLLM >= 0.10; always in benchmark_serving.py):
  `input_lens`, `output_lens`, `ttfts` (s), `itls` (s, list per request), `errors`, and in newer
  versions `latencies` (s) and `start_times` (s, perf_counter).
- `--append-result` files hold one JSON document per line; --record K picks one.
The result names neither vLLM's version nor the GPUs: those come from flags or the recipe.
"""

from __future__ import annotations

from datetime import datetime

from validator.adapters.common import (
    Converted,
    Problems,
    RunMetadata,
    Source,
    pick_record,
)
from validator.adapters.inference import convert_result, find_requests, stated_meta

TOOL = "vllm"
FORMAT = "vllm-bench-serve-json"
SAVE_FLAG = "`vllm bench serve --save-result --save-detailed`"


def _measured_at(date: object) -> str | None:
    if not isinstance(date, str):
        return None
    try:
        return datetime.strptime(date, "%Y%m%d-%H%M%S").strftime("%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None


def convert(source: Source, meta: RunMetadata) -> Converted:
    problems = Problems(source)
    record = pick_record(source, meta, problems)
    notes: list[str] = []
    model_id = record.data.get("model_id")
    meta = stated_meta(
        meta,
        TOOL,
        notes,
        measured_at=_measured_at(record.data.get("date")),
        checkpoint=model_id if isinstance(model_id, str) and model_id else None,
    )
    requests = find_requests(record, (), problems, SAVE_FLAG)
    document = convert_result(TOOL, FORMAT, record, requests, meta, problems, notes, SAVE_FLAG)
    tokenizer = record.data.get("tokenizer_id")
    stated = {"tokenizer_id": tokenizer} if isinstance(tokenizer, str) and tokenizer and tokenizer != model_id else {}
    return Converted(document, tuple(notes), stated)
