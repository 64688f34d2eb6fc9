"""ORV304's judging of tied pairs, the code of a git revision against the working tree's: the same verdicts?

    python -m bench.judging --registry bench/out/registry-1000                 # every tied pair, both codes
    python -m bench.judging --registry bench/out/registry-10000 --fixed-length --time-pairs 100000

For a bench registry (bench/generate.py): every run file's fingerprint and buckets (the working tree's
code), the pairs ORV304 judges (checks/independence.py `tied_after`, as the check finds them),
then each pair's verdict (science/independence.py `judged`) by the module as it was at `--old` (default
main's merge base, read with `git show`) and as it is now. Prints how many verdicts are equal, word for
word, and every one that is not; then the CPU time of judging the pairs by each, interleaved in rounds
(old, new, new, old, ...; each pass from cold caches, the pairs in each code's check's order: the old by path,
the new by block, checks/independence.py `in_blocks`; `--order path`: both by path), best of the rounds
(the host is shared). `--fixed-length`: only inference runs whose requests all have one prompt and output
length (the bench's largest share of tied pairs at 10,000 run files, issue 55). Writes --json.
"""

from __future__ import annotations

import argparse
import glob
import json
import multiprocessing
import pickle
import subprocess
import sys
import time
import types
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from validator.checks.independence import in_blocks, tied_after  # noqa: E402
from validator.science import independence  # noqa: E402

MODULE = "validator/science/independence.py"


def old_module(rev: str) -> types.ModuleType:
    """science/independence.py as it was at `rev`, as a module of its own (its own caches)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:{MODULE}"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType(f"independence_at_{rev}")
    module.__file__ = f"{rev}:{MODULE}"
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 (this repository's own code)
    return module


def _fingerprint(path: str) -> tuple[str, str, Any, tuple[str, ...]] | None:
    data = json.loads(Path(path).read_text())
    kind, samples = data.get("kind"), data.get("samples")
    if kind not in independence.TIMING_COLUMNS or not isinstance(samples, list) or not samples:
        return None
    fingerprint = independence.sample_fingerprint(kind, samples)
    return (path, kind, fingerprint, independence.buckets(fingerprint)) if fingerprint else None


def _fixed_length(path: str) -> bool:
    data = json.loads(Path(path).read_text())
    samples = data.get("samples")
    return (
        data.get("kind") == "inference"
        and isinstance(samples, list)
        and bool(samples)
        and all(isinstance(s, dict) for s in samples)
        and len({(s.get("prompt_tokens"), s.get("output_tokens")) for s in samples}) == 1
    )


def prints(registry: str, fixed_length: bool, jobs: int) -> list[tuple[str, str, Any, tuple[str, ...]]]:
    """Each run file's (path, kind, fingerprint, buckets), by path."""
    paths = sorted(glob.glob(f"{registry}/runs/*/*.json"))
    with multiprocessing.Pool(jobs) as pool:
        if fixed_length:
            paths = [p for p, keep in zip(paths, pool.map(_fixed_length, paths, chunksize=64)) if keep]
        return [found for found in pool.map(_fingerprint, paths, chunksize=16) if found is not None]


def tied_pairs(runs: list[tuple[str, str, Any, tuple[str, ...]]]) -> list[tuple[int, int, bool]]:
    """The pairs ORV304 judges, in its order: (run, later run, judged by the exact-values rule alone)."""
    keyed = ((kind, [f"s:{kind}:{key}" for key in keys]) for _, kind, _, keys in runs)
    return [(i, j, values_only) for i, later in tied_after(keyed) for j, values_only in later]


def _forget(module: types.ModuleType) -> None:
    """Empty the module's per-run caches, so that each timed pass starts cold as a check does."""
    for cache in getattr(module, "_CACHES", None) or (module._UNPACKED, module._VIEWS):
        cache.clear()


def _judge_all(module: types.ModuleType, runs: list[Any], pairs: list[tuple[int, int, bool]]) -> list[str | None]:
    judged = module.judged
    return [judged(runs[i][2], runs[j][2], values_only) for i, j, values_only in pairs]


