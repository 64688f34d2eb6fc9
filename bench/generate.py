"""Deterministic synthetic registry for benchmarks, shaped like main: N recipes, about N run files.

Half training, half inference; every 25th recipe an inference recipe swept over five concurrencies
(one run per point). Each other recipe has 0-3 runs (30% none, 50% one, 10% two, 10% three:
about one run file per recipe) from several measurers, each run 64-3,000 raw samples; about 5% of
run files carry non-ASCII notes. Every recipe passes every check, so `orv check` does all of its
work. The registry is a git repository whose last commit adds the boards (`orv boards`: boards/index.json,
boards/models/, boards/keys.json), as on main. The same N and seed always give the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.testing.factories import inference_recipe, inference_run, write_recipe  # noqa: E402
from tests.testing.sweeps import independent_point, samples_at  # noqa: E402
from validator.hashing import canonical_bytes, is_canonical  # noqa: E402
from validator.science.throughput import inference_facts, training_facts  # noqa: E402

# bench registries put every recipe on the test catalog's few models (at 100,000 run files the largest
# model's file is 142 MB), so `orv boards` may write files past the 25 MB a GitHub-hosted registry allows
# (docs/boards.md, "File sizes"); these registries are measured, never pushed
BOARDS_LIMIT = ("--max-file-mb", "1000")
GENERATOR_VERSION = "6"  # 4: keys.json committed; 5: boards stored split; 6: sweeps, step times to the µs
SWEEP_EVERY = 25  # every 25th recipe is an inference recipe swept over concurrency, one run per point
RUNS_PER_RECIPE = ([0] * 3) + ([1] * 5) + [2, 3]  # drawn uniformly: 30% / 50% / 10% / 10%, mean 1.0
SAMPLES = (64, 3000)
NON_ASCII_NOTES = [
    "mesuré à 25 °C, ventilateurs à 100 %",
    "測定: 電力制限 350 W",
    "Durchsatz über 3 Läufe — stabil",
    "замер после прогрева",
    "température ambiante ≈ 22 °C 😀",
]
TRAINING_LAYOUTS = [  # (gpus, tp, pp, dp, split) for a 64-layer model
    (8, 1, 4, 2, [16, 17, 17, 14]),
    (8, 1, 2, 4, [32, 32]),
    (8, 2, 1, 4, None),
    (8, 4, 2, 1, [32, 32]),
    (16, 2, 4, 2, [16, 16, 16, 16]),
    (16, 1, 8, 2, [8] * 8),
    (32, 4, 4, 2, [16, 16, 16, 16]),
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


def _notes(rng: random.Random) -> dict:
    return {"notes": rng.choice(NON_ASCII_NOTES)} if rng.random() < 0.05 else {}


def training(
    root: Path,
    i: int,
    rng: random.Random,
    runs: int = 1,
    sample_range: tuple[int, int] = SAMPLES,
    model: str = "qwen3.8-27b",
) -> None:
    gpus, tp, pp, dp, split = TRAINING_LAYOUTS[i % len(TRAINING_LAYOUTS)]
    gpu = GPUS[(i // len(TRAINING_LAYOUTS)) % len(GPUS)]
    software = {"framework": {"name": "megatron-core", "version": "0.30.0"}}
    layout = {"tp": tp, "pp": pp, "dp": dp, **({"layer_split": split} if split else {})}
    # 128 rows x 8,192 tokens per step at 1,200-2,500 tokens/s/GPU: 25-55% MFU on these GPUs
    rate = rng.uniform(1200, 2500)
    digests, headline = [], round(rate, 1)
    for j in range(runs):
        base_step = 1_048_576 / (gpus * rate * rng.uniform(0.999, 1.001))
        samples = []
        for step in range(1, rng.randint(*sample_range) + 1):
            ref = 2.0 - 0.5 * min(step, 100) / 100  # follows the base catalog's reference curve
            samples.append(
                {
                    "step": step,
                    "time_s": round(base_step * rng.uniform(0.97, 1.03), 6)
                    + 0.0000005,  # µs: runs never share rows by chance (ORV304)
                    "tokens": 1_048_576,
                    "loss": round(ref * rng.uniform(0.995, 1.005), 4) + 0.00005,
                }
            )
        facts = training_facts(samples, gpus, warmup_steps=2)
        figure = round(facts.headline["tokens_per_s_per_gpu"], 1)
        headline = figure if j == 0 else headline  # the recipe claims its first run's figure
        run = {
            "kind": "training",
            "tool": {"name": "megatron-lm", "version": "0.30.0"},
            "model": model,
            "hardware": {"gpu": gpu, "count": gpus},
            "software": software,
            "workload": "sft-8k-gb128-bf16",
            "layout": layout,
            "measured_at": f"2026-10-{18 - j}T12:00:00Z",
            "measured_by": f"bench-{(i + j) % 7}",
            "summary": {"tokens_per_s_per_gpu": figure},
            "samples": samples,
            **_notes(rng),
        }
        digests.append(_store_run(root, run))
    rid = f"{model.replace('.', '-')}-{gpu}-bench-{i:06d}"
    text = f"""# yaml-language-server: $schema=../../../schema/recipe-training.schema.json
