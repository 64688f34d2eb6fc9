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
(tests/unit/test_independence.py checks both against the plain definition).

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
import statistics
from collections.abc import Sequence
from typing import Any

import orjson

from validator.science.samples import Columns

TIMING_COLUMNS = {"training": ("time_s",), "inference": ("ttft_ms", "e2e_ms")}
QUANTILES = 64
TOLERANCE = 1e-6
CELL = 1e-3  # bucket width on a normalised quantile
KEY_QUANTILES = (16, 32, 48)  # of QUANTILES: the quartiles

# ("exact", hex, or None where left out), then (column, count, quantiles) per informative column
Fingerprint = tuple[Any, ...]


def _column_print(
    values: Sequence[float], ordered: Sequence[float] | None = None
) -> tuple[int, tuple[float, ...]] | None:
    """`ordered`: the values sorted, when the caller has sorted them already."""
    if ordered is None:
        ordered = sorted(values)
    low, high = float(ordered[0]), float(ordered[-1])
    # at least 3 distinct values: one strictly between the lowest and the highest (found by bisection)
    if high <= low or bisect.bisect_right(ordered, ordered[0]) >= bisect.bisect_left(ordered, ordered[-1]):
        return None  # a constant or two-valued column says nothing about where it came from
    span, last = high - low, len(ordered) - 1
    return len(ordered), tuple((float(ordered[round(i * last / QUANTILES)]) - low) / span for i in range(QUANTILES + 1))


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
    return [
        orjson.dumps(s, option=orjson.OPT_SORT_KEYS)[1:-1] if type(s) is dict else b"\0" + orjson.dumps(s)
        for s in samples
    ]


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
    if (
        type(first) is not dict
        or not first
        or set(map(type, first)) != {str}
        or not columns.holds_exactly(tuple(first))
    ):
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


