"""The copy fingerprint's helpers as they were before issue 55 made them cheaper (main a7e2f51),
kept verbatim as the reference tests/unit/test_fingerprint_speed.py holds the fast ones to: the
fingerprint's values must not change by a bit. The constants, the salts and the helpers nobody
rewrote come from the live module. Also `_in_order` as it was before it counted each diagonal once
(tests/unit/test_candidates.py holds the live one to it), and `_near_print` as it was before the second
pass (main 23db4bb: with the level nothing read, and candidates_reference's keys)."""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import math
import operator
import statistics
import zlib
from array import array
from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson

import tests.testing.candidates_reference as candidates_reference
from validator.science import candidates, independence
from validator.science.independence import (
    _KEY_SALT,
    _LEAD,
    _ROW_SALT,
    _SCALARS,
    _SORTABLE,
    _VALUE_SALT,
    FEW_OCCURRENCES,
    MIN_MATCHED,
    QUANTILES,
    SANE,
    SEQUENCE_CLOSE,
    SEQUENCE_RUN,
    SEQUENCE_SKIP,
    SKETCH,
    TIMING_COLUMNS,
    TOLERANCE,
    VALUE_SKETCH,
    WINDOW,
    Columns,
    ValuesPrint,
    _sample_rows,
)


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


def _column_print(
    values: Sequence[float], ordered: Sequence[float] | None = None, tolerance: float = TOLERANCE
) -> tuple[int, Sequence[float], float] | None:
    """`ordered`: the values sorted, when the caller has sorted them already; `tolerance`: how close
    two runs' normalised quantiles must be to be one measurement (distribution_tolerance)."""
    if ordered is None:
        ordered = sorted(values)
    low, high = float(ordered[0]), float(ordered[-1])
    # at least 3 distinct values: one strictly between the lowest and the highest (found by bisection)
    if high <= low or bisect.bisect_right(ordered, ordered[0]) >= bisect.bisect_left(ordered, ordered[-1]):
        return None  # a constant or two-valued column says nothing about where it came from
    span, last = high - low, len(ordered) - 1
    # an array, not a tuple of floats: a quarter of the memory for the whole registry's prints (issue 54)
    quantiles = array("d", ((float(ordered[round(i * last / QUANTILES)]) - low) / span for i in range(QUANTILES + 1)))
    return len(ordered), quantiles, tolerance


def _numeric(columns: Columns, names: Sequence[str]) -> list[list[Any]] | None:
    """The columns, when each holds numbers only, every one finite and of a size a clock can give
    (a schema-valid 1e308 or a non-finite value made the fits overflow: such a column says nothing)."""
    found = []
    for name in names:
        values = columns.get(name)
        if values is None or not columns.types(name) or not columns.types(name) <= {int, float}:
            return None
        ordered = columns.ordered(name)
        if not ordered or not (-SANE < ordered[0] and ordered[-1] < SANE) or not math.isfinite(sum(values)):
            return None  # (a NaN may sort anywhere; the sum finds it)
        found.append(values)
    return found


def _values_print(kind: str, columns: Columns) -> ValuesPrint | None:
    """Per numeric timing column: its distinct values' sketch and how often the run repeats itself."""
    found = []
    for name in TIMING_COLUMNS.get(kind, ()):
        values = columns.get(name)
        if values is None or not columns.types(name) or not columns.types(name) <= {int, float}:
            continue
        total = sum(values)  # one C pass: a NaN anywhere makes it NaN (an inf - inf too: then look)
        if total != total and any(v != v for v in values):  # NaN equals nothing: no value sharing to speak of
            continue
        counts = Counter(values)
        held = list(counts.values())
        repeats = (sum(map(operator.mul, held, held)) - len(values)) // 2  # pairs of equal values
        sketch = array("q", sorted(map(hash, zip(itertools.repeat(_VALUE_SALT), counts)))[:VALUE_SKETCH])
        found.append((name, len(values), len(counts), repeats, sketch))
    return ("values", tuple(found)) if found else None


