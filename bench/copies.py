"""ORV304's near-copy rule on its calibration corpus (tests/testing/corpus.py): FP and FN rates.

    python -m bench.copies [--scale 4] [--reruns 4]   -> prints and writes bench/copies-results.json

docs/metrics.md ("Independent runs" and "What the copy test can and cannot see") publishes the
figures with the corpus parameters: false positives and negatives on the corpus, per tool the
share of copies caught by jitter width (`detection`; at 64 and 200 samples, and apart at 16), and the
prefix-cache class by hit share and request count (`prefix_cache`). The prefix-cache part alone:
`python -c "from tests.testing.corpus import prefix_cache; print(prefix_cache(10))"`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.testing.corpus import detection, evaluate, prefix_cache  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=10, help="seeds per workload shape, x3")
    parser.add_argument("--reruns", type=int, default=4, help="honest runs per workload (pairs: n(n-1)/2)")
    args = parser.parse_args()
    rates = evaluate(args.scale, args.reruns)
    found = {
        "scale": args.scale,
        "reruns": args.reruns,
        **rates.as_dict(),
        "false_positive_rate": rates.false_positives / rates.honest_pairs,
        "false_negative_rate": rates.false_negatives / rates.forgeries,
        "detection_by_jitter": detection(args.scale),
        # at 16 requests too: where a run's noise reading bounds it from above only (independence.QUIET_RATIO)
        "detection_by_jitter_16": detection(args.scale, (16,)),
        "prefix_cache": prefix_cache(args.scale),
    }
    (HERE / "copies-results.json").write_text(json.dumps(found, indent=2) + "\n")
    print(json.dumps(found, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
