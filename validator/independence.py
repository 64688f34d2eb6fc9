"""When two run files are one measurement: the same raw samples, or a rescaled, offset or reordered copy.

A measurement's timings are never reproduced exactly: two real runs of the same recipe differ in
every step time and every request latency. So a run is reduced, while its samples are in memory,
to a fingerprint of its timing columns (training `time_s`; inference `ttft_ms` and `e2e_ms`):

  exact     SHA-256 of the samples as a multiset (sorted canonical JSON): identical samples in any order
  columns   per timing column with at least 3 distinct values: the sample count and 65 quantiles of
            the sorted column after the affine normalisation (x - min) / (max - min)

Sorting removes the order; the normalisation removes any constant scale a > 0 and offset b
(a*x + b has the same normalised quantiles). Two runs are one measurement when their exact hashes
are equal, or when every timing column of both has the same count and its normalised quantiles
agree within 1e-6 (a float rescale leaves ~1e-15; two real measurements differ by far more).
Step counts, token counts and losses are left out: a deterministic recipe reproduces them.

Comparing every pair of runs would be quadratic, so runs are grouped by `buckets`: the sample count
and cells of 1e-3 of three normalised quantiles of the first timing column. A run near a cell's edge
(within the tolerance) is also put in the neighbouring cell, so two runs within the tolerance always
share a bucket — the grouping never misses a copy, and the same keys tie a pull request's new run to
the runs it could copy (validator/pr/neighbourhood.py).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import operator
from typing import Any, Sequence

import orjson

TIMING_COLUMNS = {"training": ("time_s",), "inference": ("ttft_ms", "e2e_ms")}
QUANTILES = 64
TOLERANCE = 1e-6
CELL = 1e-3  # bucket width on a normalised quantile
KEY_QUANTILES = (16, 32, 48)  # of QUANTILES: the quartiles

Fingerprint = tuple[Any, ...]  # ("exact", hex), then (column, count, quantiles) per informative column


def _column_print(values: Sequence[float]) -> tuple[int, tuple[float, ...]] | None:
    ordered = sorted(values)
    low, high = float(ordered[0]), float(ordered[-1])
    if high <= low or len(set(ordered)) < 3:
        return None  # a constant or two-valued column says nothing about where it came from
    span, last = high - low, len(ordered) - 1
    return len(ordered), tuple((float(ordered[round(i * last / QUANTILES)]) - low) / span
                               for i in range(QUANTILES + 1))


def _sample_rows(samples: Sequence[Any]) -> list[bytes]:
    """Each sample as JSON bytes with sorted keys (its braces left off), in list order.

    One orjson call for the whole list, cut at the separators between samples: ~6x faster than a
    call per sample. Exact only when every sample is a flat object (then the list has exactly
    len - 1 `},{`); anything else (a nested object, a string holding `},{`) takes a call per sample.
    """
    try:
        whole = orjson.dumps(samples, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits, which JSON allows
        return [json.dumps(s, sort_keys=True, separators=(",", ":")).encode() for s in samples]
    if set(map(type, samples)) == {dict} and whole.count(b"},{") == len(samples) - 1:
        return whole[2:-2].split(b"},{")
    return [orjson.dumps(s, option=orjson.OPT_SORT_KEYS)[1:-1] if type(s) is dict
            else b"\0" + orjson.dumps(s) for s in samples]


def sample_fingerprint(kind: str, samples: Sequence[Any]) -> Fingerprint:
    """The fingerprint of a schema-valid samples list (empty tuple for no samples)."""
    if not samples:
        return ()
    exact = hashlib.sha256(b"\n".join(sorted(_sample_rows(samples)))).hexdigest()
    out: list[Any] = [("exact", exact)]
    for column in TIMING_COLUMNS.get(kind, ()):
        try:  # C-level column read; the samples passed the schema, so this is the exception, not the rule
            values = list(map(operator.itemgetter(column), samples))
        except (KeyError, TypeError):
            continue
        if set(map(type, values)) <= {int, float}:
            found = _column_print(values)
            if found is not None:
                out.append((column, *found))
    return tuple(out)


def _cells(value: float) -> list[int]:
    """The cell of value, and the neighbouring one when value is within the tolerance of their edge."""
    cell = math.floor(value / CELL)
    cells = [cell]
    if value - cell * CELL <= TOLERANCE:
        cells.append(cell - 1)
    if (cell + 1) * CELL - value <= TOLERANCE:
        cells.append(cell + 1)
    return sorted(cells)


def buckets(fingerprint: Fingerprint) -> tuple[str, ...]:
    """Keys that a run shares with every run it could be one measurement with (module docstring)."""
    if not fingerprint:
        return ()
    if len(fingerprint) == 1:  # no informative timing column: only an identical copy can match
        return ("exact:" + str(fingerprint[0][1]),)
    column, count, quantiles = fingerprint[1]
    per_quantile = [_cells(quantiles[i]) for i in KEY_QUANTILES]
    return tuple(f"{column}:{count}:" + ",".join(map(str, combo)) for combo in itertools.product(*per_quantile))


def same_measurement(a: Fingerprint, b: Fingerprint) -> str | None:
    """How b copies a ("identical samples", "rescaled, offset or reordered copy"), or None."""
    if not a or not b:
        return None
    if a[0] == b[0]:
        return "identical samples"
    cols_a, cols_b = {c[0]: c for c in a[1:]}, {c[0]: c for c in b[1:]}
    if not cols_a or set(cols_a) != set(cols_b):
        return None
    for name, (_, n, qa) in cols_a.items():
        _, m, qb = cols_b[name]
        if n != m or max(abs(x - y) for x, y in zip(qa, qb)) > TOLERANCE:
            return None
    return "the same timings rescaled, offset or reordered"