def sample_fingerprint(
    kind: str, samples: Sequence[Any], columns: Columns | None = None, exact: bool = True
) -> Fingerprint:
    """The fingerprint of a schema-valid samples list (empty tuple for no samples).

    `columns`, of these samples, when the caller has read them already (validator/science/samples.py).
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
    near = _near_print(kind, columns)
    return (("exact", hashed), *prints, *((near,) if near is not None else ()))


# ---- near copies: shared samples, and timings that agree sample by sample (docs/metrics.md) ----

# What identifies a sample across two runs of one workload (equal in honest re-runs, so it aligns
# them and never counts as shared evidence itself): a training step's number; an inference
# request's token counts, with its occurrence among requests of equal counts in list order.
ALIGN_COLUMNS = {"training": ("step",), "inference": ("prompt_tokens", "output_tokens")}
SKETCH = 64  # samples kept per sketch (all of them in a run this small)
SHARED_KEYS = 11  # lowest row hashes published as buckets: a copy with <= 10 added and <= 10 dropped shares one
MIN_DISTINCT = 8  # distinct timing rows a run needs before shared rows say anything
DISTINCT_SHARE = 0.5  # ... and at least this share of its samples distinct (coarse clocks repeat values)
SHARED_CONTAINMENT = 0.7  # a copy: this share of the smaller run's distinct timing rows is in the other
MIN_MATCHED = 8  # aligned samples both runs must have before their timings are compared one by one
# Calibrated on tests/testing/corpus.py (docs/metrics.md): the 75th percentile of |residual| / value
# after the affine fit is <= 0.085% for every forgery (jitter up to 0.1%) and >= 0.33% for every
# honest pair; the threshold sits between, ~2x from each.
AGREE_RELATIVE = 0.0017
AGREE_QUANTILE = 0.75
# median |residual| / the column's own median deviation: forgeries <= 0.15, re-runs ~1 (their noise
# is their own); a second guard for runs whose own noise is below 0.2%
AGREE_SPREAD = 0.3
SHAPE_BITS = 12  # order bits of aligned pairs that bucket near copies
SHAPE_AMBIGUOUS = 0.003  # a pair this close (relative) may flip under 0.1% jitter: both bits are emitted
SHAPE_MAX_AMBIGUOUS = 5  # at most 2**5 shape keys per run; beyond, one "flat" key
_ROW_SALT, _KEY_SALT = 0x6F7276, 0x616C6E  # mix CPython's numeric hashes, so the lowest are not the smallest values

# ("near", distinct timing rows, their lowest SKETCH hashes sorted, aligned samples ((key, timings), ...)
#  by key, (first alignment key, first timing of the samples the shape bits compare))
NearPrint = tuple[Any, ...]


def _numeric(columns: Columns, names: Sequence[str]) -> list[list[Any]] | None:
    found = []
    for name in names:
        values = columns.get(name)
        if values is None or not columns.types(name) or not columns.types(name) <= {int, float}:
            return None
        found.append(values)
    return found


def _near_print(kind: str, columns: Columns) -> NearPrint | None:
    """The sketch a near copy is recognised by, from the timing columns (None without them).

    Row hashes are CPython's hash of a tuple of numbers: numeric hashes are defined by the language
    and tuple hashing is fixed since 3.8 (64-bit), and one C-level pass is ~20x cheaper than SHA-256.
    """
    timing = _numeric(columns, TIMING_COLUMNS.get(kind, ()))
    align = _numeric(columns, ALIGN_COLUMNS.get(kind, ()))
    if not timing or align is None:  # no timing column: nothing to sketch (and zip below would never end)
        return None
    rows = set(map(hash, zip(itertools.repeat(_ROW_SALT), *timing)))
    shared = tuple(sorted(rows)[:SKETCH])  # one C sort beats heapq.nsmallest's Python-level heap here
    keys = list(map(hash, zip(itertools.repeat(_KEY_SALT), *align)))
    distinct = set(keys)
    chosen = set(sorted(distinct)[:SKETCH])
    seen: dict[int, int] = {}
    picked = []  # (key, occurrence, timings)
    for i in itertools.compress(range(len(keys)), map(chosen.__contains__, keys)):
        occurrence = seen[keys[i]] = seen.get(keys[i], -1) + 1
        picked.append((keys[i], occurrence, tuple(float(column[i]) for column in timing)))
    aligned = sorted((hash((key, occurrence)), values) for key, occurrence, values in picked)[:SKETCH]
    # The shape bits read samples in (occurrence, key) order: every first occurrence before any
    # repeat, so a repeated step or request moves no bit, and a fixed-length workload's requests
    # (one key) in list order, so appended ones come last.
    ordered = sorted(picked, key=lambda p: (p[1], p[0]))
    shape = (ordered[0][0] if ordered else 0, tuple(p[2][0] for p in ordered[: 2 * SHAPE_BITS]), len(ordered))
    return ("near", len(rows), shared, tuple(aligned), shape)


def can_tell_a_copy(fingerprint: Fingerprint) -> bool:
    """Whether a run has samples enough for same_measurement to recognise a near copy of it: at least
    MIN_DISTINCT distinct timing rows. Below that (llama-bench's five repetitions, a handful of requests),
    one appended sample or 1e-5 jitter hides a copy, so such a run cannot prove it is independent."""
    near = _near_of(fingerprint)
    return near is not None and near[1] >= MIN_DISTINCT


def _near_of(fingerprint: Fingerprint) -> NearPrint | None:
    last = fingerprint[-1] if fingerprint else None
    return last if last is not None and last[0] == "near" else None


def _prints_of(fingerprint: Fingerprint) -> dict[str, tuple[Any, ...]]:
    """The per-column quantile prints, by column."""
    return {entry[0]: entry for entry in fingerprint[1:] if entry[0] != "near"}


def shared_share(a: NearPrint, b: NearPrint) -> float | None:
    """The estimated share of the smaller run's distinct timing rows that the other run holds too;
    None when either run's rows are too few or too coarse to say (MIN_DISTINCT, DISTINCT_SHARE).

    Bottom-k estimation: the SKETCH lowest hashes of the union are read off both sketches; the share
    of them in both estimates the Jaccard index J, and |A ∩ B| = J (|A| + |B|) / (1 + J). Exact when
    both runs have at most SKETCH distinct rows.
    """
    (_, na, ha, aligned_a, _), (_, nb, hb, aligned_b, _) = a, b
    for n, aligned in ((na, aligned_a), (nb, aligned_b)):
        samples = max(len(aligned), 1)  # aligned holds min(samples, SKETCH): a floor for the sample count
        if n < MIN_DISTINCT or (samples < SKETCH and n < DISTINCT_SHARE * samples):
            return None
    set_a, set_b = set(ha), set(hb)
    if set_a.isdisjoint(set_b):  # most pairs: no row of either sketch in the other, so none in both (J = 0)
        return 0.0
    union = sorted(set_a | set_b)[:SKETCH]  # what heapq.nsmallest gives; one C sort of <= 2 * SKETCH is cheaper
    both = sum(1 for h in union if h in set_a and h in set_b)
    jaccard = both / len(union)
    return jaccard * (na + nb) / (1 + jaccard) / min(na, nb)


def timing_agreement(a: NearPrint, b: NearPrint) -> float | None:
    """How closely b's timings follow a's sample by sample, after the best affine map a*x + b per
    column: the largest relative residual (its AGREE_QUANTILE) over the timing columns, when every
    column also agrees far closer than its own spread (AGREE_SPREAD); None when they do not agree
    so, or when fewer than MIN_MATCHED samples align.

    A re-measurement's residual is its own noise: relative to the value it is what the tool's
    repeat spread is (>= ~0.3%), relative to the column's spread ~1 where the noise is all the
    variation there is (a step-time column). A copy's residual is the jitter put on it.
    """
    by_key = dict(a[3])
    matched = [(by_key[key], values) for key, values in b[3] if key in by_key]
    if len(matched) < MIN_MATCHED:
        return None
    worst, informative = 0.0, False
    for column in range(len(matched[0][0])):
        xs = [x[column] for x, _ in matched]
        ys = [y[column] for _, y in matched]
        mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
        var_x = sum([(x - mean_x) ** 2 for x in xs])  # lists, not generators: the same sums, sooner
        slope = sum([(x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)]) / var_x if var_x > 0 else 0.0
        residuals = [abs(y - (mean_y + slope * (x - mean_x))) for x, y in zip(xs, ys)]
        if any(y <= 0 for y in ys):
            return None
        ranked = sorted([r / y for r, y in zip(residuals, ys)])
        relative = ranked[int(AGREE_QUANTILE * (len(ranked) - 1))]
        if relative > AGREE_RELATIVE:  # nearly every pair: the spread's two medians are not needed
            return None
        spread = statistics.median(abs(y - statistics.median(ys)) for y in ys)
        if spread > 0:
            if statistics.median(residuals) > AGREE_SPREAD * spread:
                return None
            informative = True
        worst = max(worst, relative)
    return worst if informative else None


def _cells(value: float) -> list[int]:
    """The cell of value, and the neighbouring one when value is within the tolerance of their edge."""
    cell = math.floor(value / CELL)
    cells = [cell]
    if value - cell * CELL <= TOLERANCE:
        cells.append(cell - 1)
    if (cell + 1) * CELL - value <= TOLERANCE:
        cells.append(cell + 1)
    return sorted(cells)


def _shape_keys(near: NearPrint) -> list[str]:
    """Keys a run shares with any copy whose timings follow its own within 0.1% (module docstring).

    Bit j says whether the shape samples 2j and 2j+1 (_near_print) rise or fall, under the run's
    first alignment key: an affine map with a > 0 keeps every bit, and jitter can flip only a pair
    closer than SHAPE_AMBIGUOUS, for which both bits are emitted.
    """
    first, values, count = near[4]
    anchor = format(first & 0xFFFFFFFFFFFF, "x")
    keys = []
    # 12 bits from 24 samples; a small run (< 24 + 10) also 4 bits from 8, so a copy with up to 10
    # samples more or fewer always shares one width with its original
    for bits, needed, below in ((SHAPE_BITS, 2 * SHAPE_BITS, math.inf), (4, 8, 2 * SHAPE_BITS + 10)):
        if not needed <= count < below:
            continue
        choices: list[tuple[str, ...]] = []
        for j in range(bits):
            x, y = values[2 * j], values[2 * j + 1]
            if abs(x - y) <= SHAPE_AMBIGUOUS * max(abs(x), abs(y)):
                choices.append(("0", "1"))
            else:
                choices.append(("1",) if y > x else ("0",))
        ambiguous = sum(len(c) > 1 for c in choices)
        if ambiguous > SHAPE_MAX_AMBIGUOUS:  # timings that barely vary: one key for all such runs
            keys.append(f"n{bits}:{anchor}:flat")
        else:
            keys += [f"n{bits}:{anchor}:" + "".join(b) for b in itertools.product(*choices)]
    return keys


def buckets(fingerprint: Fingerprint) -> tuple[str, ...]:
    """Keys that a run shares with every run it could be one measurement with (module docstring)."""
    if not fingerprint:
        return ()
    keys: list[str] = []
    prints = list(_prints_of(fingerprint).values())
    if not prints:  # no informative timing column: an identical copy matches by its exact hash
        keys.append("exact:" + str(fingerprint[0][1]))
    else:
        column, count, quantiles = prints[0]
        per_quantile = [_cells(quantiles[i]) for i in KEY_QUANTILES]
        keys += [f"{column}:{count}:" + ",".join(map(str, combo)) for combo in itertools.product(*per_quantile)]
    near = _near_of(fingerprint)
    if near is not None:
        if near[1] >= MIN_DISTINCT:  # below, shared rows say nothing (shared_share)
            keys += [f"x:{h & 0xFFFFFFFFFFFF:x}" for h in near[2][:SHARED_KEYS]]
        if prints:  # a constant or two-valued timing column has no shape to share
            keys += _shape_keys(near)
    return tuple(keys)


def same_measurement(a: Fingerprint, b: Fingerprint) -> str | None:
    """How b copies a (or a copies b), in words for ORV304, or None."""
    if not a or not b:
        return None
    # None: left out (sample_fingerprint's exact=False). Equal multisets have equal column prints,
    # so where the hash is left out the columns below give the same verdict in other words.
    if a[0][1] is not None and a[0] == b[0]:
        return "identical samples"
    cols_a, cols_b = _prints_of(a), _prints_of(b)
    if (
        cols_a
        and set(cols_a) == set(cols_b)
        and all(
            n == cols_b[name][1] and max(abs(x - y) for x, y in zip(qa, cols_b[name][2])) <= TOLERANCE
            for name, (_, n, qa) in cols_a.items()
        )
    ):
        return "the same timings rescaled, offset or reordered"
    near_a, near_b = _near_of(a), _near_of(b)
    if near_a is None or near_b is None:
        return None
    share = shared_share(near_a, near_b)
    if share is not None and share >= SHARED_CONTAINMENT:
        return (
            f"{min(share, 1.0):.0%} of the smaller run's samples are the other's, exactly "
            "(samples added, dropped, duplicated or reordered)"
        )
    agreement = timing_agreement(near_a, near_b)
    if agreement is not None:
        return (
            f"timings that follow the other's sample by sample within {agreement:.3%} after rescaling "
            "(re-measurements differ by far more)"
        )
    return None
