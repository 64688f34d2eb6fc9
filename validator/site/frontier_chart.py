"""Geometry of the frontier chart (inline SVG): throughput per GPU against interactivity, per group.

Pure and deterministic: the boards' `frontiers` group in, coordinates out, fixed decimals, so the
same boards give the same page bytes. The template draws it; the SVG scales with its viewBox.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

WIDTH, HEIGHT = 640, 340
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 44
TICKS = 5


def _ticks(values: list[float]) -> list[float]:
    """Round ticks from 0 past the largest value, 1, 2, 2.5 or 5 times a power of ten apart (3 to 5 steps):
    throughput and interactivity start at zero."""
    top = max(values) if values else 1.0
    raw = top / (TICKS - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return [round(i * step, 9) for i in range(int(math.ceil(top / step)) + 1)]


def frontier_chart(group: Mapping[str, Any]) -> dict[str, Any]:
    """Coordinates of every point (verified filled, apart hollow), the frontier's line and the axes."""
    points = list(group.get("points") or []) + list(group.get("apart") or [])
    xs = _ticks([float(p["interactivity"]) for p in points])
    ys = _ticks([float(p["tok_s_per_gpu"]) for p in points])
    x0, x1, y0, y1 = xs[0], xs[-1], ys[0], ys[-1]
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return round(LEFT + (x - x0) / (x1 - x0) * pw, 1)

    def py(y: float) -> float:
        return round(TOP + (y1 - y) / (y1 - y0) * ph, 1)

    def placed(p: Mapping[str, Any], verified: bool) -> dict[str, Any]:
        return {**p, "cx": px(float(p["interactivity"])), "cy": py(float(p["tok_s_per_gpu"])), "verified": verified}

    front = [p for p in group.get("points") or [] if p.get("on_frontier")]
    line = " ".join(f"{px(float(p['interactivity']))},{py(float(p['tok_s_per_gpu']))}" for p in front)
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "top": TOP,
        "right": WIDTH - RIGHT,
        "bottom": HEIGHT - BOTTOM,
        "xticks": [(px(x), f"{x:,g}") for x in xs],
        "yticks": [(py(y), f"{y:,g}") for y in ys],
        "points": [placed(p, True) for p in group.get("points") or []]
        + [placed(p, False) for p in group.get("apart") or []],
        "frontier": line,
    }
