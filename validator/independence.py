"""When two run files are one measurement: the same raw samples, or a rescaled, offset or reordered copy.

A measurement's timings are never reproduced exactly: two real runs of the same recipe differ in
every step time and every request latency. So a run is reduced, while its samples are in memory,
to a fingerprint of its timing columns (training `time_s`; inference `ttft_ms` and `e2e_ms`):

  exact     SHA-256 of the samples as a multiset: identical samples in any order (1 and 1.0, or 0.0
            and -0.0, count as different values, as they are written differently)
  columns   per timing column with at least 3 distinct values: the sample count and 65 quantiles of
            the sorted column after the affine normalisation (x - min) / (max - min)

Sorting removes the order; the normalisation removes any constant scale a > 0 and offset b
(a*x + b has the same normalised quantiles). Two runs are one measurement when their exact hashes
are equal, or when every timing column of both has the same count and its normalised quantiles
agree within 1e-6 (a float rescale leaves ~1e-15; two real measurements differ by far more).
Step counts, token counts and losses are left out: a deterministic recipe reproduces them.

The exact hash is of the multiset of whole samples, not of each column's multiset on its own:
per-column multisets would also match two real runs of a deterministic recipe whose coarse (say
two-valued) step times merely occur equally often at different steps, an error on an honest
reproduction. It is computed from the columns: the rows are put in lexicographic order (by a lead
column, `step` or `e2e_ms`, whose values rarely repeat and a training log has in order already;
whole rows only where lead values tie) and the columns so ordered are serialised once. Samples
for which that order is not decided by the multiset alone (two equal rows, mixed shapes, values
that do not compare) are hashed as sorted canonical JSON texts instead; which form applies is
itself a property of the multiset, so a reordered copy always meets its original in the same form
(tests/test_independence.py checks both against the plain definition).

Equal multisets have equal column prints, so the exact hash decides alone only for a run with no
informative timing column: elsewhere it changes how ORV304 words a copy, never whether it is one.
`orv boards` therefore leaves it out where a column is informative (sample_fingerprint's exact=False).

Comparing every pair of runs would be quadratic, so runs are grouped by `buckets`: the sample count
and cells of 1e-3 of three normalised quantiles of the first timing column. A run near a cell's edge
(within the tolerance) is also put in the neighbouring cell, so two runs within the tolerance always
share a bucket — the grouping never misses a copy, and the same keys tie a pull request's new run to
the runs it could copy (validator/pr/neighbourhood.py).
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import math
import operator
from typing import Any, Sequence

import orjson

from validator.samples import Columns

TIMING_COLUMNS = {"training": ("time_s",), "inference": ("ttft_ms", "e2e_ms")}
QUANTILES = 64
TOLERANCE = 1e-6
CELL = 1e-3  # bucket width on a normalised quantile
KEY_QUANTILES = (16, 32, 48)  # of QUANTILES: the quartiles

# ("exact", hex, or None where left out), then (column, count, quantiles) per informative column
Fingerprint = tuple[Any, ...]


def _column_print(values: Sequence[float], ordered: Sequence[float] | None = None
                  ) -> tuple[int, tuple[float, ...]] | None:
    """`ordered`: the values sorted, when the caller has sorted them already."""
    if ordered is None:
        ordered = sorted(values)
    low, high = float(ordered[0]), float(ordered[-1])
    # at least 3 distinct values: one strictly between the lowest and the highest (found by bisection)
    if high <= low or bisect.bisect_right(ordered, ordered[0]) >= bisect.bisect_left(ordered, ordered[-1]):
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


_SORTABLE = (frozenset({int}), frozenset({float}), frozenset({int, float}), frozenset({str}))
_SCALARS = frozenset({int, float, str, bool})  # not None: orjson writes NaN as null too
# The column that puts a kind's samples in order: one whose values rarely repeat (a training log
# is normally in strictly increasing step order already, so it needs no sort at all).
_LEAD = {"training": "step", "inference": "e2e_ms"}


def sorted_alone(kind: str) -> tuple[str, ...]:
    """The timing columns the fingerprint sorts on their own (the lead is sorted with its rows)."""
    return tuple(column for column in TIMING_COLUMNS.get(kind, ()) if column != _LEAD.get(kind))


def _row_order(values: list[list[Any]], lead_types: frozenset[type], comparable: bool) -> Sequence[int] | None:
    """Indices of the rows (one value from each column) in lexicographic order; None when that
    order is not the multiset's alone: two rows are equal (1 and 1.0 are equal but written
    differently) or a value compared is NaN (equal to nothing, itself included).

    Rows are sorted by the lead column (a homogeneous sort, no tuples); only the few runs of equal
    lead values are then ordered by whole rows.
    """
    head = values[0]
    try:
        if float in lead_types and any(map(math.isnan, head)):
            return None
    except OverflowError:  # an integer beyond the doubles: no NaN, but no cheap order either
        return None
    if all(map(operator.lt, head, itertools.islice(head, 1, None))):  # already in order (a training log)
        return range(len(head))
    order = sorted(range(len(head)), key=head.__getitem__)
    lead = operator.itemgetter(*order)(head)  # a tuple: len(head) >= 2 here
    ties = list(itertools.compress(range(len(lead) - 1), map(operator.eq, lead, itertools.islice(lead, 1, None))))
    if ties and not comparable:
        return None
    i = 0
    while i < len(ties):  # ties[i..j] consecutive: order[ties[i] .. ties[j] + 1] share one lead value
        j = i
        while j + 1 < len(ties) and ties[j + 1] == ties[j] + 1:
            j += 1
        first, last = ties[i], ties[j] + 2
        rows = sorted((tuple(column[k] for column in values), k) for k in order[first:last])
        if any(x != x for row, _ in rows for x in row) or any(a[0] == b[0] for a, b in zip(rows, rows[1:])):
            return None
        order[first:last] = [k for _, k in rows]
        i = j + 1
    return order


def _multiset_text(kind: str, samples: Sequence[Any], columns: Columns) -> tuple[bytes, str, list[Any]] | None:
    """The samples as bytes that only the multiset decides, with the lead column (sorted) and its
    key; None when the samples do not allow it cheaply.

    They do when every sample is a flat mapping with the same keys and scalar values, the lead
    column holds only numbers or only text, and no two rows are equal: then the columns with their
    rows in lexicographic order are the multiset's alone. Where lead values tie, whole rows decide,
    so every column must then hold only numbers or only text (a diverged run's "nan" losses beside
    numbers are fine while its steps are distinct). Every condition is a property of the multiset,
    never of the order the samples came in, so a reordered copy takes the same path as its
    original and gets the same bytes.
    """
    first = samples[0]
    if (type(first) is not dict or not first or set(map(type, first)) != {str}
            or not columns.holds_exactly(tuple(first))):
        return None
    lead = _LEAD.get(kind, "")
    if lead not in first:
        lead = min(first)
    keys = (lead, *sorted(k for k in first if k != lead))
    values = []
    for key in keys:
        column = columns.get(key)
        if column is None or not columns.types(key) <= _SCALARS:
            return None
        values.append(column)
    if columns.types(lead) not in _SORTABLE:
        return None
    # whole rows are compared only where lead values tie: then every column must have an order
    order = _row_order(values, columns.types(lead), all(columns.types(key) in _SORTABLE for key in keys))
    if order is None:
        return None
    if not isinstance(order, range) and len(order) > 1:
        permute = operator.itemgetter(*order)  # one C loop per column (a tuple of the values in order)
        values = [permute(column) for column in values]
    try:
        return b"columns\n" + orjson.dumps([keys, values]), lead, values[0]
    except orjson.JSONEncodeError:  # an integer beyond 64 bits
        return None


def _exact(kind: str, samples: Sequence[Any], columns: Columns) -> tuple[str, dict[str, list[Any]]]:
    """SHA-256 of the samples as a multiset, and the columns this sorted on the way ({key: sorted}).

    Usually `_multiset_text` (one orjson call; at most one sort); otherwise each sample as
    canonical JSON, the texts sorted. Each form starts differently, so two forms never share
    bytes, and which form a samples list takes depends on the multiset alone.
    """
    found = _multiset_text(kind, samples, columns)
    if found is None:
        return hashlib.sha256(b"\n".join(sorted(_sample_rows(samples)))).hexdigest(), {}
    text, lead, ordered = found
    return hashlib.sha256(text).hexdigest(), {lead: ordered}


def sample_fingerprint(kind: str, samples: Sequence[Any], columns: Columns | None = None,
                       exact: bool = True) -> Fingerprint:
    """The fingerprint of a schema-valid samples list (empty tuple for no samples).

    `columns`, of these samples, when the caller has read them already (validator/samples.py).
    `exact=False` leaves the exact hash out (None) wherever a timing column is informative: there
    whether two runs are one measurement does not depend on it (same_measurement), only how ORV304
    words it, so `orv boards` skips its ~10% of a run file's load. Without an informative column
    the exact hash is the only evidence and is always computed.
    """
    if not samples:
        return ()
    if columns is None or columns.samples is not samples:
        columns = Columns(samples)
    hashed, ordered = _exact(kind, samples, columns) if exact else (None, {})
    prints: list[Any] = []
    for column in TIMING_COLUMNS.get(kind, ()):
        values = columns.get(column)
        if values is not None and columns.types(column) <= {int, float}:
            # a column sorted above (the lead) or by the schema's fast path is not sorted again
            found = _column_print(values, ordered.get(column) or columns.ordered(column))
            if found is not None:
                prints.append((column, *found))
    if hashed is None and not prints:
        hashed, _ = _exact(kind, samples, columns)
    return (("exact", hashed), *prints)


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
    # None: left out (sample_fingerprint's exact=False). Equal multisets have equal column prints,
    # so where the hash is left out the columns below give the same verdict in other words.
    if a[0][1] is not None and a[0] == b[0]:
        return "identical samples"
    cols_a, cols_b = {c[0]: c for c in a[1:]}, {c[0]: c for c in b[1:]}
    if not cols_a or set(cols_a) != set(cols_b):
        return None
    for name, (_, n, qa) in cols_a.items():
        _, m, qb = cols_b[name]
        if n != m or max(abs(x - y) for x, y in zip(qa, qb)) > TOLERANCE:
            return None
    return "the same timings rescaled, offset or reordered"
