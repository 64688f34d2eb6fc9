"""Number and chart formatting for the static site: fixed decimals, so the same boards give the same bytes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from validator.quality.status import STATUS_WORDS


def is_number(value: Any) -> bool:
    """A JSON number (a bool is not one, though Python says it is an int)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _formatted(value: Any, render: Callable[[Any], str], missing: str = "–") -> str:
    """render(value) for a number, `missing` for None, anything else as text (a boards file from elsewhere)."""
    if value is None:
        return missing
    return render(value) if is_number(value) else str(value)


def num(value: Any, decimals: int = 1) -> str:
    """1480.4 -> '1,480.4' (seed 000's style); None -> an en dash; anything else as text."""
    return _formatted(value, lambda v: f"{v:,.{decimals}f}")


def usd(value: Any) -> str:
    """1.29 -> '$1.29'."""
    return _formatted(value, lambda v: f"${v:,.2f}")


def pct(fraction: Any) -> str:
    """An MFU fraction as a percentage: 0.4123 -> '41.2%'."""
    return _formatted(fraction, lambda v: f"{v * 100:.1f}%")


def gain(value: Any) -> str:
    """Seed 000 prints the gain over the starting point as a whole percentage: '+48%'."""
    return _formatted(value, lambda v: f"{v:+.0f}%", missing="")


def sort_key(value: Any) -> str:
    """The data-sort attribute: numbers in full precision, missing values empty (sorted last)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return repr(value)
    return str(value)


def quality_status(status: Any) -> str:
    """A status as the short word of the board cell ("no-reference" -> "No reference")."""
    return STATUS_WORDS[status][0] if isinstance(status, str) and status in STATUS_WORDS else _text(status)


def quality_meaning(status: Any) -> str:
    """A status in plain words for a reader who does not know the statuses (the wanted list)."""
    return STATUS_WORDS[status][1] if isinstance(status, str) and status in STATUS_WORDS else _text(status)


def quality(value: Any) -> str:
    """A row's `quality` object as one short cell: the status word, then score and ratio when there are any.

    {"status": "verified", "score": 0.874, "ratio": 0.998, ...} -> "Verified · 0.874 · 99.8% of ref."
    Any other shape (a boards file from elsewhere) is shown as text.
    """
    if value is None:
        return ""
    if not isinstance(value, dict):
        return _text(value)
    parts = [quality_status(value.get("status"))] if value.get("status") is not None else []
    if is_number(value.get("score")):
        parts.append(f"{value['score']:.3f}")
    if is_number(value.get("ratio")):
        parts.append(f"{value['ratio'] * 100:.1f}% of ref.")
    return " · ".join(parts)


def quality_detail(value: Any) -> str:
    """The whole `quality` object in words: the board cell's hover text and the recipe page's figure."""
    if not isinstance(value, dict):
        return "" if value is None else _text(value)
    what = ", ".join(_text(value[k]) for k in ("task", "metric", "filter") if value.get(k) is not None)
    figures = []
    if value.get("score") is not None:
        figures.append(
            f"score {num(value['score'], 4)}"
            + (f" on {num(value['n'], 0)} documents" if value.get("n") is not None else "")
        )
    if value.get("reference") is not None:
        figures.append(f"reference {num(value['reference'], 4)}")
    if value.get("ratio") is not None:
        figures.append(f"ratio {num(value['ratio'], 4)}")
    status = value.get("status")
    said = f"{quality_status(status)}: {quality_meaning(status)}" if status is not None else ""
    return "; ".join(p for p in ((what + (": " if what and figures else "") + ", ".join(figures)), said) if p)


TIER_RANK = {"T3": 0, "T2": 1, "T1": 2, "T0": 3}  # verified first in every default order


def tier_rank(tier: Any) -> int:
    """A tier's place in a default order: T3, T2, T1, T0, then anything else."""
    return TIER_RANK.get(tier, len(TIER_RANK)) if isinstance(tier, str) else len(TIER_RANK)


def default_order(tier: Any, figure: Any = None, higher_is_better: bool = True) -> tuple[int, int, float]:
    """The sort key of every default order on the site: verified first (tier_rank), then the best
    figure first (a missing figure last); callers sort stably, so ties keep the order they came in
    (catalog order for model cards, newest first for the latest list, the boards' order for rows)."""
    if not is_number(figure):
        return tier_rank(tier), 1, 0.0
    return tier_rank(tier), 0, -float(figure) if higher_is_better else float(figure)


SHORT_REASON = 48  # characters of the one phrase a badge carries; the full reasons are one tap away


