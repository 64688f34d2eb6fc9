"""A fake OpenAI-compatible streaming server, and SGLang's `bench_serving` client rebuilt from its source.

SGLang's own client does not run here: `python -m sglang.bench_serving` imports `sglang.srt`, which
imports torch (sglang 0.5.23: sglang/benchmark/serving.py -> sglang/srt/disaggregation/utils.py),
too heavy for a CPU test machine. So `bench_serving` below does, from that version's source, what the
tool does with the flags `orv reproduce` prints, against a real local HTTP server:

- lengths: sglang/benchmark/datasets/common.py `compute_random_lens` — uniform integers in
  [max(int(L·r), 1), L], inputs and outputs alike; `random-ids` prompts are token ids
  (sglang/benchmark/datasets/random.py `sample_random_requests`, the non-ShareGPT branch);
- one request: sglang/benchmark/serving.py `async_request_openai_completions` (the `sglang-oai`
  backend, path `/v1/completions` in `_BACKEND_API_PATHS`): POST {model, prompt, best_of: 1,
  max_tokens, stream: true, temperature: 0.0, ignore_eos: not --disable-ignore-eos}; TTFT at the
  first chunk with text, one ITL per later chunk with text, the output length from
  `usage.completion_tokens`, the prompt length from `usage.prompt_tokens` (`_record_server_prompt_len`);
- `--warmup-requests` first (not saved), then every prompt at once (`--request-rate inf`) with at
  most `--max-concurrency` in flight;
- the saved line (`--output-file F --output-details`): serving.py's `result` (the arguments and the
  summary: duration, completed, means in ms, throughputs) merged with `result_details`
  (`input_lens`, `output_lens`, `ttfts` and `itls` in seconds, `generated_texts`, `errors`),
  appended to F as one JSON line, `request_rate` written by json.dumps (inf -> Infinity).

The server streams one deterministic token per `token_ms` and counts the prompt's token ids itself.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import statistics
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Completions(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the stream ends when the connection closes: no chunked framing needed
    token_s = 0.001
    eos_at = 40  # where a request that does not ignore EOS stops

    def log_message(self, format: str, *args: Any) -> None:  # quiet in tests
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/completions" or not isinstance(body.get("prompt"), list):
            self.send_error(404 if self.path != "/v1/completions" else 400)
            return
        prompt_tokens = len(body["prompt"])
        wanted = int(body["max_tokens"])
        count = wanted if body.get("ignore_eos") else min(wanted, self.eos_at)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(self.token_s * 2)  # prefill
        for i in range(count):
            chunk = {"choices": [{"index": 0, "text": f" t{i}", "finish_reason": None}], "usage": None}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()
            if i + 1 < count:
                time.sleep(self.token_s)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": count, "total_tokens": prompt_tokens + count}
        last = {"choices": [{"index": 0, "text": "", "finish_reason": "length"}], "usage": usage}
        self.wfile.write(b"data: " + json.dumps(last).encode() + b"\n\ndata: [DONE]\n\n")


@contextmanager
def fake_server(token_ms: float = 1.0) -> Iterator[str]:
    """An OpenAI-compatible completions server on 127.0.0.1; yields its base URL."""
    handler = type("Handler", (_Completions,), {"token_s": token_ms / 1000})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _parser() -> argparse.ArgumentParser:
    """The bench_serving flags orv reproduce prints, named and typed as serving.py's parser has them."""
    p = argparse.ArgumentParser(prog="sglang.bench_serving", allow_abbrev=False, exit_on_error=False)
    p.add_argument("--backend", choices=["sglang-oai"], required=True)
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--dataset-name", choices=["random-ids"], required=True)
    p.add_argument("--random-input-len", type=int, required=True)
    p.add_argument("--random-output-len", type=int, required=True)
    p.add_argument("--random-range-ratio", type=float, default=0.0)
    p.add_argument("--num-prompts", type=int, required=True)
    p.add_argument("--max-concurrency", type=int, default=None)
    p.add_argument("--request-rate", type=float, default=float("inf"))
    p.add_argument("--warmup-requests", type=int, default=1)
    p.add_argument("--disable-ignore-eos", action="store_true")
    p.add_argument("--output-file", required=True)
    p.add_argument("--output-details", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    return p


def _lens(full: int, ratio: float, num: int, rng: random.Random) -> list[int]:
    """compute_random_lens: uniform in [max(int(full·ratio), 1), full]."""
    return [rng.randint(max(int(full * ratio), 1), full) for _ in range(num)]


def _request(url: str, model: str, prompt: list[int], max_tokens: int, ignore_eos: bool) -> dict[str, Any]:
    payload = {
        "model": model,
        "prompt": prompt,
        "best_of": 1,
        "max_tokens": max_tokens,
        "stream": True,
        "temperature": 0.0,
        "ignore_eos": ignore_eos,
    }
    request = urllib.request.Request(
        url + "/v1/completions", json.dumps(payload).encode(), {"Content-Type": "application/json"}
    )
    out: dict[str, Any] = {"prompt_len": len(prompt), "output_len": max_tokens, "ttft": 0.0, "itl": [], "text": ""}
    start = recent = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as response:
        for raw in response:
            line = raw.strip().decode()
            if not line:
                continue
            chunk = line.removeprefix("data: ")
            if chunk == "[DONE]":
                continue
            data = json.loads(chunk)
            usage = data.get("usage") or {}
            out["prompt_len"] = usage.get("prompt_tokens", out["prompt_len"])
            if data["choices"][0]["text"]:
                now = time.perf_counter()
                if out["ttft"] == 0.0:
                    out["ttft"] = now - start
                else:
                    out["itl"].append(now - recent)
                recent = now
                out["text"] += data["choices"][0]["text"]
            out["output_len"] = usage.get("completion_tokens", out["output_len"])
    out["latency"] = time.perf_counter() - start
    return out


def bench_serving(command: str, base_url: str) -> str:
    """Run the `python -m sglang.bench_serving …` line `command` against `base_url`; the output file's path."""
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "sglang.bench_serving"], command
    args = _parser().parse_args(argv[3:] + ["--base-url", base_url])
    rng = random.Random(args.seed)
    inputs = _lens(args.random_input_len, args.random_range_ratio, args.num_prompts, rng)
    outputs = _lens(args.random_output_len, args.random_range_ratio, args.num_prompts, rng)
    prompts = [[(rng.randrange(50000) + i + j) % 50000 for j in range(n)] for i, n in enumerate(inputs)]
    ignore_eos = not args.disable_ignore_eos
    workers = args.max_concurrency or args.num_prompts
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(
            pool.map(
                lambda i: _request(base_url, args.model, prompts[i], outputs[i], ignore_eos),
                range(min(args.warmup_requests, args.num_prompts)),
            )
        )
        started = time.perf_counter()
        done = list(
            pool.map(
                lambda i: _request(base_url, args.model, prompts[i], outputs[i], ignore_eos), range(args.num_prompts)
            )
        )
        duration = time.perf_counter() - started
    ttfts = [d["ttft"] for d in done]
    itls = [x for d in done for x in d["itl"]]
    tpots = [(d["latency"] - d["ttft"]) / (d["output_len"] - 1) for d in done if d["output_len"] > 1]
    total_in, total_out = sum(d["prompt_len"] for d in done), sum(d["output_len"] for d in done)
    result = {
        "tag": None,
        "backend": args.backend,
        "dataset_name": args.dataset_name,
        "request_rate": args.request_rate,
        "max_concurrency": args.max_concurrency,
        "sharegpt_output_len": None,
        "random_input_len": args.random_input_len,
        "random_output_len": args.random_output_len,
        "random_range_ratio": args.random_range_ratio,
        "server_info": None,
        "duration": duration,
        "completed": len(done),
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
        "request_throughput": len(done) / duration,
        "input_throughput": total_in / duration,
        "output_throughput": total_out / duration,
        "total_throughput": (total_in + total_out) / duration,
        "mean_e2e_latency_ms": statistics.mean(d["latency"] for d in done) * 1000,
        "mean_ttft_ms": statistics.mean(ttfts) * 1000,
        "median_ttft_ms": statistics.median(ttfts) * 1000,
        "mean_tpot_ms": statistics.mean(tpots) * 1000 if tpots else 0.0,
        "mean_itl_ms": statistics.mean(itls) * 1000 if itls else 0.0,
    }
    details = {
        "input_lens": [d["prompt_len"] for d in done],
        "output_lens": [d["output_len"] for d in done],
        "ttfts": ttfts,
        "itls": [d["itl"] for d in done],
        "generated_texts": [d["text"] for d in done],
        "errors": ["" for _ in done],
    }
    with open(args.output_file, "a") as file:
        file.write(json.dumps(result | details if args.output_details else result) + "\n")
    return args.output_file
