"""Which tool wrote a file: a run document, or the output `orv add-run --from` reads (vllm, sglang, megatron, nemo,
aiperf, trtllm-bench, llama-bench).

Told apart by what each tool always writes (the module docstrings of the adapters cite the source):
- a run document: a JSON object with `kind` and `tool` (SPEC §3);
- vLLM `bench serve --save-result`: a JSON object (or JSON lines) with `duration` and vLLM's
  `date` / `model_id` / `tokenizer_id` / `endpoint_type` (SGLang writes none of them);
- SGLang `bench_serving --output-file`: JSON lines with `duration` and `dataset_name` or `details`;
- Megatron-LM: a log line `iteration N/ M | ... elapsed time per iteration (ms): ...`;
- NeMo 2: a log line `Training epoch E, iteration N/M | ... train_step_timing in s: ...`;
- llama-bench `-o json`/`-o jsonl`: an array of (or lines of) objects with `build_commit`, `samples_ns`, `n_prompt`, `n_gen`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from validator.errors import InputFileError
from validator.load.contributor import parse_json

RUN = "run"  # a run document: stored as it is, no --from


@dataclass(frozen=True)
class Detected:
    fmt: str  # RUN or a key of validator.adapters.ADAPTER_BY_NAME
    what: str  # how a person names it, for messages


DESCRIPTION = {
    RUN: "a run document",
    "vllm": "`vllm bench serve --save-result` output",
    "sglang": "`python -m sglang.bench_serving --output-file` output",
    "megatron": "a Megatron-LM training log",
    "nemo": "a NeMo training log",
    "aiperf": "AIPerf's per-request records (profile_export.jsonl)",
    "trtllm-bench": "`trtllm-bench throughput --request_json` output",
    "llama-bench": "`llama-bench -o json` (or -o jsonl) output",
}
# AIPerf: JSON lines, each {metadata: {benchmark_phase, request_start_ns, …}, metrics: {…}}
# (validator/adapters/aiperf.py); trtllm-bench --request_json: a JSON list of request records with
# perf-counter stamps (validator/adapters/trtllm.py).
_TRTLLM_KEYS = ("start_timestamp", "first_token_timestamp", "end_timestamp", "num_input_tokens")
# llama-bench (tools/llama-bench/llama-bench.cpp, test::get_fields): every test object has these
_LLAMA_BENCH_KEYS = ("build_commit", "samples_ns", "n_prompt", "n_gen")
_VLLM_KEYS = ("date", "model_id", "tokenizer_id", "endpoint_type")
_SGLANG_KEYS = ("dataset_name", "details")
_MEGATRON = re.compile(r"\biteration\s+\d+\s*/\s*\d+\s*\|.*elapsed time per iteration")
_NEMO = re.compile(r"Training epoch \d+, iteration \d+/\d+ \|")


def _json_objects(raw: bytes) -> list[dict[str, object]]:
    """The file as one JSON object, or its first JSON lines; the bounded parser, so no input can recurse."""
    try:
        data = parse_json("", raw)
        return [data] if isinstance(data, dict) else []
    except InputFileError:
        pass
    objects = []
    for line in raw.split(b"\n", 1000)[:1000]:  # the first lines only, without splitting the whole file
        if line.strip():
            try:
                value = parse_json("", line)
            except InputFileError:
                return []
            if isinstance(value, dict):
                objects.append(value)
    return objects


def _llama_bench(raw: bytes) -> bool:
    """`-o json` writes an array of test objects, `-o jsonl` one object a line."""
    if re.match(rb"\s*\[", raw):
        try:
            data = parse_json("", raw)
        except InputFileError:
            return False
        objects = data[:1] if isinstance(data, list) else []
    elif re.match(rb"\s*\{", raw):  # the first line alone: a truncated last line is the adapter's to report
        try:
            objects = [parse_json("", raw.lstrip().split(b"\n", 1)[0])]
        except InputFileError:
            return False
    else:
        return False
    return bool(objects) and isinstance(objects[0], dict) and all(k in objects[0] for k in _LLAMA_BENCH_KEYS)


def _detect_list(raw: bytes) -> Detected | None:
    try:
        data = parse_json("", raw)
    except InputFileError:
        return None
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict) and all(k in first for k in _TRTLLM_KEYS):
        return Detected("trtllm-bench", DESCRIPTION["trtllm-bench"])
    return None


def detect(raw: bytes) -> Detected | None:
    """The format of `raw`, or None when it looks like none of them."""
    if _llama_bench(raw):
        return Detected("llama-bench", DESCRIPTION["llama-bench"])
    listed = _detect_list(raw) if re.match(rb"\s*\[", raw) else None  # a log line may start with "[" too
    if listed is not None:
        return listed
    objects = _json_objects(raw) if re.match(rb"\s*\{", raw) else []
    if objects:
        first = objects[0]
        if "kind" in first and "tool" in first:
            return Detected(RUN, DESCRIPTION[RUN])
        metadata = first.get("metadata")
        if isinstance(metadata, dict) and "benchmark_phase" in metadata and "metrics" in first:
            return Detected("aiperf", DESCRIPTION["aiperf"])
        if "duration" in first:
            if any(k in first for k in _VLLM_KEYS):
                return Detected("vllm", DESCRIPTION["vllm"])
            if any(k in first for k in _SGLANG_KEYS):
                return Detected("sglang", DESCRIPTION["sglang"])
        return None
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if _MEGATRON.search(line):
            return Detected("megatron", DESCRIPTION["megatron"])
        if _NEMO.search(line):
            return Detected("nemo", DESCRIPTION["nemo"])
    return None
