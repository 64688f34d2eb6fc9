"""How the boards show a figure, and which figures they can show: one rule the builder and the gate both read.

The boards keep a fixed number of decimals per kind of figure (ROUNDING, docs/boards.md), so the same
registry gives the same bytes on any machine. A rate is only worth a place on the boards if it survives
that rounding: a positive throughput that would be shown as 0.00 (808 tokens over a `duration_s` 3,000×
too long, 0.0016 tok/s per GPU) is not a measurement anyone can read, and the boards schema refuses a
frontier point at 0 tok/s per GPU. `too_small_to_show` is the rule: the gate refuses such a run (ORV217,
validator/checks/integrity.py) and the builder leaves any such point off (validator/boards/frontier.py), so
`orv boards` never meets a value its schema refuses. Money that overflows a float (a catalog price near
10^308) is shown as null, as a missing price is, never as an infinity JSON cannot write.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

# Decimals kept per kind of figure (docs/boards.md). Throughput keeps two decimals (small decode
# rates such as 3.25 tok/s stay meaningful), money is shown in cents as seed 000 shows it, MFU is a
# fraction with four decimals (0.4123 = 41.23%), ratios three, percentages one.
ROUNDING = {
    "tok_s": 2,
    "ms": 2,
    "usd": 2,
    "mfu": 4,
    "ratio": 3,
    "pct": 1,
    "params_b": 3,
    "loss": 4,
}

# The rates a run puts on the boards (recomputed from its samples, else its tool's summary), all tok/s.
RATES = ("decode_tok_s", "prefill_tok_s", "output_tok_s", "tokens_per_s_per_gpu")
SMALLEST_RATE = 10 ** -ROUNDING["tok_s"]  # 0.01 tok/s: the least a board shows above 0


def fixed(value: float | None, kind: str) -> float | None:
    """A figure rounded to its kind's decimals; None for missing or non-finite values."""
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), ROUNDING[kind]) + 0.0  # + 0.0 turns -0.0 into 0.0


def per_gpu(output_tok_s: float, gpus: int) -> float:
    """The frontier's throughput axis: output tok/s of all streams ÷ GPUs, as the boards round it."""
    return fixed(output_tok_s / gpus, "tok_s") or 0.0


@dataclass(frozen=True)
class Unshowable:
    """A positive rate the boards would round to 0: `figure` (a RATES name, or `output_tok_s per GPU`)."""

    figure: str
    value: float  # unrounded, tok/s


def too_small_to_show(figures: Mapping[str, float], gpus: int) -> Iterator[Unshowable]:
    """Each positive rate of a run's headline (`figures`, unrounded) that the boards would show as 0, and the
    run's output per GPU (the frontier's axis) when that would be: the gate refuses what this yields."""
    for name in RATES:
        value = figures.get(name)
        if value is not None and value > 0 and not fixed(value, "tok_s"):
            yield Unshowable(name, value)
    output = figures.get("output_tok_s")
    if output is not None and output > 0 and gpus > 0 and fixed(output, "tok_s") and not per_gpu(output, gpus):
        yield Unshowable("output_tok_s per GPU", output / gpus)
