"""How large honest run files get, for the per-kind budgets of ORV211 (docs/limits.md): `python -m bench.run_sizes`.

Each run file is made the way `orv add-run` makes it, through the real adapters and canonicalisation
(validator/adapters convert(), validator/quality/lmeval.py to_document(), RFC 8785 canonical_bytes), from
realistic tool output written by the real-format fixture writers (tests/fixtures/tools/make_fixtures.py,
tests/fixtures/lmeval/):

- training: a Megatron-LM log of 10,000 iterations;
- inference: one sweep point of 1,000 requests at 1,024 output tokens (`vllm bench serve --save-detailed`);
- quality: a full gsm8k lm-eval run, 1,319 documents under two filters, with responses of realistic
  length (a chain of thought of 4-8 sentences and the final answer, ~700 bytes; gsm8k's own worked
  solutions as targets, ~300 bytes).

For each it prints the canonical bytes, the bytes per item, and what compression at rest would save
(zlib at git's level 6 and at 9, LZMA preset 6: the sizes and the time to compress and to decompress), and with --save
writes bench/run-sizes-results.json.
"""

from __future__ import annotations

import argparse
import glob
import json
import lzma
import math
import random
import tempfile
import time
import zlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.input_sizes import _fixtures, _requests
from validator.adapters import Source, convert, metadata
from validator.hashing import canonical_bytes
from validator.quality import lmeval

REPO = Path(__file__).resolve().parent.parent
HERE = REPO / "bench"
BASE = str(REPO / "tests" / "cases" / "_base")
TRAINING_RECIPE = REPO / "tests/cases/valid-training/recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"
RESULTS = HERE / "run-sizes-results.json"
GSM8K_DOCS = 1319  # the gsm8k test split
ITERATIONS = 10_000
REQUESTS = 1_000


def training_run() -> tuple[bytes, int]:
    fx = _fixtures()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "megatron.log"
        # the fixture's reference curve ends at 400 steps; a long run's loss keeps falling slowly
        loss = lambda step: 1.5 + 0.5 * math.exp(-step / 300) + 0.004 * math.sin(1.7 * step)  # noqa: E731
        fx.megatron_log(
            log,
            1,
            88538.1,
            datetime(2026, 10, 18),
            loss,  # type: ignore[attr-defined]
            iterations=ITERATIONS,
            prefix="[default0]:",
        )
        meta = metadata("megatron", BASE, str(TRAINING_RECIPE), {})
        document = convert("megatron", Source(log.name, log.read_bytes()), meta).document
    return canonical_bytes(document), ITERATIONS


def inference_run() -> tuple[bytes, int]:
    fx = _fixtures()
    result, _ = fx.vllm_result(_requests(fx, REQUESTS, 1024), detailed=True)  # type: ignore[attr-defined]
    meta = metadata(
        "vllm",
        BASE,
        None,
        {
            "model": "qwen3.8-27b",
            "gpu": "h100",
            "gpus": 1,
            "quant": "fp8",
            "measured_by": "bench",
            "tool_version": "0.11.0",
        },
    )
    meta = meta.with_values(
        "flag", software={"engine": {"name": "vllm", "version": "0.11.0"}}, serving={"concurrency": 1}
    )
    document = convert("vllm", Source("result.json", json.dumps(result).encode()), meta).document
    return canonical_bytes(document), REQUESTS


_STEPS = [
    "First, {a} {thing} are split into groups of {b}, which gives {a} / {b} = {c} groups.",
    "Each group costs ${b}, so together they cost {c} * {b} = ${d}.",
    "Next, we add the {a} extra {thing} bought on the second day: {d} + {a} = {e}.",
    "Half of those are given away, leaving {e} / 2 = {f}.",
    "Then {b} more are added back, for a total of {f} + {b} = {g}.",
    "So after the week there are {g} {thing} left in total.",
    "Checking: {g} - {b} = {f}, and {f} * 2 = {e}, which matches.",
    "Therefore the number asked for is {g}.",
]


