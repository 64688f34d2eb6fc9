"""Benchmark of the inference frontier (issue 31): does `orv boards` grow linearly with the points?

Two measurements, each at a small and a large size measured side by side in one run:
- `--part frontier` (default): the frontier section alone (validator.boards.frontier.frontiers) on
  10,000 and 70,000 board points in groups of one model × GPU × workload, best of `--repeat`; CPU
  time in-process, so the growth exponent is the algorithm's, not the host's noise.
- `--part boards`: `orv boards --no-cache` (CPU seconds of the process and its loader pool, the
  sizes interleaved in each round; wall seconds beside them) on generated registries of swept recipes (7 points each,
  one run per point: 1,430 and 10,000 recipes = 10,010 and 70,000 run files). Slow (the larger
  registry is ~70,000 files): run it on a quiet host.
Printed: seconds per size and the growth exponent log(t_large / t_small) / log(n_large / n_small);
1.0 is linear, 2.0 pairwise. Results go to bench/frontier-results.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from bench.generate import BOARDS_LIMIT, _store_run, _write, build_once  # noqa: E402
from validator.boards.frontier import frontiers  # noqa: E402
from validator.registry.snapshot import Catalog  # noqa: E402
from validator.science.throughput import inference_facts  # noqa: E402

POINTS = (10_000, 70_000)
SWEEP = (1, 2, 4, 8, 16, 32, 64)
PER_GROUP = 70  # points per model × GPU × workload: 10 swept recipes of 7 points


def synthetic_rows(n: int, seed: int = 31) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        group = i // PER_GROUP
        concurrency = SWEEP[i % len(SWEEP)]
        decode = rng.uniform(20, 90) / (1 + 0.03 * concurrency)
        rows.append(
            {
                "recipe": f"r{i // len(SWEEP):06d}",
                "run_sha": f"{i:064x}",
                "tier": rng.choice(("T1", "T2", "T2")),
                "model": f"m{group % 97}",
                "gpu": f"g{group // 97}",
                "gpus": 2,
                "concurrency": concurrency,
                "decode_tok_s": round(decode, 2),
                "output_tok_s": round(decode * concurrency * 0.9, 2),
                "ttft_ms": 100.0,
                "quality": None,
                "workload": "w",
            }
        )
    return rows


def time_frontier(n: int, repeat: int) -> float:
    rows = synthetic_rows(n)
    catalog = Catalog(hardware={})
    best = math.inf
    for _ in range(repeat):
        start = time.process_time()
        frontiers(rows, catalog)
        best = min(best, time.process_time() - start)
    return best


def swept_registry(root: Path, recipes: int, seed: int = 2026_12_04) -> Path:
    """`recipes` swept inference recipes of one model on one GPU, one run of 64 requests per point."""

    def write_data(root: Path) -> None:
        for i in range(recipes):
            swept_recipe(root, i, random.Random(seed * 1_000_003 + i))

    build_once(root, f"sweep {recipes} {seed}\n", write_data)
    return root


def swept_recipe(root: Path, i: int, rng: random.Random) -> None:
    software = {"engine": {"name": "vllm", "version": "0.30.0", "commit": f"{i:07x}abcdef"}}
    base = rng.uniform(40, 80)
    digests, claims, headline = [], [], None
    for c in SWEEP:
        step_ms = 1000 / (base / (1 + 0.03 * c))
        samples = []
        for _ in range(64):
            output = rng.randint(64, 256)
            ttft = round(rng.uniform(50, 60) + c, 3) + 0.0005
            e2e = round(ttft + (output - 1) * step_ms * rng.uniform(0.98, 1.02), 3) + 0.0005
            samples.append({"prompt_tokens": 1000, "output_tokens": output, "ttft_ms": ttft, "e2e_ms": e2e})
        duration = -(-64 // c) * max(s["e2e_ms"] for s in samples) / 1000
        decode = round(inference_facts(samples, duration).headline["decode_tok_s"], 2)
        run = {
            "kind": "inference",
            "tool": {"name": "vllm-bench-serve", "version": "0.30.0"},
            "model": "glm-5.3-flash",
            "hardware": {"gpu": "rtx-3090", "count": 2},
            "software": software,
            "quant": "w4a16",
            "serving": {"context_len": 8192, "concurrency": c},
            "measured_at": "2026-10-17T12:00:00Z",
            "measured_by": "bench",
            "duration_s": duration,
            "summary": {"decode_tok_s": decode},
            "samples": samples,
        }
        digests.append(_store_run(root, run))
        if c == 1:
            headline = decode
        else:
            claims.append({"concurrency": c, "decode_tok_s": decode})
    rid = f"glm-5-3-flash-rtx-3090-x2-sweep-{i:06d}"
    text = (
        f"id: {rid}\nkind: inference\nmodel: glm-5.3-flash\nhardware: {{gpu: rtx-3090, count: 2}}\n"
        f'author: bench\nmeasured: "2026-10-17"\nsoftware:\n  engine: {json.dumps(software["engine"])}\n'
        f"quant: w4a16\nworkload: bench-1120-512\nserving: {{context_len: 8192, concurrency: 1}}\n"
        f"claimed: {{decode_tok_s: {headline}}}\n"
        f"sweep: {json.dumps({'concurrency': list(SWEEP), 'claimed': claims})}\n"
        f"runs: {json.dumps([f'sha256:{d}' for d in digests])}\n"
    )
    _write(root / "recipes" / "inference" / "glm-5.3-flash" / f"{rid}.yaml", text.encode())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # waited-for descendants too: the loader pool
    return usage.ru_utime + usage.ru_stime


def time_boards(roots: list[Path], repeat: int) -> tuple[list[float], list[float]]:
    """Best wall and best CPU seconds of `orv boards --no-cache` per root, the sizes interleaved in
    each round so that a change in the host's load falls on every size alike."""
    wall, cpu = [math.inf] * len(roots), [math.inf] * len(roots)
    for _ in range(repeat):
        for i, root in enumerate(roots):
            start, start_cpu = time.perf_counter(), _children_cpu()
            subprocess.run(
                [sys.executable, "-m", "validator", "boards", "--root", str(root), "--no-cache", *BOARDS_LIMIT],
                cwd=REPO,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            wall[i] = min(wall[i], time.perf_counter() - start)
            cpu[i] = min(cpu[i], _children_cpu() - start_cpu)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("frontier", "boards"), default="frontier")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("/tmp/orv-bench-frontier"))
    args = parser.parse_args()
    if args.part == "frontier":
        sizes, label = POINTS, "frontiers() CPU s"
        times = [time_frontier(n, args.repeat) for n in sizes]
    else:
        sizes, label = tuple(p // len(SWEEP) for p in POINTS), "orv boards wall s"
        roots = [swept_registry(args.out / f"sweep-{n}", n) for n in sizes]
        wall, times = time_boards(roots, args.repeat)
        label = "orv boards CPU s (wall s: " + ", ".join(f"{t:.2f}" for t in wall) + ")"
    exponent = math.log(times[1] / times[0]) / math.log(sizes[1] / sizes[0])
    for n, t in zip(sizes, times):
        print(f"{args.part} n={n:>7,}: {label} {t:.4f}")
    print(f"growth exponent {exponent:.3f} (1.0 linear, 2.0 pairwise)")
    path = HERE / "frontier-results.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results[args.part] = {
        "sizes": list(sizes),
        "seconds": [round(t, 4) for t in times],
        "exponent": round(exponent, 3),
        "points": list(POINTS),
        "repeat": args.repeat,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    if args.part == "boards":
        results[args.part]["wall_seconds"] = [round(t, 4) for t in wall]
        results[args.part]["seconds_are"] = "CPU (the process and its loader pool)"
    path.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