def short_reason(reasons: Any) -> str:
    """A tier's reasons as one short phrase: the first reason up to its first colon or parenthesis,
    cut at a word, and how many more there are ("needs verified quality (+1 more)")."""
    items = [str(r) for r in reasons] if isinstance(reasons, (list, tuple)) else ([str(reasons)] if reasons else [])
    if not items:
        return ""
    first = items[0]
    for stop in (":", " (", ";"):
        first = first.split(stop, 1)[0]
    if len(first) > SHORT_REASON:
        first = first[:SHORT_REASON].rsplit(" ", 1)[0] + "…"
    return first + (f" (+{len(items) - 1} more)" if len(items) > 1 else "")


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "; ".join(_text(v) for v in value)
    return str(value)


# A run's headline keys (run schemas' `summary`) as a reader says them, with the decimals shown.
HEADLINE_LABELS = {
    "tokens_per_s_per_gpu": ("Tokens/s/GPU", 1),
    "final_loss": ("Final loss", 4),
    "decode_tok_s": ("Decode tok/s", 2),
    "prefill_tok_s": ("Prefill tok/s", 2),
    "ttft_ms": ("TTFT ms", 2),
    "output_tok_s": ("Output tok/s, all streams", 2),
    "tpot_ms": ("Time per output token ms", 2),
}


def headline(value: Any) -> str:
    """A run's headline {key: figure} in words: {"decode_tok_s": 41.72} -> "Decode tok/s 41.72"."""
    if not isinstance(value, dict):
        return "" if value is None else _text(value)
    parts = []
    order = {key: i for i, key in enumerate(HEADLINE_LABELS)}  # the labels' order, then unknown keys by name
    for key, figure in sorted(value.items(), key=lambda kv: (order.get(str(kv[0]), len(order)), str(kv[0]))):
        label, decimals = HEADLINE_LABELS.get(str(key), (str(key).replace("_", " "), 2))
        parts.append(f"{label} {num(figure, decimals)}")
    return "; ".join(parts)


# --------------------------------------------------------------------------- loss chart (inline SVG)

WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 16, 40
MAX_POINTS = 240  # a curve is drawn from at most this many points (every k-th step), so pages stay small
PALETTE = ("#2563eb", "#d97706", "#059669", "#7c3aed", "#dc2626")


def _thin(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(points) <= MAX_POINTS:
        return list(points)
    k = -(-len(points) // MAX_POINTS)
    kept = list(points[::k])
    if kept[-1] != points[-1]:
        kept.append(points[-1])
    return kept


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def loss_chart(
    curves: Sequence[tuple[str, Sequence[tuple[float, float]]]], reference: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Geometry for the loss-curve SVG: each run's (step, loss) polyline, the reference and its band.

    `curves` hold finite losses only; `reference` is the workload's convergence block ({points,
    tolerance, tolerance_kind, window}) or None.
    """
    runs = [(label, _thin(pts)) for label, pts in curves]
    ref_pts = [(float(s), float(v)) for s, v in (reference or {}).get("points", [])]
    band: list[tuple[float, float, float]] = []
    if ref_pts and reference and reference.get("tolerance") is not None:
        tol = float(reference["tolerance"])
        rel = reference.get("tolerance_kind", "relative") == "relative"
        band = [(s, v - (v * tol if rel else tol), v + (v * tol if rel else tol)) for s, v in ref_pts]
    xs = [s for _, pts in runs for s, _ in pts] + [s for s, _ in ref_pts]
    ys = [v for _, pts in runs for _, v in pts] + [v for _, v in ref_pts] + [b for _, lo, hi in band for b in (lo, hi)]
    if not xs:
        return {}
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y0, y1 = y0 - 0.5, y1 + 0.5
    pad = (y1 - y0) * 0.05
    y0, y1 = y0 - pad, y1 + pad
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    sx, sy = pw / (x1 - x0), ph / (y1 - y0)

    def px(x: float) -> str:
        return f"{LEFT + (x - x0) * sx:.1f}"

    def py(y: float) -> str:
        return f"{TOP + (y1 - y) * sy:.1f}"

    def line(pts: Sequence[tuple[float, float]]) -> str:
        return " ".join([f"{LEFT + (s - x0) * sx:.1f},{TOP + (y1 - v) * sy:.1f}" for s, v in pts])

    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "top": TOP,
        "right": WIDTH - RIGHT,
        "bottom": HEIGHT - BOTTOM,
        "xticks": [(px(t), f"{t:,.0f}") for t in _ticks(x0, x1)],
        "yticks": [(py(t), f"{t:.3f}") for t in _ticks(y0, y1)],
        "runs": [
            {"label": label, "points": line(pts), "color": PALETTE[i % len(PALETTE)], "n": len(pts)}
            for i, (label, pts) in enumerate(runs)
        ],
        "reference": line(ref_pts) if ref_pts else "",
        "band": (line([(s, hi) for s, _, hi in band]) + " " + line([(s, lo) for s, lo, _ in reversed(band)]))
        if band
        else "",
    }