id: {rid}
kind: training
model: {model}
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
runs: {orjson.dumps([f"sha256:{d}" for d in digests]).decode()}
notes: synthetic recipe {i} for benchmarks
"""
    _write(root / "recipes" / "training" / model / f"{rid}.yaml", text.encode())


def inference(
    root: Path,
    i: int,
    rng: random.Random,
    runs: int = 1,
    sample_range: tuple[int, int] = SAMPLES,
    model: str = "glm-5.3-flash",
) -> None:
    count = 1 + i % 4
    software = {"engine": {"name": "vllm", "version": "0.30.0", "commit": f"{i:07x}abcdef"}}
    serving = {"context_len": 32768, "concurrency": 1, "slots": 1 + i % 8}
    prefill, step_ms = rng.uniform(1800, 2200), rng.uniform(14, 16)
    digests: list[str] = []
    claimed = {
        "decode_tok_s": round(1000 / step_ms, 2),
        "prefill_tok_s": round(prefill, 2),
        "ttft_ms": round(1100 / prefill * 1000, 2),
    }
    for j in range(runs):
        samples = []
        for _ in range(rng.randint(*sample_range)):
            # narrow prompt lengths: the median TTFT of 64 requests stays within 1% of the claim
            prompt, output = rng.randint(1080, 1120), rng.randint(64, 512)
            ttft = round(prompt / (prefill * rng.uniform(0.99, 1.01)) * 1000, 3) + 0.0005
            e2e = round(ttft + (output - 1) * step_ms * rng.uniform(0.97, 1.03), 3) + 0.0005
            samples.append({"prompt_tokens": prompt, "output_tokens": output, "ttft_ms": ttft, "e2e_ms": e2e})
        facts = inference_facts(samples, None)
        figures = {k: round(facts.headline[k], 2) for k in ("decode_tok_s", "prefill_tok_s", "ttft_ms")}
        claimed = figures if j == 0 else claimed  # the recipe claims its first run's figures
        run = {
            "kind": "inference",
            "tool": {"name": "vllm-bench-serve", "version": "0.30.0"},
            "model": model,
            "hardware": {"gpu": "rtx-3090", "count": count},
            "software": software,
            "quant": "w4a16",
            "serving": serving,
            "measured_at": f"2026-10-{17 - j}T12:00:00Z",
            "measured_by": f"bench-{(i + j) % 5}",
            "summary": dict(figures),
            "samples": samples,
            **_notes(rng),
        }
        digests.append(_store_run(root, run))
    rid = f"{model.replace('.', '-')}-rtx-3090-x{count}-bench-{i:06d}"
    text = f"""# yaml-language-server: $schema=../../../schema/recipe-inference.schema.json
id: {rid}
kind: inference
model: {model}
hardware: {{gpu: rtx-3090, count: {count}}}
author: bench
measured: "2026-10-17"
software:
  engine: {{name: vllm, version: "0.30.0", commit: "{software["engine"]["commit"]}"}}
