"""SGLang's serving benchmark output (`python -m sglang.bench_serving --output-file F [--output-details]`) -> run file.

Format read (python/sglang/bench_serving.py; python/sglang/benchmark/metrics.py): a JSON-lines
file, one line appended per benchmark run, each with `backend`, `dataset_name`, `request_rate`,
`max_concurrency`, `duration` (s), `completed`, `output_throughput`, `mean_ttft_ms`,
`mean_tpot_ms`, `mean_e2e_latency_ms`, ... With --output-details the per-request arrays
`input_lens`, `output_lens`, `ttfts` (s), `itls` (s), `generated_texts`, `errors` are added at the
top level (older versions) or under `details` (newer). SGLang saves no per-request end-to-end
latency, so e2e_ms is rebuilt as TTFT + sum(ITL) (docs/metrics.md). The file names neither the
model's catalog id, the GPUs, SGLang's version nor a date: those come from flags or the recipe.
"""

from __future__ import annotations

from validator.adapters.common import (
    Converted,
    Problems,
    RunMetadata,
    Source,
    pick_record,
)
from validator.adapters.inference import convert_result, find_requests, stated_meta

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
    return Converted(document, tuple(notes))