def _gsm8k_line(rng: random.Random, doc_id: int, template: dict[str, Any], flt: str) -> dict[str, Any]:
    a, b = rng.randint(12, 400), rng.randint(2, 12)
    c = a // b
    d, e = c * b, c * b + a
    f = e // 2
    g = f + b
    values = dict(a=a, b=b, c=c, d=d, e=e, f=f, g=g, thing=rng.choice(["apples", "pencils", "tickets", "books"]))
    steps = rng.randint(4, 8)
    response = " " + " ".join(s.format(**values) for s in _STEPS[:steps]) + f"\n#### {g}"
    target = " ".join(s.format(**values) for s in _STEPS[:4]).replace("$", "") + f"\n#### {g}"
    right = rng.random() < 0.8
    answer = str(g) if right else str(g + 1)
    line = dict(template)
    line.update(
        doc_id=doc_id,
        doc={"question": f"A shop has {a} {values['thing']} ... how many are left?", "answer": target},
        target=target,
        resps=[[response]],
        filtered_resps=[answer],
        filter=flt,
        doc_hash=f"{rng.getrandbits(256):064x}",
        prompt_hash=f"{rng.getrandbits(256):064x}",
        target_hash=f"{rng.getrandbits(256):064x}",
        exact_match=1.0 if right else 0.0,
    )
    return line


def quality_run() -> tuple[bytes, int]:
    reference = REPO / "tests/fixtures/lmeval/reference"
    results_path = Path(glob.glob(str(reference / "results_*.json"))[0])
    samples_path = Path(glob.glob(str(reference / "samples_gsm8k_*.jsonl"))[0])
    template = json.loads(samples_path.read_text().splitlines()[0])
    results = json.loads(results_path.read_text())
    lines = []
    for flt in ("strict-match", "flexible-extract"):
        rng = random.Random(1319)  # the same documents and responses under both filters
        lines += [_gsm8k_line(rng, doc_id, template, flt) for doc_id in range(GSM8K_DOCS)]
    for flt in ("strict-match", "flexible-extract"):
        score = sum(line["exact_match"] for line in lines if line["filter"] == flt) / GSM8K_DOCS
        results["results"]["gsm8k"][f"exact_match,{flt}"] = score
        results["results"]["gsm8k"][f"exact_match_stderr,{flt}"] = (score * (1 - score) / (GSM8K_DOCS - 1)) ** 0.5
    results["results"]["gsm8k"]["sample_len"] = GSM8K_DOCS
    results["n-samples"] = {"gsm8k": {"original": GSM8K_DOCS, "effective": GSM8K_DOCS}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / results_path.name).write_text(json.dumps(results))
        (folder / samples_path.name).write_text("".join(json.dumps(line) + "\n" for line in lines))
        output = lmeval.read_output(str(folder))
        document = lmeval.to_document(output, {"model": "qwen3.8-27b", "quant": "bf16", "measured_by": "bench"})
    return canonical_bytes(document), GSM8K_DOCS


def _timed(fn: Callable[[], bytes]) -> tuple[bytes, float]:
    started = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - started


def compression(raw: bytes) -> dict[str, Any]:
    out = {}
    for name, pack, unpack in (
        ("zlib-6 (git's own: every object and pack)", lambda: zlib.compress(raw, 6), zlib.decompress),
        ("zlib-9", lambda: zlib.compress(raw, 9), zlib.decompress),
        ("lzma-6", lambda: lzma.compress(raw, preset=6), lzma.decompress),
    ):
        packed, seconds = _timed(pack)
        _, back = _timed(lambda: unpack(packed))
        out[name] = {
            "bytes": len(packed),
            "ratio": round(len(raw) / len(packed), 2),
            "compress_s": round(seconds, 3),
            "decompress_s": round(back, 3),
        }
    return out


KINDS = {
    "training": (training_run, "iterations"),
    "inference": (inference_run, "requests"),
    "quality": (quality_run, "documents"),
}


def measure() -> dict[str, Any]:
    out = {}
    for kind, (make, unit) in KINDS.items():
        raw, items = make()
        out[kind] = {
            "bytes": len(raw),
            unit: items,
            f"bytes_per_{unit[:-1]}": round(len(raw) / items, 1),
            "compressed": compression(raw),
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--save", action="store_true", help=f"write {RESULTS.name}")
    args = parser.parse_args()
    sizes = measure()
    print(json.dumps(sizes, indent=2))
    if args.save:
        RESULTS.write_text(json.dumps({"command": "python -m bench.run_sizes --save", "sizes": sizes}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
