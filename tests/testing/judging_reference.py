"""ORV304's pair judging as it was before issue 55's second pass made it cheaper (main 77aa2a8), kept verbatim
as the reference tests/unit/test_judging_speed.py holds the fast ones to: `filtered_agreement` with its
`_filter_fit` (a numpy fit per column, the windows gathered per pair; with 8f49c82's cap of the noise at the
column's spread, a change of verdict the fast path carries too). `_in_order`'s reference is the walk as first
written (tests/testing/fingerprint_reference.py), which the live one equals pair for pair. The constants and the helpers nobody rewrote come from the live module."""

from __future__ import annotations

import math

from validator.science.independence import (
    AGREE_QUANTILE,
    AGREE_RELATIVE,
    AGREE_SPREAD,
    TIMING_COLUMNS,
    WINDOW,
    WINDOW_MATCHED,
    NearPrint,
    _below_noise,
    _noise_floor,
    _view,
)


def filtered_agreement(a: NearPrint, b: NearPrint) -> tuple[str, float] | None:
    """A timing column of one run that is a linear filter of the other's: a rescale, an offset, a
    moving average of neighbouring samples, or any mix of them (weights found by least squares).

    Null hypothesis: the runs are independent measurements of one workload, so each sample of y is
    the workload's shared, data-dependent part g plus the run's own noise e_y, independent of every
    sample of the other run. Then no filter of the other run's samples x[i-WINDOW..i+WINDOW] predicts
    e_y: the fit's residuals are at least e_y (corrected for the p fitted weights by sqrt(n/(n-p))),
    whose relative spread is at least the column's honest noise floor (docs/metrics.md). The
    threshold is AGREE_RELATIVE, a quarter or less of that floor, on the residuals' 75th
    percentile: for Gaussian noise at the floor that percentile is 0.67 floor, so an honest pair
    falls below a quarter floor only if its residuals' 75th percentile is ~2.7x below its
    expectation (> 2.5 standard errors at the fewest samples allowed, 16 for a window of 1; and never seen on the corpus: bench/copies.py).
    A copy's residual is its rounding or added jitter. AGREE_SPREAD guards columns whose spread is
    all noise, as in timing_agreement. Each column on its own (a copy may keep one column and
    reshuffle another, e.g. the TTFTs rescaled while the decode times of two halves are swapped),
    in both directions. Returns (column, relative residual) or None.
    """
    if len(a) <= 8 or len(b) <= 8 or a[5] != b[5]:
        return None
    names = TIMING_COLUMNS.get(a[5], ())
    limits = AGREE_RELATIVE.get(a[5], {})
    view_a, view_b = _view(a), _view(b)
    if len(view_a.keys & view_b.keys) < WINDOW_MATCHED * 4:  # too few for the narrowest window (2 * 1 + 2)
        return None
    for x, y in ((a, b), (b, a)):
        view_x = view_a if x is a else view_b
        for width in range(WINDOW, 0, -1):  # the widest window the aligned samples can support
            windows = view_x.windows[width]
            matched = [(windows[key], values) for key, values in y[3] if key in windows]
            if len(matched) >= WINDOW_MATCHED * (2 * width + 2):
                break
        else:
            continue
        for column, name in enumerate(names[: len(matched[0][1])]):
            limit = limits.get(name, 0.0)
            found = _filter_fit(
                [[row[column] for row in w] for w, _ in matched],
                [v[column] for _, v in matched],
                limit,
                _noise_floor(a, b, column),
            )
            if found is not None:
                return name, found
    return None


def _filter_fit(windows: list[list[float]], ys: list[float], limit: float, noise: float | None = None) -> float | None:
    """The 75th percentile of |residual| / y after the least-squares fit of ys on their windows
    (with an intercept), scaled by sqrt(n / (n - p)), when it is at most `limit` and the column can
    tell (its residuals far below its own spread, and below the runs' own relative `noise` where
    known: _noise_floor); None otherwise."""
    if min(ys) <= 0 or min(ys) == max(ys):
        return None
    import numpy  # only when two runs share a bucket: the gate's start-up does not pay for it (issue 55)

    design = numpy.column_stack([numpy.ones(len(ys)), numpy.asarray(windows, dtype=float)])
    target = numpy.asarray(ys, dtype=float)
    weights, *_ = numpy.linalg.lstsq(design, target, rcond=None)
    residuals = numpy.abs(target - design @ weights)
    n, p = design.shape
    ranked = numpy.sort(residuals / target)  # sorts, not numpy.quantile: ~10x less overhead at n <= 64
    # the order statistic at or above the 75th percentile: with as few as 16 samples the one below
    # it is nearer the 69th, which honest stable-cluster pairs reach ~0.2% of the time
    relative = float(ranked[math.ceil(AGREE_QUANTILE * (n - 1))]) * math.sqrt(n / (n - p))
    if relative > limit:
        return None
    middle = n // 2  # medians as the lower middle value: a sort each, as above
    centre = float(numpy.sort(target)[middle])
    spread = float(numpy.sort(numpy.abs(target - centre))[middle])
    if noise:
        noise = min(noise, spread / centre)  # (8f49c82's cap, as the live module: the noise at most the spread)
        spread = min(spread, noise * centre)
    if spread <= 0 or float(numpy.sort(residuals)[middle]) > AGREE_SPREAD * spread:
        return None
    if not _below_noise(residuals.tolist(), ys, p, noise):
        return None
    return relative
