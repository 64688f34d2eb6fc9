"""The throughput–interactivity Pareto frontier of one model × GPU × workload, and cost along it.

An operator asks: at the per-user speed my users need (interactivity, tok/s per stream), what
output throughput per GPU — and so what cost per million tokens — does each configuration give?
InferenceX plots exactly this (`utils/process_result.py`: `tput_per_gpu`, `intvty = 1000 / tpot_ms`);
we recompute every point from a run's raw samples instead of trusting a client's summary.

A point is on the frontier when no other point has both a higher interactivity and a higher
throughput per GPU. One sort and one sweep find them (O(n log n)), never a pairwise comparison.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Generic, TypeVar

T = TypeVar("T")

# The per-user speeds readers ask about most (tok/s per stream): a chat reader skims at ~20, a
# fluent reader wants ~50, agents and code assistants ~100. Cost is given at each one the frontier
# spans; outside its span it is left out (interpolated, never extrapolated).
INTERACTIVITY_TARGETS = (20.0, 50.0, 100.0)


@dataclass(frozen=True)
class Point(Generic[T]):
    interactivity: float  # tok/s one stream sees (the run's per-stream decode rate)
    throughput: float  # output tok/s per GPU, all streams together
    item: T  # what the point stands for (a board row, a run)


def frontier(points: Iterable[Point[T]]) -> list[Point[T]]:
    """The points no other point beats on both axes, by interactivity ascending (then throughput).

    Sorted by interactivity descending, a point is beaten exactly when some point of strictly higher
    interactivity has strictly higher throughput: the running maximum over the groups before it.
    """
    by_interactivity = sorted(points, key=lambda p: (-p.interactivity, -p.throughput))
    best_above = float("-inf")
    kept: list[Point[T]] = []
    for _, group in groupby(by_interactivity, key=lambda p: p.interactivity):
        members = list(group)
        kept.extend(p for p in members if p.throughput >= best_above)
        best_above = max(best_above, members[0].throughput)  # members are sorted throughput-descending
    kept.reverse()
    return kept


def throughput_at(front: Sequence[Point[T]], interactivity: float) -> float | None:
    """Throughput per GPU the frontier offers at `interactivity`: linear between its neighbouring
    points, None outside the interactivities the frontier spans (never extrapolated)."""
    if not front or not front[0].interactivity <= interactivity <= front[-1].interactivity:
        return None
    xs = [p.interactivity for p in front]
    i = bisect_left(xs, interactivity)
    right = front[i]
    if right.interactivity == interactivity:
        # several points may share an interactivity: the best of them is what the frontier offers
        return max(p.throughput for p in front[i:] if p.interactivity == interactivity)
    left = front[i - 1]
    share = (interactivity - left.interactivity) / (right.interactivity - left.interactivity)
    return left.throughput + share * (right.throughput - left.throughput)
