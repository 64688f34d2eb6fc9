"""The per-file load of two orv trees side by side: `orv check --no-cache -j1 --profile` stages against the floor.

    python -m bench.load_side REGISTRY --before /tmp/before --after . [--rounds 2] [--cpu-only]

BEFORE and AFTER are folders holding a `validator/` package (and its `schema/`), e.g.
`git archive <commit> validator schema | tar -x -C /tmp/before`. In rounds ordered A B B A (so a
drifting host favours neither), each tree checks REGISTRY in one process, and bench/floor.py reads,
hashes and parses every file of it just before. Printed per tree, the best of its rounds: the load
stage (every per-file stage: read, parse, schema, model, facts, run-file checks), the copy
fingerprint's stage and its time per run file, and load / floor, the per-file load's multiple of the
floor (the full check's goal, issue 55, is 2.5). Wall times, as --profile reports them: read them
as ratios taken minutes apart on the same host. Then, by CPU time (which other processes on a busy
host do not inflate): the per-file load alone (validator.load.pipeline.load_tree, uncached, one
process) against the floor's CPU time, in the same A B B A rounds; --cpu-only skips the checks.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FINGERPRINT = "of which the copy fingerprint"
STAGE = re.compile(r"^\s*([0-9.]+) s\s+[0-9.]+%\s+(.*)$")


def floor_seconds(registry: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, str(HERE / "floor.py"), registry], check=True, capture_output=True)
    return time.perf_counter() - start


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def floor_cpu(registry: str) -> float:
    start = children_cpu()
    subprocess.run([sys.executable, str(HERE / "floor.py"), registry], check=True, capture_output=True)
    return children_cpu() - start


LOAD = """
import sys, time
from validator.load.cache import Store
from validator.load.pipeline import load_tree
start = time.process_time()
load_tree(sys.argv[1], jobs=1, store=Store())
print(time.process_time() - start)
"""


def load_cpu(tree: str, registry: str) -> float:
    """CPU seconds of the per-file load of every file, uncached, in one process, run from `tree`."""
    done = subprocess.run(
        [sys.executable, "-c", LOAD, registry],
        cwd=registry,  # not this checkout: `python -c` puts the working folder first on sys.path
        env={**os.environ, "PYTHONPATH": tree},
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def profile(tree: str, registry: str) -> dict[str, float]:
    """The stage seconds `orv check --no-cache -j1 --profile` prints, run from `tree`."""
    done = subprocess.run(
        [sys.executable, "-m", "validator", "check", "--no-cache", "-j1", "--profile", "--quiet"],
        cwd=registry,
        env={**os.environ, "PYTHONPATH": tree},
        capture_output=True,
        text=True,
        check=False,
    )
    stages = {}
    for line in done.stdout.splitlines() + done.stderr.splitlines():
        found = STAGE.match(line)
        if found and (found.group(2) == "load" or FINGERPRINT in found.group(2)):
            stages["fingerprint" if FINGERPRINT in found.group(2) else "load"] = float(found.group(1))
    if len(stages) != 2:
        raise SystemExit(f"{tree}: no load stages in orv's --profile output (exit {done.returncode})")
    return stages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("registry")
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cpu-only", action="store_true", help="only the CPU-time rounds (no full checks)")
    args = parser.parse_args()
    runs = sum(1 for _ in Path(args.registry, "runs").rglob("*.json"))
    orders = [("before", "after") if r % 2 == 0 else ("after", "before") for r in range(args.rounds)]
    results: dict[str, list[tuple[float, dict[str, float]]]] = {"before": [], "after": []}
    for round_, order in enumerate([] if args.cpu_only else orders):
        for name in order:
            floor = floor_seconds(args.registry)
            stages = profile(getattr(args, name), args.registry)
            results[name].append((floor, stages))
            print(f"round {round_ + 1} {name}: floor {floor:.2f} s, {stages}", flush=True)
    for name, rounds in results.items():
        if not rounds:
            continue
        floor = min(f for f, _ in rounds)
        load = min(s["load"] for _, s in rounds)
        fingerprint = min(s["fingerprint"] for _, s in rounds)
        print(
            f"{name}: load {load:.2f} s, fingerprint {fingerprint:.2f} s ({fingerprint / runs * 1e3:.2f} ms per run file),"
            f" floor {floor:.2f} s, load / floor {load / floor:.2f}, fingerprint / floor {fingerprint / floor:.2f}"
        )
    cpu: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    for round_, order in enumerate(orders):
        for name in order:
            floor, load = floor_cpu(args.registry), load_cpu(getattr(args, name), args.registry)
            cpu[name].append((floor, load))
            print(f"CPU round {round_ + 1} {name}: floor {floor:.2f} s, per-file load {load:.2f} s", flush=True)
    for name, pairs in cpu.items():
        floor, load = min(f for f, _ in pairs), min(load for _, load in pairs)
        print(f"{name}, CPU: per-file load {load:.2f} s, floor {floor:.2f} s, load / floor {load / floor:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
