"""Which runs ORV304 compares, and whether it still finds every copy it would flag (issue 54, 55).

    python -m bench.candidates --corpus 3                 # recall on the calibration corpus
    python bench/generate.py --n 1000 --out /tmp/b1k        # a bench registry, then:
    python -m bench.candidates --registry /tmp/b1k ...    # pairs compared, and recall on copies of its runs

Recall is counted against all pairs: of the forgeries `same_measurement` flags (compared with their
original whatever their keys), those ORV304 on a registry holding both still flags (`compared`: they
share a key, science/candidates.py, and the rules their shared keys lead to flag them). On a bench registry (bench/generate.py)
every `--every`-th run is forged the corpus's ways (tests/testing/corpus.py `forgeries`) and each
forgery is looked for among all the registry's runs: `found` when its original shares a key with it,
`neighbours` how many other runs it would be compared with (what a pull request adding it costs).
Writes bench/candidates-results.json with --json.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.testing.corpus import forgeries, forgeries_of, measure, workloads  # noqa: E402
from validator.science.independence import (  # noqa: E402
    ALL,
    buckets,
    compared,
    counted_column,
    same_measurement,
    sample_fingerprint,
    tie,
)


def corpus(scale: int, reruns: int = 4) -> dict[str, Any]:
    """Recall of the keys on the corpus's flagged forgeries, and honest pairs that share a key."""
    honest = honest_sharing = flagged = found = 0
    missed: collections.Counter[str] = collections.Counter()
    for workload in workloads(scale):
        runs = [measure(workload, r) for r in range(reruns)]
        prints = [sample_fingerprint(workload.kind, run) for run in runs]
        keys = [set(buckets(p)) for p in prints]
        for i in range(reruns):
            for j in range(i + 1, reruns):
                honest += 1
                honest_sharing += bool(keys[i] & keys[j])
        made = forgeries_of(workload, runs[0])
        for name, forged in made:
            fake = sample_fingerprint(workload.kind, forged)
            if not same_measurement(prints[0], fake):
                continue
            flagged += 1
            if compared(prints[0], fake, keys[0], buckets(fake)):
                found += 1
            else:
                shape = "fixed-length" if not workload.variable else "varied"
                missed[f"{workload.tool or workload.kind}, {workload.size} samples, {shape}: {name}"] += 1
    return {
        "scale": scale,
        "honest_pairs": honest,
        "honest_pairs_sharing_a_key": honest_sharing,
        "flagged_forgeries": flagged,
        "found": found,
        "missed": dict(missed.most_common()),
    }


def _counted_kind(common: list[str]) -> str:
    """Which counted keys tie a pair to every rule: smoothed and wide keys (`w`) where they do, else merge keys."""
    means = [key for key in common if key.startswith("w:")]
    return "w" if means and tie(means) == ALL else "m"


def registry(root: Path, every: int) -> dict[str, Any]:
    """Pairs compared on a bench registry, and recall on forgeries of every `every`-th run."""
    started = time.process_time()
    runs = []
    for path in sorted((root / "runs").glob("*/*.json")):
        data = orjson.loads(path.read_bytes())
        runs.append((data["kind"], data["samples"]))
    groups: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    prints, keys = [], []
    for index, (kind, samples) in enumerate(runs):
        fingerprint = sample_fingerprint(kind, samples)
        prints.append(fingerprint)
        keys.append(set(buckets(fingerprint)))
        for key in keys[-1]:
            groups[(kind, key)].append(index)
    pairs_by_kind: collections.Counter[str] = collections.Counter()  # a key tying them alone, else "m" or "v"
    pairs = 0
    for index, (kind, _) in enumerate(runs):
        shared: dict[int, list[str]] = {}  # each later run sharing a key with this one, and the keys
        for key in sorted(keys[index]):
            for other in groups[(kind, key)]:
                if other > index:
                    shared.setdefault(other, []).append(key)
        for common in shared.values():
            how = tie(common)  # as ORV304 (compared) ties them
            if how is not None:
                pairs += 1
                alone = [key for key in common if counted_column(key) is None]  # keys that tie one at a time
                pairs_by_kind[alone[0].split(":")[0] if alone else _counted_kind(common) if how == ALL else "v"] += 1
    loaded = time.process_time() - started
    flagged = found = 0
    neighbours: list[int] = []
    missed: collections.Counter[str] = collections.Counter()
    for index in range(0, len(runs), every):
        kind, samples = runs[index]
        second = next((other for k, other in runs[index + 1 :] if k == kind), None)  # merged with another run
        for name, forged in forgeries(kind, samples, index, second):
            fake = sample_fingerprint(kind, forged)
            if not same_measurement(prints[index], fake):
                continue
            flagged += 1
            fake_keys = set(buckets(fake))
            if compared(prints[index], fake, keys[index], fake_keys):
                found += 1
            else:
                missed[f"{kind}, {len(samples)} samples: {name}"] += 1
            # the runs pull-request mode loads beside the forgery: those the keys they share tie (relations.ties)
            sharing = {m for key in fake_keys for m in groups.get((kind, key), ())}
            neighbours.append(sum(1 for m in sharing if tie(fake_keys & keys[m]) is not None))
    neighbours.sort()
    return {
        "registry": str(root),
        "runs": len(runs),
        "pairs_compared": pairs,
        "pairs_by_first_key_kind": dict(pairs_by_kind.most_common()),
        "fingerprint_and_keys_cpu_s": round(loaded, 1),
        "flagged_forgeries": flagged,
        "found": found,
        "missed": dict(missed.most_common()),
        "forgery_neighbours_median": neighbours[len(neighbours) // 2] if neighbours else 0,
        "forgery_neighbours_max": neighbours[-1] if neighbours else 0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=int, default=0, help="corpus scale (0: skip)")
    parser.add_argument("--registry", type=Path, nargs="*", default=[], help="bench registries (bench/generate.py)")
    parser.add_argument("--every", type=int, default=25, help="forge every n-th run of a registry")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    results: dict[str, Any] = {"registries": []}
    if args.corpus:
        results["corpus"] = corpus(args.corpus)
        print(json.dumps(results["corpus"], indent=2), flush=True)
    for root in args.registry:
        found = registry(root, args.every)
        results["registries"].append(found)
        print(json.dumps(found, indent=2), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
