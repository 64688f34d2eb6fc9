"""Deterministic synthetic registry for benchmarks: N recipes and N run files with raw samples.

Half training (1,000 optimizer steps per run), half inference (1,000 requests per run). Every
recipe references exactly one run and passes every check, so `orv check` does all of its work.
The same N and seed always give the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import sys
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from validator.hashing import canonical_bytes, is_canonical  # noqa: E402
from validator.science.throughput import inference_facts, training_facts  # noqa: E402

GENERATOR_VERSION = "2"
STEPS = 1000
REQUESTS = 1000
TRAINING_LAYOUTS = [  # (gpus, tp, pp, dp, split) for a 64-layer model
    (8, 1, 4, 2, [16, 17, 17, 14]), (8, 1, 2, 4, [32, 32]), (8, 2, 1, 4, None), (8, 4, 2, 1, [32, 32]),
    (16, 2, 4, 2, [16, 16, 16, 16]), (16, 1, 8, 2, [8] * 8), (32, 4, 4, 2, [16, 16, 16, 16]),
]
GPUS = ["h100", "h200", "b200"]


def _canonical(document: dict) -> bytes:
    raw = orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
    return raw if is_canonical(raw, orjson.loads(raw)) else canonical_bytes(document)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _store_run(root: Path, document: dict) -> str:
    raw = _canonical(document)
    digest = hashlib.sha256(raw).hexdigest()
    _write(root / "runs" / digest[:2] / f"{digest}.json", raw)
    return digest


def training(root: Path, i: int, rng: random.Random) -> None:
    gpus, tp, pp, dp, split = TRAINING_LAYOUTS[i % len(TRAINING_LAYOUTS)]
    gpu = GPUS[(i // len(TRAINING_LAYOUTS)) % len(GPUS)]
    software = {"framework": {"name": "megatron-core", "version": "0.30.0"}}
    layout = {"tp": tp, "pp": pp, "dp": dp, **({"layer_split": split} if split else {})}
    # 128 rows x 8,192 tokens per step at 1,200-2,500 tokens/s/GPU: 25-55% MFU on these GPUs
    base_step = 1_048_576 / (gpus * rng.uniform(1200, 2500))
    samples = []
    for step in range(1, STEPS + 1):
        ref = 2.0 - 0.5 * min(step, 100) / 100  # follows the base catalog's reference curve
        samples.append({"step": step, "time_s": round(base_step * rng.uniform(0.97, 1.03), 4) + 0.00005,
                        "tokens": 1_048_576, "loss": round(ref * rng.uniform(0.995, 1.005), 4) + 0.00005})
    facts = training_facts(samples, gpus, warmup_steps=2)
    headline = round(facts.headline["tokens_per_s_per_gpu"], 1)
    run = {"kind": "training", "tool": {"name": "megatron-lm", "version": "0.30.0"}, "model": "qwen3.8-27b",
           "hardware": {"gpu": gpu, "count": gpus}, "software": software, "workload": "sft-8k-gb128-bf16",
           "layout": layout, "measured_at": "2026-10-18T12:00:00Z", "measured_by": f"bench-{i % 7}",
           "summary": {"tokens_per_s_per_gpu": headline}, "samples": samples}
    digest = _store_run(root, run)
    rid = f"qwen3-8-27b-{gpu}-bench-{i:06d}"
    text = f"""# yaml-language-server: $schema=../../../schema/recipe-training.schema.json
id: {rid}
kind: training
model: qwen3.8-27b
hardware: {{gpu: {gpu}, count: {gpus}}}
author: bench
measured: "2026-10-18"
workload: sft-8k-gb128-bf16
software:
  framework: {{name: megatron-core, version: "0.30.0"}}
layout: {orjson.dumps(layout).decode()}
tuning:
  max_tokens_per_gpu: {1024 + i}
  recompute: {{kind: selective, scope: [attention]}}
claimed: {{tokens_per_s_per_gpu: {headline}}}
runs: ["sha256:{digest}"]
notes: synthetic recipe {i} for benchmarks
"""
    _write(root / "recipes" / "training" / "qwen3.8-27b" / f"{rid}.yaml", text.encode())


def inference(root: Path, i: int, rng: random.Random) -> None:
    count = 1 + i % 4
    software = {"engine": {"name": "vllm", "version": "0.30.0", "commit": f"{i:07x}abcdef"}}
    serving = {"context_len": 32768, "concurrency": 1, "slots": 1 + i % 8}
    samples = []
    for _ in range(REQUESTS):
        prompt, output = rng.randint(200, 2000), rng.randint(64, 512)
        ttft = round(prompt / rng.uniform(1800, 2200) * 1000, 3) + 0.0005
        e2e = round(ttft + (output - 1) * rng.uniform(14, 16), 3) + 0.0005
        samples.append({"prompt_tokens": prompt, "output_tokens": output, "ttft_ms": ttft, "e2e_ms": e2e})
    facts = inference_facts(samples, None)
    claimed = {k: round(facts.headline[k], 2) for k in ("decode_tok_s", "prefill_tok_s", "ttft_ms")}
    run = {"kind": "inference", "tool": {"name": "vllm-bench-serve", "version": "0.30.0"},
           "model": "glm-5.3-flash", "hardware": {"gpu": "rtx-3090", "count": count}, "software": software,
           "quant": "w4a16", "serving": serving, "measured_at": "2026-10-17T12:00:00Z",
           "measured_by": f"bench-{i % 5}", "summary": dict(claimed), "samples": samples}
    digest = _store_run(root, run)
    rid = f"glm-5-3-flash-rtx-3090-x{count}-bench-{i:06d}"
    text = f"""# yaml-language-server: $schema=../../../schema/recipe-inference.schema.json
id: {rid}
kind: inference
model: glm-5.3-flash
hardware: {{gpu: rtx-3090, count: {count}}}
author: bench
measured: "2026-10-17"
software:
  engine: {{name: vllm, version: "0.30.0", commit: "{software['engine']['commit']}"}}
quant: w4a16
serving: {orjson.dumps(serving).decode()}
claimed: {orjson.dumps(claimed).decode()}
runs: ["sha256:{digest}"]
"""
    _write(root / "recipes" / "inference" / "glm-5.3-flash" / f"{rid}.yaml", text.encode())


def generate(root: Path, n: int, seed: int = 20261202) -> Path:
    marker = root / ".generated"
    stamp = f"{GENERATOR_VERSION} {n} {seed}\n"
    if marker.exists() and marker.read_text() == stamp:
        return root
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(REPO / "tests" / "cases" / "_base" / "catalog", root / "catalog")
    for i in range(n):
        rng = random.Random(seed * 1_000_003 + i)
        (training if i % 2 == 0 else inference)(root, i, rng)
    marker.write_text(stamp)
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000, help="recipes (and run files) to generate")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or HERE / "out" / f"registry-{args.n}"
    generate(out, args.n)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
