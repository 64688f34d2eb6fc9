"""Per-filter headline and standard error from per-document values, as lm-eval aggregates them.

lm_eval/api/metrics.py (0.4.13): `mean` for the headline and `mean_stderr` =
`sample_stddev(arr) / sqrt(len(arr))`, with sample_stddev dividing by n - 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def mean_stderr(values: Sequence[float]) -> float | None:
    """lm-eval's mean_stderr; None for fewer than two values (lm-eval divides by zero there)."""
    n = len(values)
    if n < 2:
        return None
    mu = sum(values) / n  # lm-eval's own (non-fsum) order, so the figures agree to the last bit
    return math.sqrt(sum((x - mu) ** 2 for x in values) / (n - 1)) / math.sqrt(n)


def agrees(stated: float, recomputed: float) -> bool:
    """Same figure up to float summation order (lm-eval sums with numpy or Python in turn).

    A stated integer too large for a float (the schema allows any JSON number) never agrees."""
    try:
        return math.isclose(stated, recomputed, rel_tol=1e-9, abs_tol=1e-12)
    except OverflowError:
        return False
