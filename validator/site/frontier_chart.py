"""Geometry of the frontier charts (inline SVG): throughput per GPU (or cost per 1M output tokens) against
interactivity — one chart per model × GPU × workload, and one per model × workload comparing every GPU.

Pure and deterministic: the boards' `frontiers` groups in, coordinates out, fixed decimals, so the
same boards give the same page bytes. Each chart is drawn twice, wide (a desktop) and narrow (a
phone, 340 px): a phone gets its own layout at about 1:1 scale rather than the wide one shrunk, so
its text stays at 11 px and more.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from validator.science.frontier import Point, frontier
from validator.site.format import is_number

WIDTH, HEIGHT = 640, 340
NARROW_WIDTH, NARROW_HEIGHT = 340, 300  # fits a 390 px phone's column (370 px) at a scale of 1 or more
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 44
TICKS = 5
# a GPU's colour on the comparison chart, in catalog order (colour-blind-safe Okabe-Ito hues)
# engines of one GPU for which every shown subset gets its own frontier line (2^n - 1 lines); past it,
# hiding an engine hides the GPU's line rather than drawing a frontier that no longer holds
MAX_ENGINE_SUBSETS = 4
GPU_COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")


def _ticks(values: list[float], ticks: int = TICKS) -> list[float]:
    """Round ticks from 0 past the largest value, 1, 2, 2.5 or 5 times a power of ten apart (3 to 5 steps):
    throughput and interactivity start at zero."""
    top = max(values) if values and max(values) > 0 else 1.0
    raw = top / (ticks - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return [round(i * step, 9) for i in range(int(math.ceil(top / step)) + 1)]


def _frame(xs: list[float], ys: list[float], width: int, height: int) -> dict[str, Any]:
    """Axes for values xs, ys on a chart `width` × `height`, with the functions that place a value."""
    narrow = width < WIDTH
    left = 48 if narrow else LEFT
    xt, yt = _ticks(xs, 4 if narrow else TICKS), _ticks(ys, 4 if narrow else TICKS)
    x0, x1, y0, y1 = xt[0], xt[-1], yt[0], yt[-1]
    pw, ph = width - left - RIGHT, height - TOP - BOTTOM

    def px(x: float) -> float:
        return round(left + (x - x0) / (x1 - x0) * pw, 1)

    def py(y: float) -> float:
        return round(TOP + (y1 - y) / (y1 - y0) * ph, 1)

    return {
        "width": width,
        "height": height,
        "left": left,
        "top": TOP,
        "right": width - RIGHT,
        "bottom": height - BOTTOM,
        "xticks": [(px(x), f"{x:,g}") for x in xt],
        "yticks": [(py(y), f"{y:,g}") for y in yt],
        "px": px,
        "py": py,
    }


def _public(frame: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in frame.items() if k not in ("px", "py")}


def frontier_chart(group: Mapping[str, Any], width: int = WIDTH, height: int = HEIGHT) -> dict[str, Any]:
    """Coordinates of every point (verified filled, apart hollow), the frontier's line and the axes."""
    points = list(group.get("points") or []) + list(group.get("apart") or [])
    frame = _frame(
        [float(p["interactivity"]) for p in points], [float(p["tok_s_per_gpu"]) for p in points], width, height
    )
    px, py = frame["px"], frame["py"]

    def placed(p: Mapping[str, Any], verified: bool) -> dict[str, Any]:
        return {**p, "cx": px(float(p["interactivity"])), "cy": py(float(p["tok_s_per_gpu"])), "verified": verified}

    front = [p for p in group.get("points") or [] if p.get("on_frontier")]
    line = " ".join(f"{px(float(p['interactivity']))},{py(float(p['tok_s_per_gpu']))}" for p in front)
    return {
        **_public(frame),
        "points": [placed(p, True) for p in group.get("points") or []]
        + [placed(p, False) for p in group.get("apart") or []],
        "frontier": line,
    }


def comparison_chart(
    groups: Sequence[Mapping[str, Any]],
    measure: str,
    engines: Mapping[str, str],
    width: int = WIDTH,
    height: int = HEIGHT,
) -> dict[str, Any] | None:
    """Every GPU of one model × workload on one chart: each group (one GPU) its colour, its points at
    (interactivity, `measure`) — "tok_s_per_gpu" or "cost_per_1m" — and its frontier's line.
    `engines` maps a recipe to its engine (the legend toggles by it). None when no point has `measure`."""
    series = []
    for i, g in enumerate(groups):
        pts = [(p, True) for p in g.get("points") or []] + [(p, False) for p in g.get("apart") or []]
        pts = [(p, v) for p, v in pts if isinstance(p.get(measure), (int, float)) and p.get("interactivity")]
        series.append((i, g, pts))
    every = [p for _, _, pts in series for p, _ in pts]
    if not every:
        return None
    frame = _frame([float(p["interactivity"]) for p in every], [float(p[measure]) for p in every], width, height)
    px, py = frame["px"], frame["py"]
    out = []
    for i, g, pts in series:
        colour = g.get("colour") or GPU_COLOURS[i % len(GPU_COLOURS)]
        placed = [
            {
                **p,
                "cx": px(float(p["interactivity"])),
                "cy": py(float(p[measure])),
                "verified": verified,
                "engine": engines.get(str(p.get("recipe")), ""),
            }
            for p, verified in pts
        ]
        out.append(
            {
                "gpu": g["gpu"],
                "colour": colour,
                "points": placed,
                "frontiers": _frontiers_by_engines(placed),
            }
        )
    return {**_public(frame), "series": out, "measure": measure}


def _frontiers_by_engines(placed: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One frontier line per non-empty set of this GPU's engines: the frontier (science.frontier, the
    boards' own rule) of the verified points of those engines. The legend shows the line of exactly the
    engines left visible, so hiding an engine never leaves a line drawn through points that are hidden,
    and the line shown is the frontier of what is shown. Each line: {"engines": "a b", "points": "x,y …"}."""
    verified = [q for q in placed if q["verified"]]
    # "-" stands for a point with no engine named: no legend button hides it
    engines = sorted({str(q.get("engine") or "-") for q in verified})
    if len(engines) > MAX_ENGINE_SUBSETS:
        subsets: list[tuple[str, ...]] = [tuple(engines)]
    else:
        subsets = [c for n in range(1, len(engines) + 1) for c in combinations(engines, n)]
    lines = []
    for subset in subsets:
        members = [
            Point(float(q["interactivity"]), float(q["tok_s_per_gpu"]), q)
            for q in verified
            if str(q.get("engine") or "-") in subset and is_number(q.get("tok_s_per_gpu"))
        ]
        front = sorted((p.item for p in frontier(members)), key=lambda q: (q["cx"], q["cy"]))
        if front:
            lines.append(
                {
                    "engines": " ".join(subset),
                    "all": " ".join(engines),
                    "points": " ".join(f"{q['cx']},{q['cy']}" for q in front),
                }
            )
    return lines
