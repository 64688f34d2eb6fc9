"""Sharded check vs one process (docs/scaling.md): CPU and wall time of `orv check --no-cache -jJ`, of
every `orv check --shard K/N --no-cache -jJ` and of `orv merge-results -jJ`, on a registry made by
bench/generate.py (J: --jobs, default 1). Checks that the merged report equals the single one. One line
of JSON per step.

    python bench/shard.py --root /tmp/reg3k --shards 2 4
    python bench/shard.py --root /tmp/reg10k --shards 8 --jobs 2   # every step with a runner's two cores
    python bench/shard.py --root /tmp/reg10k --shards 8 --judge 8   # also ORV304's pairs judged in 8 parts

With --judge P, after the one-runner merge: P `orv merge-results --judge K/P` parts, then the merge that
reports from their files (`--judged`), its report held equal to the single check's too; the critical path
of the sharded check is then the slowest shard + the slowest part + that merge (docs/scaling.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ORV = str(Path(sys.executable).with_name("orv"))


def timed(args: list[str]) -> dict:
    """Run orv once; wall seconds, CPU seconds (user + system), peak RSS, exit code and stdout of that child."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen([ORV, *args], stdout=out, stderr=err, env={**os.environ, "CI": "1"})
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {
            "wall_s": round(wall, 2),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_mb": round(usage.ru_maxrss / 1024),
            "exit": child.returncode,
            "out": out.read().decode(),
            "err": err.read().decode()[-300:],
        }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--shards", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--boards", action="store_true", help="check and merge with --boards")
    parser.add_argument("--jobs", type=int, default=1, help="processes of each step (orv's -j)")
    parser.add_argument("--judge", type=int, default=0, help="also judge ORV304's pairs in this many parts")
    opts = parser.parse_args()
    boards = ["--boards"] if opts.boards else []
    jobs = f"-j{opts.jobs}"
    single = timed(["check", "--root", opts.root, "--no-cache", jobs, "--format", "json", *boards])
    print(json.dumps({"step": "check", **{k: v for k, v in single.items() if k != "out"}}), flush=True)
    with tempfile.TemporaryDirectory(prefix="orv-shards-") as tmp:
        for n in opts.shards:
            shards = []
            for k in range(1, n + 1):
                out = os.path.join(tmp, f"{k}-of-{n}.partial")
                step = timed(
                    ["check", "--root", opts.root, "--no-cache", jobs, "--shard", f"{k}/{n}", "--partial-out", out]
                )
                step["partial_mb"] = round(os.path.getsize(out) / 2**20, 1)
                shards.append(step)
                print(
                    json.dumps({"step": f"shard {k}/{n}", **{k2: v for k2, v in step.items() if k2 != "out"}}),
                    flush=True,
                )
            merged = timed(
                [
                    "merge-results",
                    "--root",
                    opts.root,
                    jobs,
                    "--format",
                    "json",
                    *boards,
                    *(os.path.join(tmp, f"{k}-of-{n}.partial") for k in range(1, n + 1)),
                ]
            )
            same = merged["out"] == single["out"] and merged["exit"] == single["exit"]
            print(
                json.dumps(
                    {"step": f"merge {n}", "same_as_check": same, **{k: v for k, v in merged.items() if k != "out"}}
                ),
                flush=True,
            )
            print(
                json.dumps(
                    {
                        "n": n,
                        "shards_cpu_s": round(sum(s["cpu_s"] for s in shards), 2),
                        "shards_wall_sum_s": round(sum(s["wall_s"] for s in shards), 2),
                        "slowest_shard_wall_s": max(s["wall_s"] for s in shards),
                        "merge_cpu_s": merged["cpu_s"],
                        "merge_wall_s": merged["wall_s"],
                        "check_cpu_s": single["cpu_s"],
                        "check_wall_s": single["wall_s"],
                    }
                ),
                flush=True,
            )
            if not same:
                return 1
            if opts.judge and not judged_alike(opts, jobs, tmp, n, shards, single):
                return 1
    return 0


def judged_alike(opts: argparse.Namespace, jobs: str, tmp: str, n: int, shards: list[dict], single: dict) -> bool:
    """ORV304's pairs judged in opts.judge parts, then the reporting merge from their files: one line of JSON per
    step and one for the critical path; True when the report is the single check's."""
    partials = [os.path.join(tmp, f"{k}-of-{n}.partial") for k in range(1, n + 1)]
    parts = []
    for k in range(1, opts.judge + 1):
        out = os.path.join(tmp, f"judged-{k}-of-{opts.judge}.json")
        step = timed(
            ["merge-results", "--root", opts.root, jobs, *partials, "--judge", f"{k}/{opts.judge}", "--judged-out", out]
        )
        parts.append(step)
        print(
            json.dumps({"step": f"judge {k}/{opts.judge}", **{k2: v for k2, v in step.items() if k2 != "out"}}),
            flush=True,
        )
    judged = [
        arg
        for k in range(1, opts.judge + 1)
        for arg in ("--judged", os.path.join(tmp, f"judged-{k}-of-{opts.judge}.json"))
    ]
    boards = ["--boards"] if opts.boards else []
    merged = timed(["merge-results", "--root", opts.root, jobs, "--format", "json", *boards, *partials, *judged])
    same = merged["out"] == single["out"] and merged["exit"] == single["exit"]
    print(
        json.dumps(
            {
                "step": f"merge {n} judged {opts.judge}",
                "same_as_check": same,
                **{k: v for k, v in merged.items() if k != "out"},
            }
        ),
        flush=True,
    )
    path = max(s["wall_s"] for s in shards) + max(p["wall_s"] for p in parts) + merged["wall_s"]
    print(
        json.dumps(
            {
                "n": n,
                "judge": opts.judge,
                "slowest_shard_wall_s": max(s["wall_s"] for s in shards),
                "slowest_part_wall_s": max(p["wall_s"] for p in parts),
                "parts_cpu_s": round(sum(p["cpu_s"] for p in parts), 2),
                "parts_peak_mb": max(p["peak_mb"] for p in parts),
                "judged_merge_wall_s": merged["wall_s"],
                "judged_merge_cpu_s": merged["cpu_s"],
                "judged_merge_peak_mb": merged["peak_mb"],
                "critical_path_wall_s": round(path, 2),
                "check_wall_s": single["wall_s"],
                "path_over_check": round(path / single["wall_s"], 3),
            }
        ),
        flush=True,
    )
    return same


if __name__ == "__main__":
    sys.exit(main())
