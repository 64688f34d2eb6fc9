"""What loading a pull request's neighbourhood costs in one process and in worker processes (issue 55):
the figures behind validator/load/pipeline.py's workers_for (RUN_FILE_MS, OTHER_FILE_MS, POOL_FROM_MS).

On a clone whose branch holds a change against `--base` (`--root`), or on a fresh clone of a bench/generate.py
registry given bench/run.py's one-training-recipe pull request (`--registry`: bench/run.py prepare_pr), it runs `orv check --base` once to learn which unchanged files pull-request
mode loads (its neighbourhood: the runs tied to the change's by their candidate keys, and their recipes),
then loads those files again through load_all, fastest of `--repeat`: all of them in this process and in 2
forked workers (the pool's own chunks and gc.freeze); the first k run files alone (k = 2, 4, ... 32) both
ways; and the recipes alone. The merge base's boards must be this checkout's code's (the gate trusts only
keys its own orv stamped; else it loads every file): refused otherwise.

    python bench/generate.py --n 10000 --out /tmp/g10k
    python bench/pool.py --registry /tmp/g10k --json bench/pool-results.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.run import prepare_pr  # noqa: E402
from validator.cli.app import main as orv  # noqa: E402
from validator.load import pipeline  # noqa: E402
from validator.load.cache import derivation_key  # noqa: E402
from validator.pr import incremental  # noqa: E402
from validator.registry.layout import KEYS_PATH, classify  # noqa: E402


def neighbourhood(root: str, base: str) -> tuple[Any, list[str], int]:
    """The loader pull-request mode used, the unchanged files it loaded (in its order), and orv's exit code."""
    seen: dict[str, Any] = {"rels": []}
    original = incremental._Loader.load_unchanged

    def recording(self: Any, rels: list[str]) -> None:
        seen["loader"] = self
        seen["rels"].extend(rel for rel in rels if rel not in self.head)
        original(self, rels)

    incremental._Loader.load_unchanged = recording  # type: ignore[method-assign]
    try:
        code = orv(["check", "--root", root, "--base", base, "--no-cache", "-q"])  # its exit code, never raising
    finally:
        incremental._Loader.load_unchanged = original  # type: ignore[method-assign]
    return seen.get("loader"), seen["rels"], code


def fastest(repeat: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return round(best, 4)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--root", help="a clone whose branch holds the change")
    where.add_argument("--registry", type=Path, help="a bench/generate.py registry: its clone with the bench's change")
    parser.add_argument("--base", default="main")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    if args.registry is not None:
        with tempfile.TemporaryDirectory(prefix="orv-pool-") as work:
            args.root = str(prepare_pr(args.registry.resolve(), Path(work)))
            return measure(args)
    return measure(args)


def measure(args: argparse.Namespace) -> int:
    def git(*words: str) -> bytes:
        return subprocess.run(["git", "-C", args.root, *words], capture_output=True, check=False).stdout

    merge_base = git("merge-base", args.base, "HEAD").decode().strip()
    if not merge_base:
        print(f"no merge base of {args.base} and HEAD in {args.root}: nothing measured", file=sys.stderr)
        return 2
    base_keys = git("show", f"{merge_base}:{KEYS_PATH}")
    try:
        stamp = json.loads(base_keys)["orv"]
    except (ValueError, KeyError, TypeError):
        stamp = None
    if stamp != derivation_key(args.root):
        print(
            f"the merge base's {KEYS_PATH} was not made by this checkout's code (stamp {stamp}): pull-request mode would "
            "load every file; regenerate the boards with it (bench/generate.py refresh_boards) first",
            file=sys.stderr,
        )
        return 2
    loader, rels, code = neighbourhood(args.root, args.base)
    if code not in (0, 1):  # 1: findings, still a check; else orv could not check (its message above)
        print(f"orv check --base exited {code}: nothing measured", file=sys.stderr)
        return code
    if loader is None or not rels:
        print("pull-request mode loaded no unchanged file: nothing to measure", file=sys.stderr)
        return 1
    runs = [rel for rel in rels if classify(rel) == "run"]
    others = [rel for rel in rels if classify(rel) != "run"]

    def load(files: list[str], jobs: int) -> Callable[[], object]:
        """load_all as the gate calls it, in this process (jobs 1) or in 2 workers (jobs 2: POOL_FROM_MS below)."""
        return lambda: list(pipeline.load_all(loader.root, files, loader.catalog, jobs, None, loader.keep, keys=True))

    pipeline.POOL_FROM_MS = 0.0  # so that 2 jobs always means 2 workers, whatever the files
    report: dict[str, Any] = {
        "command": "python bench/pool.py " + " ".join(sys.argv[1:]),
        "neighbourhood": {"run_files": len(runs), "other_files": len(others)},
        "all": {
            "one_process_s": fastest(args.repeat, load(rels, 1)),
            "two_workers_s": fastest(args.repeat, load(rels, 2)),
        },
        "run_files": [],
        "others_one_process_s": fastest(args.repeat, load(others, 1)) if others else None,
    }
    for k in (2, 4, 8, 16, 32):
        if k <= len(runs):
            report["run_files"].append(
                {
                    "k": k,
                    "one_process_s": fastest(args.repeat, load(runs[:k], 1)),
                    "two_workers_s": fastest(args.repeat, load(runs[:k], 2)),
                }
            )
    report["ms_per_run_file"] = round(1000 * fastest(args.repeat, load(runs, 1)) / len(runs), 2) if runs else None
    report["ms_per_other_file"] = round(1000 * report["others_one_process_s"] / len(others), 2) if others else None
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