def _timed(module: types.ModuleType, runs: list[Any], pairs: list[tuple[int, int, bool]]) -> tuple[float, list[Any]]:
    _forget(module)
    start = time.process_time()
    verdicts = _judge_all(module, runs, pairs)
    return time.process_time() - start, verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", required=True)
    parser.add_argument("--fixed-length", action="store_true", help="fixed-length inference runs only")
    parser.add_argument("--old", default=None, help="the revision judged against (default: merge-base with main)")
    parser.add_argument("--kind", choices=sorted(independence.TIMING_COLUMNS), help="only the pairs of this kind")
    parser.add_argument("--part", default="1/1", help="K/N: only the K-th of N equal runs of pairs (in parallel)")
    parser.add_argument(
        "--order",
        choices=("check", "path"),
        default="check",
        help="check: each code in its check's order (the old by path, the new by block); path: both by path",
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (each: old and new)")
    parser.add_argument("--time-pairs", type=int, default=0, help="time only the first N pairs (0: all)")
    parser.add_argument("--no-equality", action="store_true", help="skip the pass comparing every verdict")
    parser.add_argument("--jobs", type=int, default=2, help="processes fingerprinting the run files")
    parser.add_argument("--prints", help="a pickle of the fingerprints: read if it exists, else written")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    rev = (
        args.old
        or subprocess.run(
            ["git", "merge-base", "HEAD", "main"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    old = old_module(rev)
    if args.prints and Path(args.prints).exists():
        runs = pickle.loads(Path(args.prints).read_bytes())
    else:
        runs = prints(args.registry, args.fixed_length, args.jobs)
        if args.prints:
            Path(args.prints).write_bytes(pickle.dumps(runs))
    pairs = tied_pairs(runs)
    if args.kind:
        pairs = [pair for pair in pairs if runs[pair[0]][1] == args.kind]
    part, parts = map(int, args.part.split("/"))
    size = -(-len(pairs) // parts)
    pairs = pairs[(part - 1) * size : part * size]
    kinds = Counter(runs[i][1] + (" (values only)" if values_only else "") for i, _, values_only in pairs)
    print(f"{len(runs)} runs, {len(pairs)} tied pairs: {dict(kinds)}; old code at {rev[:12]}", flush=True)
    found: dict[str, Any] = {
        "registry": args.registry,
        "fixed_length": args.fixed_length,
        "kind": args.kind,
        "old": rev,
    }
    found.update(runs=len(runs), pairs=len(pairs), pairs_by_kind=dict(kinds))
    ordered = list(in_blocks(pairs)) if args.order == "check" else pairs  # the new code's order
    assert sorted(ordered) == sorted(pairs)
    if not args.no_equality:
        old_time, old_verdicts = _timed(old, runs, pairs)
        new_time, new_found = _timed(independence, runs, ordered)
        by_pair = dict(zip(ordered, new_found))
        new_verdicts = [by_pair[pair] for pair in pairs]
        differ = [(p, a, b) for p, a, b in zip(pairs, old_verdicts, new_verdicts) if a != b]
        for (i, j, _), a, b in differ[:20]:
            print(f"DIFFERENT {runs[i][0]} {runs[j][0]}:\n  old {a!r}\n  new {b!r}")
        flagged = Counter((v or "").split(":")[0].split(" (")[0][:40] for v in old_verdicts if v)
        print(
            f"equal verdicts: {len(pairs) - len(differ)} of {len(pairs)} ({sum(map(bool, old_verdicts))} flagged); "
            f"one pass: old {old_time:.1f} s, new {new_time:.1f} s CPU",
            flush=True,
        )
        found.update(equal=len(pairs) - len(differ), different=len(differ), flagged=sum(map(bool, old_verdicts)))
        found.update(flagged_by=dict(flagged), first_pass_s={"old": old_time, "new": new_time})
    timed = pairs[: args.time_pairs] if args.time_pairs else pairs
    timed_new = list(in_blocks(timed)) if args.order == "check" else timed
    times: dict[str, list[float]] = {"old": [], "new": []}
    for n in range(args.rounds):
        order = ((old, "old"), (independence, "new")) if n % 2 == 0 else ((independence, "new"), (old, "old"))
        for module, name in order:
            times[name].append(_timed(module, runs, timed if module is old else timed_new)[0])
        print(f"round {n + 1}: old {times['old'][-1]:.2f} s, new {times['new'][-1]:.2f} s CPU", flush=True)
    if args.rounds and not timed:
        print("no tied pairs: nothing to time")
    elif args.rounds:
        best_old, best_new = min(times["old"]), min(times["new"])
        print(
            f"{len(timed)} pairs, best of {args.rounds}: old {best_old:.2f} s ({1e6 * best_old / len(timed):.0f} us a "
            f"pair), new {best_new:.2f} s ({1e6 * best_new / len(timed):.0f} us a pair): {best_old / best_new:.2f}x"
        )
        found.update(timed_pairs=len(timed), cpu_s=times, ratio=best_old / best_new)
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1) + "\n")
    return 1 if found.get("different") else 0


if __name__ == "__main__":
    sys.exit(main())
