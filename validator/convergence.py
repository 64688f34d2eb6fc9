"""The convergence check: does a training run's loss curve follow the workload's reference?

Rule (docs/convergence.md): every logged loss is finite; over the workload's evaluation window
the run's loss, smoothed by a trailing mean of `smoothing_steps`, stays within `tolerance` of the
reference curve (linearly interpolated between its points; relative or absolute); and the loss
decreases: the mean of the window's last tenth is below the mean of its first tenth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from validator.models import Convergence


@dataclass(frozen=True)
class ConvergenceResult:
    ok: bool
    reason: str = ""
    step: int | None = None
    gap: float | None = None


def reference_at(reference: Sequence[tuple[int, float]], step: int) -> float:
    points = sorted(reference)
    if step <= points[0][0]:
        return points[0][1]
    for (s0, l0), (s1, l1) in zip(points, points[1:]):
        if s0 <= step <= s1:
            return l0 + (l1 - l0) * (step - s0) / (s1 - s0) if s1 != s0 else l1
    return points[-1][1]


def check_convergence(losses: Sequence[tuple[int, float]], spec: Convergence) -> ConvergenceResult:
    if not losses:
        return ConvergenceResult(False, "the run has no loss samples")
    for step, loss in losses:
        if not math.isfinite(loss):
            return ConvergenceResult(False, f"loss is {loss} at step {step}", step)
    start, end = spec.window.start, spec.window.end
    window = [(s, l) for s, l in sorted(losses) if start <= s <= end]
    if not window or window[-1][0] < end:
        last = max(s for s, _ in losses)
        return ConvergenceResult(False, f"the run stops at step {last}, before the window ends at step {end}", last)
    reference = [(p.step, p.loss) for p in spec.reference]
    k = max(1, spec.smoothing_steps)
    for i, (step, _) in enumerate(window):
        smoothed = math.fsum(l for _, l in window[max(0, i - k + 1): i + 1]) / min(k, i + 1)
        ref = reference_at(reference, step)
        gap = abs(smoothed - ref) / ref if spec.tolerance_kind == "relative" else abs(smoothed - ref)
        if gap > spec.tolerance:
            return ConvergenceResult(False, f"loss {smoothed:.4f} vs reference {ref:.4f} at step {step}", step, gap)
    tenth = max(1, len(window) // 10)
    head = math.fsum(l for _, l in window[:tenth]) / tenth
    tail = math.fsum(l for _, l in window[-tenth:]) / tenth
    if not tail < head:
        return ConvergenceResult(False, f"loss does not decrease over the window ({head:.4f} -> {tail:.4f})",
                                 window[-1][0])
    return ConvergenceResult(True)