quant: w4a16
workload: bench-1120-512
serving: {orjson.dumps(serving).decode()}
claimed: {orjson.dumps(claimed).decode()}
runs: {orjson.dumps([f"sha256:{d}" for d in digests]).decode()}
"""
    _write(root / "recipes" / "inference" / model / f"{rid}.yaml", text.encode())


def swept(root: Path, i: int, rng: random.Random, concurrencies: tuple[int, ...] = (1, 2, 4, 8, 16)) -> None:
    """An inference recipe swept over `concurrencies` (its `sweep:` claims), one run per point whose
    figures are recomputed from its samples (tests/testing/sweeps.py's requests on the test workload
    fixed-1024-256): what the sweeps' checks (ORV243, ORV511, the per-point claims) read."""
    base_decode, slowdown = round(rng.uniform(40, 80), 3), round(rng.uniform(0.005, 0.08), 4)
    software = {"engine": {"name": "vllm", "version": "0.30.0", "commit": f"{i:07x}abcdef"}}
    recipe = inference_recipe(
        f"glm-5-3-flash-rtx-3090-x2-sweep-{i:06d}",
        prefill=None,
        ttft=None,
        software=software,
        serving={"context_len": 8192, "concurrency": 1},
        workload="fixed-1024-256",
        author="bench",
    )
    recipe["sweep"] = {"concurrency": list(concurrencies), "claimed": []}
    runs = []
    for c in concurrencies:
        samples, duration = samples_at(base_decode, slowdown, c)
        decode, _ = independent_point(samples, duration, recipe["hardware"]["count"])
        if c == concurrencies[0]:
            recipe["claimed"] = {"decode_tok_s": round(decode, 2)}
        else:
            recipe["sweep"]["claimed"].append({"concurrency": c, "decode_tok_s": round(decode, 2)})
        run = inference_run(
            recipe,
            decode,
            samples=False,
            duration_s=duration,
            serving={"context_len": 8192, "concurrency": c},
            measured_by=f"bench-{i % 5}",
        )
        run["samples"] = samples
        runs.append(f"sha256:{_store_run(root, run)}")  # written as every generated run (no scratch folder)
    recipe["runs"] = runs
    write_recipe(root, recipe)


GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]
# Fixed commit dates: the boards stamp (committer time of the data commit) is part of the bytes.
GIT_ENV = {
    "GIT_AUTHOR_DATE": "2026-10-19T12:00:00Z",
    "GIT_COMMITTER_DATE": "2026-10-19T12:00:00Z",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=root, check=True, env={**os.environ, **GIT_ENV})


def commit_with_boards(root: Path) -> None:
    """Commit the data, then boards/ generated from it (two commits, as the workflow on main)."""
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "data")
    refresh_boards(root)


def refresh_boards(root: Path) -> None:
    """Regenerate boards/ with the orv being measured and commit them if they changed, as main's
    boards workflow does after a merge: boards/keys.json is stamped with orv's code, and a gate
    never trusts keys made by another orv (validator/boards/keyfile.py)."""
    subprocess.run(
        [sys.executable, "-m", "validator", "boards", "--root", str(root), "--no-cache", *BOARDS_LIMIT],
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if subprocess.run(
        [*GIT, "status", "--porcelain", "--", "boards"], cwd=root, check=True, capture_output=True
    ).stdout:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "boards")


def build_once(root: Path, stamp: str, write_data: Callable[[Path], None]) -> bool:
    """Make `root` a registry on the test catalog whose data `write_data` writes, committed with its
    boards, unless the same stamp built it already. Returns whether it was built now."""
    marker = root / ".generated"
    if marker.exists() and marker.read_text() == stamp:
        return False
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(REPO / "tests" / "cases" / "_base" / "catalog", root / "catalog")
    write_data(root)
    (root / ".gitignore").write_text(".generated\n")
    commit_with_boards(root)
    marker.write_text(stamp)
    return True


def generate(root: Path, n: int, seed: int = 20261202) -> Path:
    def write_data(root: Path) -> None:
        for i in range(n):
            rng = random.Random(seed * 1_000_003 + i)
            if i % SWEEP_EVERY == SWEEP_EVERY - 1:
                swept(root, i, rng)
            else:
                (training if i % 2 == 0 else inference)(root, i, rng, rng.choice(RUNS_PER_RECIPE))

    if not build_once(root, f"{GENERATOR_VERSION} {n} {seed}\n", write_data):
        refresh_boards(root)  # the same data; the orv measured may be another
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