# the level's constants, which went with it (main 23db4bb)
LEVEL_COLUMNS = {"training": ("time_s",), "inference": ("e2e_ms", "ttft_ms")}
LEVEL_RESCALE = 0.05
LEVEL_DROP = 0.5


def _level(kind: str, columns: Columns) -> tuple[float, float] | None:
    """(log of the median, margin) of the first informative column of LEVEL_COLUMNS: a fixed
    choice, so that a copy (whose dispersions differ a little) takes its level from the same column."""
    for name in LEVEL_COLUMNS.get(kind, ()):
        if columns.get(name) is None or not columns.types(name) <= {int, float}:
            continue
        ordered = columns.ordered(name)
        if not ordered or not (-SANE < ordered[0] < ordered[-1] < SANE):  # NaN, inf, constant: no level
            continue
        middle = statistics.median(ordered)
        if not middle > 0:
            continue
        relative = statistics.median(map(abs, map(operator.sub, ordered, itertools.repeat(middle)))) / middle
        return math.log(middle), LEVEL_RESCALE + LEVEL_DROP * relative
    return None


def _near_parts(timing: list[list[Any]], align: list[list[Any]]) -> tuple[Any, ...]:
    """_near_print's sketch above its own noise, as it was."""
    rows = set(map(hash, zip(itertools.repeat(_ROW_SALT), *timing)))
    shared = tuple(sorted(rows)[:SKETCH])  # one C sort beats heapq.nsmallest's Python-level heap here
    keys = list(map(hash, zip(itertools.repeat(_KEY_SALT), *align)))
    counts = Counter(keys)
    unique = [key for key, count in counts.items() if count == 1]
    # Samples whose key the run holds once align without regard to order; where enough do (a random
    # dataset's requests, a training log's steps), only they align, so that dropping one of two equal
    # requests cannot shift the other's occurrence. A fixed-length workload aligns by occurrence, and
    # so does a run most of whose keys repeat (a merge of two runs holds every step twice: its few
    # unpaired keys would be all it published, and its original would share none of them)
    by_order = len(unique) < max(MIN_MATCHED, len(counts) // 2)
    distinct = set(keys) if by_order else set(unique)
    chosen = set(sorted(distinct)[:SKETCH])
    seen: dict[int, int] = {}
    picked = []  # (key, occurrence, timings, index in list order)
    for i in itertools.compress(range(len(keys)), map(chosen.__contains__, keys)):
        occurrence = seen[keys[i]] = seen.get(keys[i], -1) + 1
        picked.append((keys[i], occurrence, tuple(float(column[i]) for column in timing), i))
    picked.sort(key=lambda entry: hash((entry[0], entry[1])))
    aligned = tuple((hash((key, occurrence)), values) for key, occurrence, values, _ in picked[:SKETCH])
    # each aligned sample's neighbours in list order (WINDOW either side; None at the run's ends),
    # so that filtered_agreement can fit a copy made of a moving average of the original
    count = len(keys)
    windows = tuple(
        tuple(
            tuple(float(column[k]) for column in timing) if 0 <= k < count else None
            for k in range(i - WINDOW, i + WINDOW + 1)
        )
        for _, _, _, i in picked[:SKETCH]
    )
    # aligned by occurrence (a fixed-length workload): the first samples in list order too, which
    # timing_agreement aligns in order with gaps, so one dropped request does not shift the rest
    sequence = tuple(zip(*(map(float, column[:SKETCH]) for column in timing))) if by_order else None
    # ... and its samples sorted by their timings, the SKETCH fastest: a copy reordered *and* thinned keeps
    # them in the same order with gaps, while another run's come with other second columns
    ranked = [list(map(float, row)) for row in sorted(zip(*timing))[:SKETCH]] if by_order else None
    # keys held a few times each (a merge of two runs holds every step twice): every occurrence,
    # so timing_agreement can pair each sample with the nearest of the other run's under its key
    few = None
    if len(counts) >= MIN_MATCHED and max(counts.values()) <= FEW_OCCURRENCES:
        wanted = set(sorted(counts)[:SKETCH])
        grouped: dict[int, list[tuple[float, ...]]] = {}
        for i in itertools.compress(range(len(keys)), map(wanted.__contains__, keys)):
            grouped.setdefault(keys[i], []).append(tuple(float(column[i]) for column in timing))
        few = tuple(sorted((key, tuple(sorted(rows))) for key, rows in grouped.items()))
    return rows, shared, aligned, sequence, few, windows, ranked


def _in_order(xs: list[tuple[float, ...]], ys: list[tuple[float, ...]]) -> list[tuple[Any, Any]]:
    """independence._in_order as it was before its steps were counted per diagonal (main 56859be)."""

    def steps(rows: list[tuple[float, ...]], column: int) -> list[float] | None:
        values = [row[column] for row in rows]
        if min(values) <= 0:
            return None
        logs = [math.log(v) for v in values]
        found = [b - a for a, b in zip(logs, logs[1:])]
        return found if found and statistics.median(map(abs, found)) > 0 else None

    if not xs or not ys:
        return []
    for column in range(len(xs[0])):
        zx, zy = steps(xs, column), steps(ys, column)
        if zx is not None and zy is not None:
            break
    else:
        return []
    close = SEQUENCE_CLOSE * min(statistics.median(map(abs, zx)), statistics.median(map(abs, zy)))

    def runs_from(i: int, j: int) -> bool:
        length = min(SEQUENCE_RUN, len(zx) - i, len(zy) - j)
        return length > 0 and all(abs(zx[i + k] - zy[j + k]) <= close for k in range(length))

    pairs, i, j = [], 0, 0
    while i < len(zx) and j < len(zy):
        if runs_from(i, j):
            pairs.append((xs[i], ys[j]))
            i, j = i + 1, j + 1
            continue
        i, j = next(
            (
                (i + d, j) if runs_from(i + d, j) else (i, j + d)
                for d in range(1, SEQUENCE_SKIP + 1)
                if runs_from(i + d, j) or runs_from(i, j + d)
            ),
            (i + 1, j + 1),
        )
    return pairs


def _near_print(kind: str, columns: Columns) -> tuple[Any, ...] | None:
    """independence._near_print as it was at main 23db4bb: its level (read by nothing) in the packed
    print's fourth slot, its keys from candidates_reference. Its parts and noise from the module's
    helpers as they are looked up at the call (the test swaps the reference ones in); the merge keys, added
    after 23db4bb, from candidates_reference's loop (as at main 05b6922)."""
    timing = independence._numeric(columns, TIMING_COLUMNS.get(kind, ()))
    align = independence._numeric(columns, independence.ALIGN_COLUMNS.get(kind, ()))
    if not timing or align is None:
        return None
    rows, shared, aligned, sequence, few, windows, ranked = independence._near_parts(timing, align)
    noise = independence._own_noise(timing, align)
    spreads = [candidates.spread(columns.ordered(name)) for name in TIMING_COLUMNS[kind][: len(timing)]]
    repeated = independence._repeated(independence._alignment_hashes(align), timing) if kind == "training" else None
    alignment = independence._alignment_hashes(align)
    wide = independence._wide_means(timing, alignment, aligned) if sequence is None else None
    keys = candidates_reference.sample_keys(spreads, aligned, windows, few, sequence, ranked, repeated, wide)
    parts = (shared, aligned, sequence, few, windows, ranked)
    finite = all(all(map(math.isfinite, column)) for column in timing)
    text = orjson.dumps(parts) if finite else json.dumps(parts, allow_nan=True).encode()
    packed = zlib.compress(text, 1)
    merged = candidates_reference.merge_keys(independence._alignment_hashes(align), timing)
    return ("near", len(rows), packed, _level(kind, columns), kind, noise, keys, merged)
