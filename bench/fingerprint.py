"""The copy fingerprint's cost per run file, per component, before and after issue 55's speed-ups.

    python -m bench.fingerprint REGISTRY [--repeat 3]

Reads every training and inference run file of REGISTRY (e.g. `python bench/generate.py --n 1000
--out /tmp/b1k`) once, then times `sample_fingerprint` on each, as the loader calls it (the columns
the schema's fast path read and sorted, validator/load/pipeline.py): with the helpers as they were
before issue 55 (tests/testing/fingerprint_reference.py), with the near print and candidate keys as they
were before its second pass (main 23db4bb: fingerprint_reference._near_print, candidates_reference), and
as they are, in turn, the best of --repeat rounds, so all three see the same host moment. The time is this process's CPU time (time.process_time), which
other processes on a busy host do not inflate as they do wall time. Then the current fingerprint's
time per component: the exact hash, the column prints, the value sketch, the numeric checks, the
near sketches, the own noise, the candidate keys, and the rest (mostly the near print's packing).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import tests.testing.fingerprint_reference as reference  # noqa: E402
from validator.load.pipeline import samples_fast_ok  # noqa: E402
from validator.science import candidates, independence  # noqa: E402
from validator.science.samples import Columns  # noqa: E402

REWRITTEN = (
    "_row_order",
    "_multiset_text",
    "_exact",
    "_column_print",
    "_numeric",
    "_values_print",
    "_near_parts",
    "_near_print",
)
SECOND_PASS = ("_near_print",)  # the reference's: main 23db4bb's level and candidate keys
COMPONENTS = ("_exact", "_column_print", "_values_print", "_numeric", "_near_parts", "_own_noise")
Runs = list[tuple[str, list[Any]]]


def run_files(root: str) -> Runs:
    runs = []
    for folder, _, names in os.walk(os.path.join(root, "runs")):
        for name in sorted(names):
            if name.endswith(".json"):
                data = orjson.loads(Path(folder, name).read_bytes())
                if data.get("kind") in ("training", "inference") and data.get("samples"):
                    runs.append((data["kind"], data["samples"]))
    return runs


@contextmanager
def swapped(names: tuple[str, ...], source: Any, module: Any = independence) -> Iterator[None]:
    kept = {name: getattr(module, name) for name in names}
    for name in names:
        setattr(module, name, getattr(source, name))
    try:
        yield
    finally:
        for name, func in kept.items():
            setattr(module, name, func)


def timed(runs: Runs) -> float:
    """Seconds of sample_fingerprint over every run (the columns warmed as the loader warms them)."""
    spent = 0.0
    for kind, samples in runs:
        columns = Columns(samples)
        samples_fast_ok(kind, samples, columns)
        start = time.process_time()
        independence.sample_fingerprint(kind, samples, columns)
        spent += time.process_time() - start
    return spent


def per_component(runs: Runs) -> dict[str, float]:
    """Seconds per component of the current fingerprint (each helper wrapped in a timer)."""
    spent: dict[str, float] = defaultdict(float)

    def timer(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                spent[name] += time.process_time() - start

        return wrapped

    wrappers = type(
        "Wrappers", (), {name: staticmethod(timer(name, getattr(independence, name))) for name in COMPONENTS}
    )
    keys = type("Keys", (), {"sample_keys": staticmethod(timer("sample_keys", candidates.sample_keys))})
    with swapped(COMPONENTS, wrappers), swapped(("sample_keys",), keys, candidates):
        spent["sample_fingerprint"] = timed(runs)
    # _exact's inner helpers are its own; the near print's _numeric calls are counted under _numeric
    spent["packing and the rest"] = spent["sample_fingerprint"] - sum(
        spent[name] for name in (*COMPONENTS, "sample_keys")
    )
    return dict(spent)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("registry")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = run_files(args.registry)
    before, second, after = [], [], []
    for _ in range(args.repeat):
        with swapped(REWRITTEN, reference):
            before.append(timed(runs))
        with swapped(SECOND_PASS, reference):
            second.append(timed(runs))
        after.append(timed(runs))
    old, mid, new = (min(times) / len(runs) * 1e3 for times in (before, second, after))
    print(f"{len(runs)} run files, {sum(len(s) for _, s in runs):,} samples")
    print(f"fingerprint per run, CPU: before issue 55 {old:.3f} ms, before its second pass (23db4bb) {mid:.3f} ms,")
    print(f"  now {new:.3f} ms ({new / old:.2f}x and {new / mid:.2f}x)")
    parts = per_component(runs)
    total = parts["sample_fingerprint"]
    for name, seconds in sorted(parts.items(), key=lambda item: -item[1]):
        print(f"  {seconds / len(runs) * 1e3:7.3f} ms/run {seconds / total:6.1%}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
