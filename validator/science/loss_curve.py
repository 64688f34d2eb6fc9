"""The convergence check: does a training run's loss curve follow the workload's reference?

Rule (docs/convergence.md), applied to the run's (step, loss) samples and the workload's
`convergence` block, in this order (the first failure is the result):
  1. every logged loss, in or out of the window, is finite (no NaN/Inf);
  2. the reference curve covers the window and the run logs every step of the window;
  3. at every window step the run's loss, smoothed by a trailing mean of the last
     `smoothing_steps` logged steps, is within `tolerance` of the reference smoothed the same way:
     the trailing mean of the reference's losses (linearly interpolated between its points) at
     those same steps, so a run is never held to a raw curve it is averaged against, and the
     reference run passes against itself with a gap of 0 (relative: |run - ref| / ref, absolute:
     |run - ref|); two-sided, since a loss far *below* the reference means a different objective or data;
  4. the loss decreases: the mean of the window's last tenth (rounded up) of raw losses is
     below the mean of its first tenth.
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

from validator.models import Convergence


@dataclass(frozen=True)
class ConvergenceResult:
    ok: bool
    reason: str = ""
    step: int | None = None  # failing step; on a pass, the step of the largest gap
    gap: float | None = None  # the gap there, in the tolerance's kind (relative or absolute)
    reference_problem: bool = False  # the workload's reference, not the run, is at fault


class _Curve:
    """A reference curve sorted once, read at any step by bisection (a per-step reference of a
    long run has thousands of points; each window step reads k of them)."""

    def __init__(self, reference: Sequence[tuple[int, float]]) -> None:
        self.points = sorted(reference)
        self.steps = [step for step, _ in self.points]

    def at(self, step: int) -> float:
        """Linear between the points around `step`; a point's own step gives its loss exactly, so a
        run compared with the curve it was recorded as reads its own losses back."""
        points = self.points
        if step <= points[0][0]:
            return points[0][1]
        if step >= points[-1][0]:
            return points[-1][1]
        i = bisect_left(self.steps, step)
        s1, l1 = points[i]
        if s1 == step:
            return l1
        s0, l0 = points[i - 1]
        return l0 + (l1 - l0) * (step - s0) / (s1 - s0)


def _reference_problem(spec: Convergence) -> str | None:
    points = sorted((p.step, p.loss) for p in spec.reference)
    start, end = spec.window.start, spec.window.end
    if not points:
        return "the reference curve has no points"
    bad = next(((step, loss) for step, loss in points if not math.isfinite(loss)), None)
    if bad is not None:  # `nan > tolerance` is False: a NaN reference would pass every run
        return f"the reference's loss is {bad[1]} at step {bad[0]}; a reference's losses must be finite"
    if start > end:
        return f"the window starts at step {start}, after it ends at step {end}"
    if points[0][0] > start or points[-1][0] < end:
        return f"the reference curve covers steps {points[0][0]}..{points[-1][0]}, not the whole window {start}..{end}"
    if spec.tolerance_kind == "relative" and any(loss <= 0 for _, loss in points):
        return "a relative tolerance needs positive reference losses"
    return None


def _gap(value: float, ref: float, kind: str) -> float:
    return abs(value - ref) / ref if kind == "relative" else abs(value - ref)


def _trailing_means(series: Sequence[tuple[int, float]], k: int, lo: int, hi: int) -> dict[int, float]:
    """Step -> mean of the last k logged losses up to and including that step, for series[lo:hi]
    (only the evaluated window: a 1,000-step run with a 10-step window costs 10 means, not 1,000)."""
    out: dict[int, float] = {}
    for i in range(lo, hi):
        window = [loss for _, loss in series[max(0, i - k + 1) : i + 1]]
        out[series[i][0]] = math.fsum(window) / len(window)
    return out


def check_convergence(
    losses: Sequence[tuple[int, float]], spec: Convergence, skipped: frozenset[int] = frozenset()
) -> ConvergenceResult:
    """`skipped`: steps the fp16 loss scaler skipped (no update, no loss). They are not compared
    with the reference and do not count as missing from the window."""
    if skipped:
        return _check_with_skips(losses, spec, skipped)
    if not losses:
        return ConvergenceResult(False, "the run has no loss samples")
    # The whole series is scanned with C-level passes (map, set, all); a Python loop runs only to
    # name the first offending step, or over the evaluated window.
    series = losses if all(map(operator.le, losses, losses[1:])) else sorted(losses)
    steps = list(map(itemgetter(0), series))
    if len(set(steps)) != len(steps):
        step = next(step for step, nxt in zip(steps, steps[1:]) if step == nxt)
        return ConvergenceResult(False, f"step {step} is logged twice", step)
    if not all(map(math.isfinite, map(itemgetter(1), series))):
        step, loss = next((step, loss) for step, loss in series if not math.isfinite(loss))
        return ConvergenceResult(False, f"loss is {loss} at step {step}", step)
    problem = _reference_problem(spec)
    if problem:
        return ConvergenceResult(False, problem, reference_problem=True)
    start, end = spec.window.start, spec.window.end
    if steps[0] > start:
        return ConvergenceResult(
            False, f"the run starts at step {steps[0]}, after the window starts at step {start}", steps[0]
        )
    if steps[-1] < end:
        return ConvergenceResult(
            False, f"the run stops at step {steps[-1]}, before the window ends at step {end}", steps[-1]
        )
    lo, hi = bisect_left(steps, start), bisect_right(steps, end)  # the window is series[lo:hi]
    if hi - lo != end - start + 1:  # distinct steps in [start, end]: all there iff as many as the range
        logged = set(steps[lo:hi])
        missing = next(s for s in range(start, end + 1) if s not in logged)
        return ConvergenceResult(False, f"the run logs no loss at step {missing}; the window needs every step", missing)
    curve = _Curve([(p.step, p.loss) for p in spec.reference])
    k = max(1, spec.smoothing_steps)
    smoothed = _trailing_means(series, k, lo, hi)
    # the reference on the same footing: read at the run's own logged steps and averaged over the same k
    reach = max(0, lo - k + 1)
    reference = [(step, curve.at(step)) for step, _ in series[reach:hi]]
    smoothed_reference = _trailing_means(reference, k, lo - reach, hi - reach)
    worst_step, worst_gap = start, -1.0
    for step in range(start, end + 1):
        ref = smoothed_reference[step]
        gap = _gap(smoothed[step], ref, spec.tolerance_kind)
        if gap > spec.tolerance:
            side = "above" if smoothed[step] > ref else "below"
            return ConvergenceResult(
                False,
                f"loss {smoothed[step]:.4f} is {side} the reference {ref:.4f} "
                f"at step {step} by {_format_gap(gap, spec)} "
                f"(tolerance {_format_gap(spec.tolerance, spec)}"
                + (f"; both averaged over the last {k} logged steps)" if k > 1 else ")"),
                step,
                gap,
            )
        if gap > worst_gap:
            worst_step, worst_gap = step, gap
    window = list(map(itemgetter(1), series[lo:hi]))
    part = max(1, math.ceil(len(window) / 10))
    head = math.fsum(window[:part]) / part
    tail = math.fsum(window[-part:]) / part
    if not tail < head:
        return ConvergenceResult(
            False,
            f"loss does not decrease over the window: mean of the first {part} "
            f"step(s) {head:.4f}, of the last {part} {tail:.4f}",
            end,
        )
    return ConvergenceResult(
        True,
        f"largest gap {_format_gap(worst_gap, spec)} at step {worst_step} "
        f"(tolerance {_format_gap(spec.tolerance, spec)})",
        worst_step,
        worst_gap,
    )


def _format_gap(gap: float, spec: Convergence) -> str:
    return f"{gap:.2%}" if spec.tolerance_kind == "relative" else f"{gap:.4f}"


def _check_with_skips(
    losses: Sequence[tuple[int, float]], spec: Convergence, skipped: frozenset[int]
) -> ConvergenceResult:
    """The check on the steps that updated the model: a skipped step inside the window is filled
    with the reference's own value (gap 0), so the window stays complete and only logged losses
    can fail it; in the smoothing and decrease test the filled value stands in for the missing one."""
    logged = {step for step, _ in losses}
    if not losses or logged <= skipped:
        return ConvergenceResult(False, "the run has no loss samples")
    curve = _Curve([(p.step, p.loss) for p in spec.reference])
    if _reference_problem(spec) is None:
        filled = list(losses) + [
            (step, curve.at(step))
            for step in skipped
            if spec.window.start <= step <= spec.window.end and step not in logged
        ]
    else:
        filled = list(losses)
    return check_convergence(sorted(filled), spec)
