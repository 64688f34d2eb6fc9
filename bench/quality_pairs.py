"""ORV239's search for quality runs that repeat each other: every pair against the block search
(validator/quality/status.py repeating_pairs), side by side in one process, on synthetic runs of one
model and task shaped like the bench registries' (bench/history.py: one inference recipe in ten has a
quality run, so ~480 runs at 10,000 run files and ~4,800 at 100,000).

Each run answers the same 200 documents (a full task); on each, with probability `--agree`, the answer
every run of the model gives (greedy decoding at another precision often answers alike), else its own;
one run in a hundred is a copy of another with two responses edited (what ORV239 must catch). Both
searches must return the same pairs; every pair is timed on a sample of pairs above `--full-pairs` and
scaled (the row says so).

    python bench/quality_pairs.py --runs 480 1600 4800 --results bench/quality-pairs-results.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from validator.quality import status  # noqa: E402

DOCUMENTS = 200


class Facts:
    def __init__(self, responses: list[tuple[int, str]]) -> None:
        self.responses = tuple(responses)


def runs(n: int, agree: float, seed: int) -> dict[str, Facts]:
    rng = random.Random(seed)
    common = [f"{rng.getrandbits(64):016x}" for _ in range(DOCUMENTS)]
    out: dict[str, Facts] = {}
    for i in range(n):
        if i % 100 == 99:  # a copy of an earlier run, two responses edited
            copied = list(out[f"run-{rng.randrange(i):05d}"].responses)
            for doc in rng.sample(range(DOCUMENTS), 2):
                copied[doc] = (doc, f"{rng.getrandbits(64):016x}")
            out[f"run-{i:05d}"] = Facts(copied)
            continue
        out[f"run-{i:05d}"] = Facts(
            [(doc, common[doc] if rng.random() < agree else f"{rng.getrandbits(64):016x}") for doc in range(DOCUMENTS)]
        )
    return out


def measure(n: int, agree: float, full_pairs: int) -> dict[str, Any]:
    facts = runs(n, agree, seed=n)
    start = time.perf_counter()
    found = status.repeating_pairs(facts)
    blocks_s = time.perf_counter() - start
    names = sorted(facts)
    pairs = n * (n - 1) // 2
    sample = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]] if pairs <= full_pairs else None
    rng = random.Random(1)
    if sample is None:
        sample = []
        while len(sample) < full_pairs:
            a, b = sorted(rng.sample(names, 2))
            sample.append((a, b))
    start = time.perf_counter()
    repeated = [(a, b) for a, b in sample if status.repeats(facts[a], facts[b])]
    every_s = (time.perf_counter() - start) * pairs / len(sample)
    row = {
        "runs": n,
        "pairs": pairs,
        "agree": agree,
        "found": len(found),
        "block_search_s": round(blocks_s, 3),
        "every_pair_s": round(every_s, 2),
        "every_pair_timed_on": len(sample),
        "ratio": round(every_s / blocks_s, 1),
    }
    if len(sample) == pairs:
        row["same_pairs"] = repeated == found
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, nargs="+", default=[480, 1600, 4800])
    parser.add_argument("--agree", type=float, default=0.85)
    parser.add_argument("--full-pairs", type=int, default=200_000)
    parser.add_argument("--results", type=Path, default=None)
    args = parser.parse_args()
    rows = []
    for n in args.runs:
        rows.append(measure(n, args.agree, args.full_pairs))
        print(json.dumps(rows[-1]), flush=True)
    if args.results:
        args.results.write_text(
            json.dumps(
                {"command": "python bench/quality_pairs.py --runs " + " ".join(map(str, args.runs)), "rows": rows},
                indent=1,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
