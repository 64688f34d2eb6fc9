"""When two run files are one measurement: the same raw samples, or a rescaled, offset or reordered copy.

A measurement's timings are never reproduced exactly: two real runs of the same recipe differ in
every step time and every request latency. So a run is reduced, while its samples are in memory,
to a fingerprint of its timing columns (training `time_s`; inference `ttft_ms` and `e2e_ms`):

  exact     SHA-256 of the samples as a multiset: identical samples in any order (1 and 1.0, or 0.0
            and -0.0, count as different values, as they are written differently)
  columns   per timing column with at least 3 distinct values: the sample count, 65 quantiles of
            the sorted column after the affine normalisation (x - min) / (max - min), and how close
            two such prints must be (distribution_tolerance: scaled by the sample count)
  values    per timing column: a sketch of its distinct values and how often the run repeats its
            own values (exact-value sharing, calibrated by each run's own clock)
  near      a sketch of whole timing rows and of samples aligned by step or request, each with its
            neighbours in list order (near copies: shared rows, timings that follow the other's
            sample by sample, and filtered_agreement's moving averages of the other's samples)

Sorting removes the order; the normalisation removes any constant scale a > 0 and offset b
(a*x + b has the same normalised quantiles). Two runs are one measurement when their exact hashes
are equal, or when every timing column of both has the same count and its normalised quantiles
agree within the column's tolerance (a float rescale leaves ~1e-15; an inference column, whose
requests a copy may shuffle, within a tenth of the gap between neighbouring order statistics).
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

Comparing every pair of runs would be quadratic, so runs are grouped by `buckets` (its docstring
lists the keys): every rule above has keys that any pair it flags shares — quantile cells at least
4x the tolerance wide (with the neighbouring cell near an edge), every hash of a value sketch, the
lowest row hashes; the sample-by-sample rules, locality-sensitive keys of each run's noise
(science/candidates.py), whose recall is measured rather than guaranteed — and the same keys tie a
pull request's new run to the runs it could copy (validator/pr/neighbourhood.py). docs/metrics.md,
"What the copy test can and cannot see", gives the noise floors and the measured error rates.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import json
import math
import operator
import statistics
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import orjson

from validator.science import candidates
from validator.science.samples import Columns

TIMING_COLUMNS = {"training": ("time_s",), "inference": ("ttft_ms", "e2e_ms")}
QUANTILES = 64
TOLERANCE = 1e-6
DISTRIBUTION_GAP = 0.1  # of the gap between order statistics (distribution_tolerance)
CELL = 1e-3  # smallest bucket width on a normalised quantile (at least 4x the column's tolerance)
KEY_QUANTILES = (16, 32, 48)  # of QUANTILES: the quartiles

# ("exact", hex, or None where left out), then (column, count, quantiles) per informative column
Fingerprint = tuple[Any, ...]


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


def distribution_tolerance(kind: str, count: int) -> float:
    """How close (normalised) two sorted columns of `count` samples must be to be one measurement.

    Two independent samples of one distribution differ at each order statistic by about the gap
    between neighbouring order statistics (~1/count of the range) or, where run-to-run noise is
    larger than that gap, by the noise; a copy reordered and jittered differs by its jitter. An
    inference column (requests whose order a copy can shuffle freely, so only its distribution is
    left to compare) is one measurement below DISTRIBUTION_GAP of that gap. A training column keeps
    the float-rescale tolerance: its shared data-dependent structure keeps two honest stable-cluster
    runs' sorted step times within a fraction of a gap, and its steps align samples anyway.
    """
    if kind == "inference" and count >= MIN_DISTINCT:
        return max(TOLERANCE, DISTRIBUTION_GAP / count)
    return TOLERANCE


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


def _row_order(
    values: list[list[Any]], lead_types: frozenset[type], comparable: bool
) -> tuple[Sequence[int], bool] | None:
    """Indices of the rows (one value from each column) in lexicographic order, and whether no two lead
    values are equal; None when that order is not the multiset's alone: two rows are equal (1 and 1.0
    are equal but written differently) or a value compared is NaN (equal to nothing, itself included).

    Rows are sorted by the lead column (a homogeneous sort, no tuples); only the few runs of equal
    lead values are then ordered by whole rows.
    """
    head = values[0]
    try:  # a NaN makes the sum NaN (one C pass, cheaper than isnan's; inf - inf does too: then look)
        if float in lead_types and (total := sum(head)) != total and any(map(math.isnan, head)):
            return None
    except OverflowError:  # an integer beyond the doubles: no NaN, but no cheap order either
        return None
    if all(map(operator.lt, head, itertools.islice(head, 1, None))):  # already in order (a training log)
        return range(len(head)), True
    order = sorted(range(len(head)), key=head.__getitem__)
    lead = operator.itemgetter(*order)(head)  # a tuple: len(head) >= 2 here
    if all(map(operator.lt, lead, itertools.islice(lead, 1, None))):  # no ties (the usual case): one pass
        return order, True
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
    return order, False


def _multiset_text(kind: str, samples: Sequence[Any], columns: Columns) -> tuple[bytes, str, list[Any], bool] | None:
    """The samples as bytes that only the multiset decides, with the lead column (sorted), its key and
    whether no two of its values are equal; None when the samples do not allow it cheaply.

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
    found = _row_order(values, columns.types(lead), all(columns.types(key) in _SORTABLE for key in keys))
    if found is None:
        return None
    order, distinct = found
    if not isinstance(order, range) and len(order) > 1:
        permute = operator.itemgetter(*order)  # one C loop per column (a tuple of the values in order)
        values = [permute(column) for column in values]
    try:
        return b"columns\n" + orjson.dumps([keys, values]), lead, values[0], distinct
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
    text, lead, ordered, distinct = found
    if distinct and lead in TIMING_COLUMNS.get(kind, ()):
        columns.sorted_already(lead, ordered)  # no two equal: the column sorted, which the prints read (no sort)
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
            tolerance = distribution_tolerance(kind, len(values))
            found = _column_print(values, ordered.get(column) or columns.ordered(column), tolerance)
            if found is not None:
                prints.append((column, *found))
    if hashed is None and not prints:
        hashed, _ = _exact(kind, samples, columns)
    shared_values = _values_print(kind, columns)
    near = _near_print(kind, columns)
    return (
        ("exact", hashed),
        *prints,
        *((shared_values,) if shared_values is not None else ()),
        *((near,) if near is not None else ()),
    )


# ---- near copies: shared samples, and timings that agree sample by sample (docs/metrics.md) ----

# What identifies a sample across two runs of one workload (equal in honest re-runs, so it aligns
# them and never counts as shared evidence itself): a training step's number; an inference
# request's token counts, with its occurrence among requests of equal counts in list order.
ALIGN_COLUMNS = {"training": ("step",), "inference": ("prompt_tokens", "output_tokens")}
SKETCH = 64  # samples kept per sketch (all of them in a run this small)
SHARED_KEYS = 11  # lowest row hashes published as buckets: a copy with <= 10 dropped shares one
MIN_DISTINCT = 8  # distinct timing rows a run needs before shared rows say anything
DISTINCT_SHARE = 0.5  # ... and at least this share of its samples distinct (coarse clocks repeat values)
SHARED_CONTAINMENT = 0.7  # a copy: this share of the smaller run's distinct timing rows is in the other
MIN_MATCHED = 8  # aligned samples both runs must have before their timings are compared one by one
# The 75th percentile of |residual| / value after the affine fit, per column, below which two runs'
# aligned timings are one measurement: each a quarter or less of the honest noise floor of its
# column (docs/metrics.md, "What the copy test can and cannot see"). Training: a stable cluster's
# per-step noise is >= 0.05% (75th percentile of an honest pair's residual >= 0.08%); TTFT moves by
# >= 5% between re-runs, a request's end-to-end time by >= 1.5%.
AGREE_RELATIVE = {"training": {"time_s": 0.0002}, "inference": {"ttft_ms": 0.01, "e2e_ms": 0.004}}
AGREE_QUANTILE = 0.75
# What a run's own noise reading counts as where it bounds the noise from above only (_own_noise: read from
# fewer than NOISE_LOW_MIN samples, where the fits cannot tell a shared part rough in the key from noise, so a
# run with 1-5 of 16 requests uncached looks like a noisy one; or a prefix cache that leaves too few requests
# unmoved to read): agreement the run's own noise cannot calibrate is "far closer" only where it is far closer
# than what the run shows where nothing shared moves it, or than the quietest honest noise.
# - Where a later column holds it (e2e = TTFT + decode), the part between them (the decode, which no prefix
#   cache moves) tells a quiet machine from a loaded one: below LOADED_DECODE (a median deviation, relative;
#   sigma 0.67%, between a quiet GPU's 0.3% and a loaded server's 1.5%, docs/metrics.md) the column counts as
#   at most QUIET_RATIO x the decode's noise (TTFT, one prefill and the wait before it, moves at least as much
#   as a decode averaged over its tokens; the rules flag only residuals far below the noise, so twice it
#   leaves honest pairs a margin: measured, the prefix-cache class's first refusals come at 4x), and the
#   later column as at most its two parts' noise added (as _cumulative_noise); above, the readings stand.
# - Else, where the column's limit (AGREE_RELATIVE) lies above it, at most QUIET_NOISE: a quiet
#   random-dataset run's TTFT moves by sigma 0.1% (docs/metrics.md, "What the copy test can and cannot see").
#   Training's limit lies below its floor (0.05% per step), so its reading counts as read.
QUIET_RATIO = 2
LOADED_DECODE = 0.0067 * 0.6745
QUIET_NOISE = {"inference": {"ttft_ms": 0.001 * 0.6745}}
# median |residual| / the column's own median deviation: forgeries <= 0.15, re-runs ~1 (their noise
# is their own); a second guard, for columns whose spread is all noise (fixed-length requests,
# llama-bench's repetitions), where it is the run's own noise that sets "too close"
AGREE_SPREAD = 0.3
# Exact values shared per timing column: independent runs share a bit-identical float timing only
# as often as one run repeats its own values (a coarse clock, Megatron's 0.1 ms), so the chance is
# read off the run itself (its own repeated pairs).
VALUE_SKETCH = 32  # lowest hashes of a column's distinct values kept (all published as buckets)
VALUE_FINE = 0.25  # a column speaks when a run's own repeats predict at most this share by chance
VALUE_SHARE = 0.3  # a copy: at least this share of the smaller run's distinct values in the other ...
VALUE_OVER_CHANCE = 4  # ... and this many times what the runs' own repeats predict
MIN_SHARED_VALUES = 4
CHANCE_TAIL = (
    1e-6  # per compared pair and column: a registry compares only runs sharing a bucket (measured: docs/metrics.md)
)
# A run's own noise per timing column, read off the run itself: the median |second difference| of
# the column with the samples in alignment-key order (a step's number; a request's prompt and output
# lengths), / sqrt(6), relative to the column's median: the noise's median deviation where the
# column's data-dependent part is smooth in the key (an uneven part only raises it). "Too close" is
# then AGREE_SPREAD of it: a stable machine whose requests repeat their latencies within 1% is
# not one measurement with a second such run of another recipe (bench/generate.py's 3,000-run
# registry had 365 such pairs), while a copy's residual is its own jitter, far below either run's noise.
NOISE_SAMPLES = 256  # samples, evenly spaced in list order, the noise is read from (cheap at any size)
NOISE_MIN = 8
# Read off the lower tenth of the |second differences|, not their median: where the shared part is
# rough in the key, most triples straddle its steps and the median reads them as noise. For Gaussian
# noise the tenth percentile of a deviation from the neighbours' line, over its own sigma, is 0.1257;
# with fewer than NOISE_LOW_MIN deviations (llama-bench's ten repetitions) the median is read instead.
# A tenth is not enough for a prefix cache hit by a third or half of a dataset's requests: a triple is
# clean only when none of its three requests is cached (one in eight at half), so the lower tenth is
# read off the straddling ones and quiet honest re-runs were refused (9-10 of 12 pairs at 50%).
NOISE_QUANTILE = 0.1
NOISE_LOW_MIN = 40
_HALF_NORMAL = statistics.NormalDist()
_SQRT_TAU = math.sqrt(2 * math.pi)
# So the noise is read a second way too, which such a part does not inflate (_fit_noise), and the lower
# of the two counts: a fit of the column on its key's parts that follows the best FIT_SHARE of the
# samples, then its residuals as a mixture of the run's noise (normal) and what a shared part leaves
# (uniform over their range). The prefix cache class of the corpus (tests/testing/corpus.py) and
# bench/copies.py's `prefix_cache` measure it; docs/metrics.md gives the figures and the limits (80% hits).
FIT_SAMPLES = 64  # samples, evenly spaced among those picked, the fit reads
FIT_SHARE = 1 / 3  # of the samples the fit follows: a prefix cache hit by up to half the requests leaves more
FIT_FEW = 5  # ... and at least this many (up to half the samples)
FIT_STEPS = 6  # concentration steps at most (they settle in two or three)
FIT_GAP = 8  # below NOISE_LOW_MIN samples: how far below the neighbours' reading the fit must be to count
FIT_KEPT = 0.8  # of those, the least the noise's component must hold at the end (else unread)
# A prefix cache hit by more than two requests in three leaves fewer unmoved than the third the fit
# follows (docs/metrics.md: 80% hits). A cache only skips work, so the unmoved requests are the slowest
# for their prompt: the upper edge. So the fit also follows a twelfth (at least 4) of the samples along
# that edge (_minority), which counts where its noise's component holds a minority (fewer than
# FIT_SHARE of the samples; half below NOISE_LOW_MIN) and no sample lies far above it.
FIT_MINORITY = 1 / 12
FIT_MINORITY_GAP = 2  # from NOISE_LOW_MIN samples, read only where that edge is this much tighter (_tighter)
FIT_ABOVE = 4  # sigma: no sample may lie this far above that line (the unmoved ones' noise does not) ...
FIT_STRAYS = 32  # ... and at most one in this many samples from there to twice as far below it
FIT_ROUNDS = 3  # refits of that line on the samples the noise's component holds
PACKED_LIMIT = 1 << 20  # bytes a packed near print may inflate to (~40 KB at SKETCH = 64)
_ROW_SALT, _KEY_SALT, _VALUE_SALT = 0x6F7276, 0x616C6E, 0x76616C  # so the lowest hashes are not the smallest values

# ("near", distinct timing rows, their lowest SKETCH hashes sorted, aligned samples ((key, timings), ...)
#  by key, None (the run's level once, which nothing read: no longer computed, its slot keeps the indices
#  after it), kind, the first SKETCH samples' timings in order or None,
#  ((key, every occurrence's timings), ...) sorted by key, for the SKETCH lowest keys held at most FEW_OCCURRENCES
#  times (those held more often left out), or None where fewer than MIN_MATCHED keys are so held,
#  each aligned sample's window of neighbours, the run's own relative noise per timing column or None,
#  on a fixed-length workload the SKETCH samples with the least timings in that order, else None,
#  the candidate keys (science/candidates.py), the merge keys (candidates.merge_keys))
# In a fingerprint it is stored packed: ("near", distinct timing rows, zlib of the JSON of (hashes, aligned samples,
# first samples, keys held a few times, windows, fastest samples), kind, own noise, candidate keys, merge keys);
# _near_of
# unpacks it.
NearPrint = tuple[Any, ...]
# ("values", ((column, samples, distinct values, pairs of equal values, lowest VALUE_SKETCH hashes), ...))
ValuesPrint = tuple[Any, ...]


SANE = 1e150  # beyond this a timing is no measurement (sums and squares of it overflow a float) ...
TINY = 1 / SANE  # ... nor is one this close to zero but not 0 (the fits divide by timings, keys by spreads)


_HASH_LOW, _HASH_SPAN = -(1 << 63), 1 << 64  # the range of CPython's (64-bit) hashes


def _lowest(hashes: Collection[int], k: int) -> list[int]:
    """sorted(hashes)[:k], sorting only the hashes below a bound: n hashes spread evenly over their range
    put ~3k of them below 3k/n of it, and when at least k are there the k lowest are among them (fewer:
    the whole sort, so the answer never depends on how evenly they spread)."""
    if len(hashes) <= 8 * k:
        return sorted(hashes)[:k]
    bound = _HASH_LOW + 3 * k * _HASH_SPAN // len(hashes)
    below = sorted([h for h in hashes if h < bound])
    return below[:k] if len(below) >= k else sorted(hashes)[:k]


def _numeric(columns: Columns, names: Sequence[str]) -> list[list[Any]] | None:
    """The columns, when each holds numbers only, every one finite and of a size a clock can give
    (a schema-valid 1e308 or a non-finite value made the fits overflow, a 1e-300 next to ~1 s divided them
    past a float's range and subnormal spreads to zero: such a column says nothing)."""
    found = []
    for name in names:
        values = columns.get(name)
        types = columns.types(name)
        if values is None or not types or not types <= {int, float}:
            return None
        low, high = columns.bounds(name)  # the sorted ends if sorted already, else min and max: no sort for this
        if not (-SANE < low and high < SANE) or not math.isfinite(sum(values)):
            return None  # (a NaN may sort anywhere; the sum finds it)
        # (a pass only where a value may lie that close to zero: floats reaching below TINY, say a 0.0 among them)
        if low < TINY and float in types and any(0 < abs(v) < TINY for v in values):
            return None
        found.append(values)
    return found


def _window(timing: list[list[Any]], i: int, count: int) -> tuple[Any, ...]:
    """Sample i's timings with WINDOW neighbours either side in list order (None past the run's ends):
    one slice per column."""
    low, high = i - WINDOW, i + WINDOW + 1
    if low >= 0 and high <= count:  # (a list of maps, not a generator: a third cheaper at 64 windows a run)
        return tuple(zip(*[map(float, column[low:high]) for column in timing]))
    inside = tuple(zip(*[map(float, column[max(low, 0) : high]) for column in timing]))
    return (None,) * max(0, -low) + inside + (None,) * max(0, high - count)


def _near_parts(timing: list[list[Any]], align: list[list[Any]], keys: list[int] | None = None) -> tuple[Any, ...]:
    """_near_print's sketches of the numeric timing and alignment columns: (distinct row hashes, their lowest
    SKETCH, aligned samples, first samples, keys held a few times, windows, fastest samples) (NearPrint).
    `keys`: the samples' alignment hashes where the caller has them already (_alignment_hashes)."""
    rows = set(map(hash, zip(itertools.repeat(_ROW_SALT), *timing)))
    shared = tuple(_lowest(rows, SKETCH))
    keys = _alignment_hashes(align) if keys is None else keys
    count = len(keys)
    distinct = set(keys)
    counts = Counter(keys) if len(distinct) < count else None  # None: every key held once (no Counter pass)
    unique = distinct if counts is None else list(itertools.compress(counts, map((1).__eq__, counts.values())))
    # Samples whose key the run holds once align without regard to order; where enough do (a random
    # dataset's requests, a training log's steps), only they align, so that dropping one of two equal
    # requests cannot shift the other's occurrence. A fixed-length workload aligns by occurrence, and
    # so does a run most of whose keys repeat (a merge of two runs holds every step twice: its few
    # unpaired keys would be all it published, and its original would share none of them)
    by_order = len(unique) < max(MIN_MATCHED, len(distinct) // 2)
    chosen = set(_lowest(distinct if by_order else unique, SKETCH))
    seen: dict[int, int] = {}
    picked = []  # (hash of key and occurrence, index in list order, key): sorted as tuples, ties by index
    for i in itertools.compress(range(count), map(chosen.__contains__, keys)):
        key = keys[i]
        occurrence = seen[key] = seen.get(key, -1) + 1
        picked.append((hash((key, occurrence)), i, key))
    picked.sort()
    del picked[SKETCH:]
    # each aligned sample's neighbours in list order (WINDOW either side; None at the run's ends),
    # so that filtered_agreement can fit a copy made of a moving average of the original
    windows = tuple(_window(timing, i, count) for _, i, _ in picked)
    aligned = tuple((aligned_key, window[WINDOW]) for (aligned_key, _, _), window in zip(picked, windows))
    # aligned by occurrence (a fixed-length workload): the first samples in list order too, which
    # timing_agreement aligns in order with gaps, so one dropped request does not shift the rest
    sequence = tuple(zip(*(map(float, column[:SKETCH]) for column in timing))) if by_order else None
    # ... and its samples sorted by their timings, the SKETCH fastest: a copy reordered *and* thinned keeps
    # them in the same order with gaps, while another run's come with other second columns
    ranked = [list(map(float, row)) for row in _fastest(timing)] if by_order else None
    # keys held a few times each (a merge of two runs holds every step twice): every occurrence,
    # so timing_agreement can pair each sample with the nearest of the other run's under its key
    few: tuple[tuple[int, tuple[Any, ...]], ...] | None = None
    if len(distinct) >= MIN_MATCHED and counts is None:
        # the keys wanted are the ones chosen above, each once: their rows are the aligned ones
        few = tuple(sorted((key, (window[WINDOW],)) for (_, _, key), window in zip(picked, windows)))
    elif len(distinct) >= MIN_MATCHED and counts is not None:
        # the lowest keys held at most FEW_OCCURRENCES times (a short random dataset's requests repeat token
        # counts by chance, so a merge of two runs holds some 6-12 times: those alone are left out)
        held = [key for key in distinct if counts[key] <= FEW_OCCURRENCES]
        wanted = set(_lowest(held, SKETCH))
        if len(wanted) >= MIN_MATCHED:
            grouped: dict[int, list[tuple[float, ...]]] = {}
            for i in itertools.compress(range(count), map(wanted.__contains__, keys)):
                grouped.setdefault(keys[i], []).append(tuple(float(column[i]) for column in timing))
            few = tuple(sorted((key, tuple(sorted(rows))) for key, rows in grouped.items()))
    return rows, shared, aligned, sequence, few, windows, ranked


def _fastest(timing: list[list[Any]]) -> list[tuple[Any, ...]]:
    """sorted(zip(*timing))[:SKETCH], sorting only the rows whose first timing is among the SKETCH lowest
    (the SKETCH lowest rows are; the rest keep their order, so ties come out as the full sort's)."""
    lead = timing[0]
    if len(lead) <= 2 * SKETCH:
        return sorted(zip(*timing))[:SKETCH]
    bound = sorted(lead)[SKETCH - 1]
    return sorted(itertools.compress(zip(*timing), map(functools.partial(operator.ge, bound), lead)))[:SKETCH]


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
        ordered = columns.ordered(name)  # sorted for the column print and the candidate keys anyway
        distinct: Collection[Any] = values
        repeats = 0
        if any(map(operator.eq, ordered, itertools.islice(ordered, 1, None))):  # equal values are neighbours
            counts = Counter(values)
            held = list(counts.values())
            distinct, repeats = counts, (sum(map(operator.mul, held, held)) - len(values)) // 2  # pairs of equal values
        sketch = array("q", _lowest(list(map(hash, zip(itertools.repeat(_VALUE_SALT), distinct))), VALUE_SKETCH))
        found.append((name, len(values), len(distinct), repeats, sketch))
    return ("values", tuple(found)) if found else None


def _chance(samples: int, repeats: int) -> float:
    """The chance that two of a run's values are equal, from its own repeated pairs (one added, so
    a run that never repeats itself is not taken to be incapable of it)."""
    return (repeats + 1) / (samples * (samples - 1) / 2 + 1)


def _speaks(samples: int, distinct: int, repeats: int) -> bool:
    """Whether a column's exact values can tell a copy: distinct enough, and its own repeats
    predict little sharing by chance (VALUE_FINE)."""
    return distinct >= MIN_DISTINCT and min(1.0, samples * _chance(samples, repeats)) <= VALUE_FINE


def _in_common(sketch_a: Sequence[int], na: int, sketch_b: Sequence[int], nb: int) -> tuple[int, int]:
    """From bottom-k sketches (sorted), how many of the smaller set's items fall in the hash range
    both sketches cover completely (below the lower of their last hashes; a sketch of a set no
    larger than it covers every hash), and how many of those the other set holds: an unbiased
    sample of the smaller set, whatever the two sizes. (The Jaccard estimate from the union's k
    lowest, used before, turned one shared value between a run of 100 values and one of 3,000 into
    "86% shared".)"""
    set_a, set_b = set(sketch_a), set(sketch_b)
    if set_a.isdisjoint(set_b):
        return 0, 0
    top = min(
        sketch_a[-1] if na > len(sketch_a) else math.inf,
        sketch_b[-1] if nb > len(sketch_b) else math.inf,
    )
    smaller, other = (set_a, set_b) if na <= nb else (set_b, set_a)
    in_range = [h for h in smaller if h <= top]
    return len(in_range), sum(1 for h in in_range if h in other)


def _beyond_chance(trials: int, hits: int, chance: float, least: int = MIN_SHARED_VALUES) -> bool:
    """Whether `hits` of `trials` is beyond what a share of `chance` gives, even after every pair a
    registry compares (the binomial tail at most CHANCE_TAIL): four values of a run that happen to
    be among another run's are no evidence when one in eight of its values is (a narrow latency
    range on a millisecond grid); four of a full-precision float's are."""
    return hits >= least and _binomial_tail(trials, hits, chance) <= CHANCE_TAIL


def _binomial_tail(trials: int, hits: int, chance: float) -> float:
    """P(at least `hits` of `trials` events of probability `chance`)."""
    chance = min(max(chance, 0.0), 1.0)
    return sum(math.comb(trials, k) * chance**k * (1 - chance) ** (trials - k) for k in range(hits, trials + 1))


def _bottom_k_share(sketch_a: Sequence[int], na: int, sketch_b: Sequence[int], nb: int, k: int) -> float:
    """The estimated share of the smaller set that the other holds too (_in_common); 0.0 unless at
    least MIN_SHARED_VALUES items are shared, so a pair this flags always shares a published hash."""
    trials, hits = _in_common(sketch_a, na, sketch_b, nb)
    return hits / trials if hits >= MIN_SHARED_VALUES else 0.0


def shared_values(a: ValuesPrint, b: ValuesPrint) -> tuple[str, float] | None:
    """The first timing column whose exact values the two runs share far beyond chance, with the
    share of the smaller run's distinct values found in the other; None when none does."""
    by_name = {entry[0]: entry for entry in b[1]}
    for name, na, da, ra, sa in a[1]:
        other = by_name.get(name)
        if other is None:
            continue
        _, nb, db, rb, sb = other
        # the clock's resolution is read off the run that repeats itself least: a resampled copy
        # repeats its own values (bit-identical draws) where its original never did
        if min(da, db) < MIN_DISTINCT or not (_speaks(na, da, ra) or _speaks(nb, db, rb)):
            continue
        trials, hits = _in_common(sa, da, sb, db)
        if not trials:
            continue
        share = hits / trials
        chance = min(_chance(na, ra), _chance(nb, rb))
        expected = min(1.0, (nb if da <= db else na) * chance)
        if share >= max(VALUE_SHARE, VALUE_OVER_CHANCE * expected) and _beyond_chance(trials, hits, expected, 2):
            return name, share
    return None


def _own_noise(timing: list[list[Any]], align: list[list[Any]]) -> tuple[float | None, ...]:
    """Each timing column's own relative noise (NOISE_SAMPLES above), None where it cannot be read: the
    smallest over the orders of the key's parts (a request's e2e follows its output length, its TTFT its
    prompt: sorted by the one that drives it, neighbours differ by noise alone; the larger estimate of
    the other order would let more honest pairs pass as "far below the noise"). Each sample is compared
    with the line through its two neighbours at their key values (uneven spacing is no noise).

    A reading that bounds the noise from above only (from fewer than NOISE_LOW_MIN samples, or the cache's
    edge on too few unmoved samples: _fit_noise) is bounded by the decode's on a quiet machine (QUIET_RATIO);
    where nothing bounds it, it is kept as its negative, which the comparisons count as at most the column's
    QUIET_NOISE (_calibrated)."""
    count = len(timing[0])
    step = max(1, count // NOISE_SAMPLES)
    picked = range(0, count, step)
    parts = [column[::step] for column in align]  # the picked samples' key parts (C slices)
    keys = [parts[i:] + parts[:i] for i in range(len(parts))] or [[]]  # each part of the key leading once
    found = _neighbour_noise(timing, keys, picked)
    # below NOISE_LOW_MIN samples every reading is an upper one (QUIET_RATIO): the fits cannot tell a shared
    # part rough in the key from noise (a run with 1-5 of 16 requests uncached looks like a noisy run)
    upper = [len(picked) < NOISE_LOW_MIN] * len(timing)
    for n, column in enumerate(timing):
        read = found[n]
        if read is None:  # unread stays unread (a coarse clock's repeats)
            continue
        # the fit along the edge on the first column only: a later one holding it (e2e = TTFT + decode) is
        # read as its parts' noise (_cumulative_noise), and the cache moves the earlier one
        fitted = _fit_noise([float(column[i]) for i in picked], [[float(v) for v in part] for part in parts], n == 0)
        # below NOISE_LOW_MIN samples the trimmed spread reads low (it follows a third of them, chosen as the
        # ones that fit), so it counts only where it is far below the neighbours' reading
        if fitted is not None and (not fitted[1] or fitted[0] * FIT_GAP < read):
            found[n] = min(read, fitted[0])
        elif fitted is not None and fitted[2] is not None and fitted[2] * FIT_GAP < read:
            found[n] = fitted[2]  # (the fit along the edge, where the third's could not count either)
        if fitted is not None and fitted[1]:  # from NOISE_LOW_MIN: the cache's edge on too few unmoved samples
            upper[n] = True
    found = _cumulative_noise(timing, parts, picked, found)
    for j, n, earlier, increment in _held(timing, picked) if any(upper) else ():
        # a column a later one holds (TTFT in e2e) with an upper reading: the part between them (the decode),
        # which no prefix cache moves, read as above, tells a quiet machine from a loaded one (QUIET_RATIO)
        decode = _neighbour_noise([increment], keys, range(len(picked)))[0]
        if not decode:  # unread (a coarse clock's repeats): QUIET_NOISE
            continue
        if decode >= LOADED_DECODE:  # a loaded machine: the readings stand
            upper[j] = upper[n] = False
            continue
        first, own = found[j], found[n]
        if upper[j] and first is not None:
            first = found[j] = min(first, QUIET_RATIO * decode)
            upper[j] = False
        if upper[n] and own is not None and first is not None and first > 0:  # its parts' noise added
            added = statistics.median(math.hypot(first * x, decode * d) / (x + d) for x, d in zip(earlier, increment))
            found[n], upper[n] = min(own, added), False
    # an upper reading is kept as its negative: the comparisons count it as at most the column's QUIET_NOISE
    return tuple(-read if read is not None and high else read for read, high in zip(found, upper))


def _held(timing: list[list[Any]], picked: range) -> list[tuple[int, int, list[float], list[float]]]:
    """(earlier column, the first later column above it at every picked sample, the earlier one's picked values,
    the later one's less them): e2e holds TTFT, and the decode between them."""
    found = []
    for j in range(len(timing) - 1):
        earlier = [float(timing[j][i]) for i in picked]
        for n in range(j + 1, len(timing)):
            increment = [float(timing[n][i]) - x for i, x in zip(picked, earlier)]
            if min(increment) > 0:
                found.append((j, n, earlier, increment))
                break
    return found


def _neighbour_noise(timing: list[list[Any]], keys: list[list[Any]], picked: range) -> list[float | None]:
    """Each column's noise read off its samples' deviations from the line through their neighbours in each
    order of the key's parts, the smallest (_own_noise)."""
    found: list[float | None] = [None] * len(timing)
    for key in keys:
        ranked = sorted(zip(*key, picked))  # by the key, then list order: tuples compared in C
        order = [row[-1] for row in ranked]
        lead = [float(row[0]) for row in ranked] if key else [float(i) for i in order]
        # the weight of each sample's right neighbour on the line through both (1/2 where keys tie)
        weights = [(b - a) / (c - a) if c > a else 0.5 for a, b, c in zip(lead, lead[1:], lead[2:])]
        scales = [math.sqrt(1 + w * w + (1 - w) ** 2) for w in weights]  # the noise's sigma in each deviation
        for n, column in enumerate(timing):
            values = [float(column[i]) for i in order]
            middle = statistics.median(values) if len(values) >= NOISE_MIN else 0.0
            if middle <= 0 or middle != middle:
                continue
            deviations = sorted(
                [
                    abs(y - (x + w * (z - x))) / scale
                    for x, y, z, w, scale in zip(values, values[1:], values[2:], weights, scales)
                ]
            )
            # the lower tenth where there are enough deviations to read it, else their median
            at = int(NOISE_QUANTILE * len(deviations)) if len(deviations) >= NOISE_LOW_MIN else len(deviations) // 2
            low = deviations[at]
            if low > 0:  # 0: a coarse clock's repeats
                z = _HALF_NORMAL.inv_cdf((1 + (at + 0.5) / len(deviations)) / 2)  # that rank's share of |noise|
                noise = low / z * 0.6745 / middle  # as a median deviation
                found[n] = min(found[n] or noise, noise)
    return found


def _cumulative_noise(
    timing: list[list[Any]], parts: list[list[Any]], picked: range, found: list[float | None]
) -> list[float | None]:
    """A column that holds an earlier one (e2e = TTFT + decode: never below it) read as the sum of the
    two parts' noise: the earlier column's, and its own increment's (decode = e2e - TTFT) read as above.
    A shared part of the earlier column (a prefix cache moves TTFT) then does not count as the later
    column's noise; where the parts' reading is no lower, the column's own stands. From NOISE_LOW_MIN
    samples (the fit's reading below it counts only far below the neighbours', which this has not)."""
    if len(picked) < NOISE_LOW_MIN:
        return found
    for n in range(1, len(timing)):
        later = [float(timing[n][i]) for i in picked]
        for j in range(n):
            earlier = [float(timing[j][i]) for i in picked]
            own, first = found[n], found[j]
            if own is None or first is None or not min(map(operator.sub, later, earlier)) > 0:
                continue
            increment = list(map(operator.sub, later, earlier))
            # (the decode part: the cache does not touch it, so no minority of it is unmoved)
            fitted = _fit_noise(increment, [[float(v) for v in part] for part in parts], along_edge=False)
            if fitted is None:
                continue
            step = fitted[0]
            combined = statistics.median(
                math.hypot(first * x, step * d) / y for x, d, y in zip(earlier, increment, later)
            )
            found[n] = min(own, combined)
    return found


def _solve(matrix: list[list[float]], target: list[float]) -> list[float] | None:
    """x with matrix @ x = target (Gaussian elimination, partial pivoting), None when singular."""
    size = len(target)
    if size == 3:  # Cramer's rule: the fit's elemental sets are all 3 x 3 (an intercept, two parts)
        (a, b, c), (d, e, f), (g, h, i) = matrix
        p, q, r = target
        det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
        scale = max(map(abs, (a, b, c, d, e, f, g, h, i)))  # cubed by products: ** raises past a float's range
        if not abs(det) > 1e-12 * scale * scale * scale:
            return None
        return [
            (p * (e * i - f * h) - b * (q * i - f * r) + c * (q * h - e * r)) / det,
            (a * (q * i - f * r) - p * (d * i - f * g) + c * (d * r - q * g)) / det,
            (a * (e * r - q * h) - b * (d * r - q * g) + p * (d * h - e * g)) / det,
        ]
    rows = [row[:] + [value] for row, value in zip(matrix, target)]
    for c in range(size):
        pivot = max(range(c, size), key=lambda r: abs(rows[r][c]))
        if not abs(rows[pivot][c]) > 1e-12:
            return None
        rows[c], rows[pivot] = rows[pivot], rows[c]
        for r in range(size):
            if r != c:
                factor = rows[r][c] / rows[c][c]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[c])]
    return [rows[i][size] / rows[i][i] for i in range(size)]


def _residuals(design: list[list[float]], weights: Sequence[float]) -> list[float]:
    """1 - design . weights per sample (design's columns already divided by the sample: relative)."""
    found = [1.0] * len(design[0])
    for column, weight in zip(design, weights):
        found = [r - weight * x for r, x in zip(found, column)]
    return found


def _refit(design: list[list[float]], start: Sequence[float], kept: int) -> list[float]:
    """Concentration steps: least squares on the `kept` samples the weights fit best, until those stay
    the same (at most FIT_STEPS)."""
    weights, inner = list(start), None
    for _ in range(FIT_STEPS):
        found = _residuals(design, weights)
        chosen = sorted(sorted(range(len(found)), key=list(map(abs, found)).__getitem__)[:kept])
        if chosen == inner:
            break
        inner = chosen
        columns = [[column[k] for k in inner] for column in design]
        normal = [[math.fsum(map(operator.mul, a, b)) for b in columns] for a in columns]
        refined = _solve(normal, [math.fsum(a) for a in columns])
        if refined is None:
            break
        weights = refined
    return weights


def _upper_edge(order: Sequence[int], xs: Sequence[float], ys: Sequence[float]) -> list[tuple[int, int]]:
    """The edges of the upper convex hull of the points (xs, ys), `order` sorting them by x: pairs of
    sample indices. A shared part that only speeds samples up (a cache skips work) leaves the unmoved
    ones at that edge, the slowest for their key, however few they are."""
    hull: list[int] = []
    for k in order:
        while len(hull) > 1:
            i, j = hull[-2], hull[-1]
            if (xs[j] - xs[i]) * (ys[k] - ys[i]) - (ys[j] - ys[i]) * (xs[k] - xs[i]) < 0:
                break  # a right turn: j stays on the upper hull
            hull.pop()
        hull.append(k)
    return list(zip(hull, hull[1:]))


def _mixture(
    residuals: list[float], fitted: int, sigma: float, least: float
) -> tuple[float, float, list[float]] | None:
    """(sigma, samples held, each sample's share in it) of the normal component when `residuals` are read
    as a mixture of the run's noise (normal) and what a shared part leaves (uniform over their range), by
    EM from `sigma`; None where it shrinks onto fewer than `least` of them (no noise read) or onto none."""
    squares = [r * r for r in residuals]
    widest = math.sqrt(max(squares))
    # (infinite: a timing next to zero, 1e-300 s among ~1 s steps, puts a relative residual past a float's
    # range; the uniform's density is then 0 and so is the normal's, 0 / 0 below: such residuals say nothing)
    if not 0 < widest < math.inf:
        return None
    m = len(squares)
    background = 1 / (2 * widest)  # the uniform's density over the residuals' range
    share, held, ownership = 0.5, 0.0, []
    for _ in range(50):
        if not sigma > 0:
            return None
        peak, spread2 = share / (sigma * _SQRT_TAU), -0.5 / (sigma * sigma)
        rest = (1 - share) * background
        # (one comprehension, the density named: a quarter less CPU than a generator inside a list, same sums)
        ownership = [(d := peak * math.exp(q * spread2)) / (d + rest) for q in squares]
        held = math.fsum(ownership)
        if held <= fitted:
            return None
        share = min(held / m, 1 - 1e-9)
        updated = math.sqrt(math.fsum(map(operator.mul, ownership, squares)) / (held - fitted))
        done = abs(updated - sigma) <= 1e-3 * sigma
        sigma = updated
        if done:
            break
    if held < least:  # the normal shrank onto a handful of residuals: no noise read
        return None
    return sigma, held, ownership


def _weighted(design: list[list[float]], ownership: Sequence[float]) -> list[float] | None:
    """Least squares of 1 on the design's columns, each sample weighted by its share in the noise's
    component (_mixture): the line the unmoved samples follow, all of them rather than the few that
    found it."""
    scaled = [list(map(operator.mul, column, ownership)) for column in design]
    normal = [[math.fsum(map(operator.mul, a, b)) for b in design] for a in scaled]
    return _solve(normal, [math.fsum(a) for a in scaled])


def _fit_noise(
    values: list[float], parts: list[list[float]], along_edge: bool = True
) -> tuple[float, bool, float | None] | None:
    """A column's relative noise (as a median deviation) read off a fit on its key's parts, None where it
    cannot be read. y = w0 + w1 * part (+ the other parts) is fitted relative to each sample (noise is
    a share of the timing) by least trimmed squares: of the lines through two samples half the run
    apart in the part's order or along the upper edge of the samples (_upper_edge) (and, where the key
    has two parts, the planes through three samples a third apart), the one whose FIT_SHARE-th smallest
    residual is least, refined on the samples it fits best; the fewer weights where they fit as well.
    So samples a shared part moves off the line (a cached prefix skips part of a prompt's prefill) do not
    tilt it. From NOISE_LOW_MIN samples the residuals are then read as a mixture of the run's noise,
    normal, and what the shared part leaves, uniform over their range (EM from the trimmed samples'
    spread: _mixture): the noise is the normal's. The line-through-neighbours reading counts a triple as
    noise only when none of its three samples is moved; this needs one unmoved sample per residual
    (with half the requests cached, one in two rather than one in eight). Where fewer than FIT_SHARE of
    the samples are unmoved (a cache hit by four requests in five), the fit that follows a third follows
    moved ones too; so a fit along the upper edge that follows FIT_MINORITY of them is read too
    (_minority), and where it holds, it counts (from NOISE_LOW_MIN samples). (reading, upper, edge):
    `upper` where the reading is the trimmed spread of fewer than NOISE_LOW_MIN samples, which reads low, or,
    from NOISE_LOW_MIN, where the fit along the edge holds on fewer unmoved samples than a noise is read from
    (_minority's `least` lowered to FIT_KEPT of the few: the third's reading is then the cache's, QUIET_RATIO);
    `edge`, below NOISE_LOW_MIN, the fit along the edge where it holds (the caller's, where the trimmed
    spread cannot count), else None. `along_edge`: False
    where no shared part can speed a majority up (the fit along the edge is then not read)."""
    step = max(1, len(values) // FIT_SAMPLES)
    ys = values[::step]
    m = len(ys)
    if m < NOISE_MIN or not min(ys) > 0:
        return None
    inverse = [1 / y for y in ys]
    design, orders, scaled = [], [], []  # per varying part: scaled to [0, 1] and divided by the sample; its order
    for part in parts:
        xs = part[::step]
        low, high = min(xs), max(xs)
        if high > low:
            unit = [(x - low) / (high - low) for x in xs]
            design.append([x * v for x, v in zip(unit, inverse)])
            orders.append(sorted(range(m), key=xs.__getitem__))
            scaled.append(unit)
    third = max(len(design) + 3, int(FIT_SHARE * m), min(m // 2, FIT_FEW))
    if third >= m:
        return None
    few = min(third, max(4, int(FIT_MINORITY * m)))  # (a line: two weights, and two samples more)
    shares = (third, few) if design and along_edge else (third,)
    best: list[tuple[float, list[list[float]], list[float]] | None] = [None] * len(shares)
    if not design:  # a fixed-length workload: the level the most samples agree on
        ordered = sorted(inverse)
        low, high = min(zip(ordered, ordered[third - 1 :]), key=lambda pair: (pair[1] - pair[0]) / (pair[1] + pair[0]))
        best[0] = (0.0, [inverse], [2 / (low + high)])
    half = m // 2
    if design:
        import numpy  # a run with a key's parts only (a training log, a random dataset): its line search

        inverse_array = numpy.array(inverse)
    for column, order, unit in zip(design, orders, scaled):
        pairs = [inverse, column]
        # the third follows lines through samples half the run apart; the smaller share, lines along the
        # upper edge alone (among the moved samples, lines through a chance alignment of a few are many)
        edge = _upper_edge(order, unit, ys) if len(shares) > 1 else []
        lines = (*zip(order, order[half:]), *edge)
        scores = _line_scores(numpy, inverse_array, numpy.array(column), lines, m - half, third, few)
        for n, (score, w0, w1) in enumerate(scores):
            if score is None:  # the line's two samples fix no line (on one ray through the origin)
                continue
            s = 0 if n < m - half else 1
            found = best[s]
            if found is None or score < found[0]:
                best[s] = (score, pairs, [w0, w1])
    if best[0] is None:
        return None
    planes: list[tuple[float, list[float]] | None] = [None] * len(shares)
    whole = [inverse, *design]
    if len(design) > 1:  # every part: elemental fits through one sample in each third of the first part's order
        rows = list(zip(*whole))
        span = m // len(whole)
        found_weights = []
        for i in range(0, m, 2):  # half the starts: enough sets of three unmoved samples, at half the cost
            weights = _solve([list(rows[orders[0][(i + j * span) % m]]) for j in range(len(whole))], [1.0] * len(whole))
            if weights is not None:
                found_weights.append(weights)
        for weights, score in zip(found_weights, _plane_scores(numpy, whole, found_weights, shares[0])):
            # (the smaller share: the edge's lines alone, above)
            plane = planes[0]
            if plane is None or score < plane[0]:
                planes[0] = (score, weights)
    readings = []
    for s, kept in enumerate(shares):
        found = best[s]
        if found is None:  # the smaller share: no line along the edge
            break
        _, chosen, start = found
        variants = [(chosen, _refit(chosen, start, kept))]
        plane = planes[s]
        if plane is not None:
            variants.append((whole, _refit(whole, plane[1], kept)))
        trimmed = []
        for used, weights in variants:
            spread = sorted(map(abs, _residuals(used, weights)))
            # the trimmed samples' spread as a normal's (their residuals shrunk by the weights fitted to them)
            scale = spread[kept - 1] / _HALF_NORMAL.inv_cdf(0.5 + kept / (2 * m)) * math.sqrt(kept / (kept - len(used)))
            trimmed.append((scale, used, weights))
        readings.append(min(trimmed, key=operator.itemgetter(0)))
    sigma, used, weights = readings[0]
    # (from NOISE_LOW_MIN, only where the best few lie far tighter than one component would put them)
    if len(readings) > 1 and (m < NOISE_LOW_MIN or _tighter(readings[0], third, readings[1], few)):
        found_few = _minority(readings[1], few, m, FIT_SHARE * m if m >= NOISE_LOW_MIN else m / 2)
        if found_few is not None and m >= NOISE_LOW_MIN:
            return found_few * 0.6745, False, None
        if found_few is not None:  # too few samples to trust it over the third: the caller's last resort
            return sigma * 0.6745, True, found_few * 0.6745
        # the cache's edge holds, but on fewer unmoved samples than a noise is read from (its line's two weights
        # and a few more): the third's reading is then the cache's, an upper reading (QUIET_NOISE)
        few_unmoved = m >= NOISE_LOW_MIN and _minority(readings[1], few, m, FIT_SHARE * m, FIT_KEPT * few) is not None
    else:
        few_unmoved = False
    if m < NOISE_LOW_MIN:  # too few residuals to tell two components apart: the trimmed spread (an upper reading)
        return sigma * 0.6745, True, None
    found_third = _mixture(_residuals(used, weights), len(used), sigma, FIT_KEPT * third)
    return None if found_third is None else (found_third[0] * 0.6745, few_unmoved, None)


def _line_scores(
    numpy: Any, inverse: Any, column: Any, lines: Sequence[tuple[int, int]], thirds: int, third: int, few: int
) -> list[tuple[float | None, float, float]]:
    """Per line through samples j and k of the fit y = w0 + w1 * part (relative: 1 = w0 / y + w1 * part / y),
    (its `kept`-th smallest squared residual, w0, w1): kept = third for the first `thirds` lines, else few;
    None for a line the two samples do not fix. All lines at once (numpy), each value as the per-line loop it
    replaced computed it (the same operations in the same order: tests/unit/test_fingerprint_speed.py)."""
    if not lines:
        return []
    j, k = (numpy.array(side, dtype=numpy.intp) for side in zip(*lines))
    det = inverse[j] * column[k] - inverse[k] * column[j]
    with numpy.errstate(all="ignore"):  # a det of 0 or a residual past a float's range: that line is set apart
        w0 = (column[k] - column[j]) / det
        w1 = (inverse[j] - inverse[k]) / det
        residuals = 1 - w0[:, None] * inverse[None, :] - w1[:, None] * column[None, :]
        squares = residuals * residuals  # ranked as |r| is (the scores are only compared)
    valid = (numpy.abs(det) > 0).tolist()
    finite = numpy.isfinite(squares).all(axis=1).tolist()
    ranks = [
        *(numpy.partition(squares[:thirds], third - 1, axis=1)[:, third - 1].tolist() if thirds else []),
        *(numpy.partition(squares[thirds:], few - 1, axis=1)[:, few - 1].tolist() if len(lines) > thirds else []),
    ]
    scores: list[tuple[float | None, float, float]] = []
    for n, (a, b) in enumerate(zip(w0.tolist(), w1.tolist())):
        kept = third if n < thirds else few
        if not valid[n]:
            scores.append((None, 0.0, 0.0))
        elif finite[n]:
            scores.append((ranks[n], a, b))
        else:  # an infinity or NaN: ranked as Python's sort ranks them, as before
            ranked = sorted([(r := 1 - a * x - b * c) * r for x, c in zip(inverse.tolist(), column.tolist())])
            scores.append((ranked[kept - 1], a, b))
    return scores


def _plane_scores(numpy: Any, whole: list[list[float]], found: list[list[float]], kept: int) -> list[float]:
    """Per elemental fit's weights, the `kept`-th smallest |residual| of 1 - whole . weights, all at once."""
    if not found:
        return []
    weights = numpy.array(found)
    residuals = numpy.ones((len(found), len(whole[0])))
    with numpy.errstate(all="ignore"):
        for column, w in zip(numpy.array(whole), weights.T):
            residuals = residuals - w[:, None] * column[None, :]
        magnitudes = numpy.abs(residuals)
    finite = numpy.isfinite(magnitudes).all(axis=1).tolist()
    ranks = numpy.partition(magnitudes, kept - 1, axis=1)[:, kept - 1].tolist()
    return [
        rank if good else sorted(map(abs, _residuals(whole, weights)))[kept - 1]  # as Python's sort ranks them
        for rank, good, weights in zip(ranks, finite, found)
    ]


def _tighter(wide: tuple[float, Any, Any], kept: int, tight: tuple[float, Any, Any], few: int) -> bool:
    """Whether the `few`-th smallest residual of the fit along the edge (`tight`) is FIT_MINORITY_GAP times
    further below the `kept`-th of the third's fit (`wide`) than their ranks put it: for one component,
    whose density is about flat near its line, the k-th smallest residual grows about as k does; a tight
    minority at the edge, with the rest moved far off it, puts the third's far further out (measured: 2.4-60x
    at 80% hits; up to 15x on bench/generate.py's uniform noise, whose hard edge the checks in _minority
    then refuse). It spares the mixture's EM where the edge cannot be a minority (most runs)."""
    outer = sorted(map(abs, _residuals(wide[1], wide[2])))[kept - 1]
    inner = sorted(map(abs, _residuals(tight[1], tight[2])))[few - 1]
    return outer * few > FIT_MINORITY_GAP * kept * inner


def _minority(
    reading: tuple[float, list[list[float]], list[float]], few: int, m: int, most: float, least: float | None = None
) -> float | None:
    """The noise's sigma read off a fit along the upper edge that follows `few` samples (_fit_noise), where
    they are a minority unmoved: the mixture's normal holds fewer than `most` of the m samples (from
    NOISE_LOW_MIN, FIT_SHARE of them: more, and the fit that follows a third reads them; below, half: the
    trimmed third then holds moved samples too), and none of the rest lie far above them (a shared part
    that only speeds samples up, as a cache skips work: _above; one normal component fails it, as half of
    it lies above the line a few of its samples found). The moved samples lie far below, so even a few
    residuals tell the two components apart. The line is refitted on the normal's samples by their share
    in it (_weighted), a few times, so that it follows all the unmoved samples. `least`: how many samples the
    normal must hold (the default above; _fit_noise lowers it to tell a cache's edge on too few samples)."""
    sigma, used, weights = reading
    # from NOISE_LOW_MIN, more than the few the line was found on (a line through a chance alignment of a
    # few holds those alone); below, a quarter of 16 requests may be all that is unmoved
    if least is None:
        least = few + len(used) if m >= NOISE_LOW_MIN else FIT_KEPT * few
    found = None
    for _ in range(FIT_ROUNDS):
        residuals = _residuals(used, weights)
        if _above(residuals, sigma):
            return None
        mixed = _mixture(residuals, len(used), sigma, least)
        if mixed is None:
            return None
        sigma, held, ownership = mixed
        if held >= most:
            return None
        found = sigma
        refined = _weighted(used, ownership)
        if refined is None:
            break
        weights = refined
    if found is None:
        return None
    residuals = _residuals(used, weights)
    # the moved samples lie far below, not right under the unmoved ones: a hard edge of one component
    # (uniform noise) holds a few samples close to a line through them, and more just below it
    below = sum(1 for r in residuals if -2 * FIT_ABOVE * found < r < -FIT_ABOVE * found)
    return found if not _above(residuals, found) and below <= m // FIT_STRAYS else None


def _above(residuals: Sequence[float], sigma: float) -> bool:
    """Whether any sample lies more than FIT_ABOVE sigma above the fitted line (relative residual y - fit)."""
    bound = FIT_ABOVE * sigma
    return any(r > bound for r in residuals)


def _below_noise(
    residuals: Sequence[float], ys: Sequence[float], fitted: int, noise: float | None, quantile: float = AGREE_QUANTILE
) -> bool:
    """Whether residuals this small are beyond chance for two independent runs whose noise is at
    least `noise` (a median deviation, relative: _own_noise), given how many samples were fitted with
    how many weights. Under that null each |residual| / y is below m with chance erf(m / sigma / sqrt 2),
    so k of n below m is a binomial tail; m is their AGREE_QUANTILE (or `quantile`) (so that a quarter of strays,
    samples a merge or a drop paired wrongly, cannot hide a copy), and the tail must be at most
    CHANCE_TAIL. True when the noise is not known (the limits alone then speak, as before)."""
    if not noise:
        return True
    count = len(residuals)
    if count <= fitted:
        return False
    sigma = noise / 0.6745  # the median deviation of a normal variable is 0.6745 of its sigma
    relative = sorted(r / y for r, y in zip(residuals, ys))
    at = math.ceil(quantile * (count - 1))
    m = relative[at] * math.sqrt(count / (count - fitted)) / sigma
    return _binomial_tail(count, at + 1, math.erf(m / math.sqrt(2))) <= CHANCE_TAIL


def _noise_floor(a: NearPrint, b: NearPrint, column: int) -> float | None:
    """The larger of the two runs' own relative noise in a column (a copy cannot lower its
    original's), None unless both runs' are known; a reading that bounds a run's noise from above only
    counts as at most the column's QUIET_NOISE (_calibrated)."""
    known = [n[9][column] for n in (a, b) if len(n) > 9 and n[9] is not None and column < len(n[9])]
    if len(known) < 2 or None in known:  # one run's noise unread (a coarse clock's repeats): the limits alone;
        return None  # else a copy's own jitter would set the floor its original could not
    names = TIMING_COLUMNS.get(a[5], ())
    quiet = QUIET_NOISE.get(a[5], {}).get(names[column]) if column < len(names) else None
    return max(_calibrated(read, quiet) for read in known)


def _calibrated(read: float, quiet: float | None) -> float:
    """A run's own noise reading as the comparisons count it: as read, except an upper one (_own_noise keeps it
    as its negative), which counts as at most the column's QUIET_NOISE where it has one."""
    if read >= 0:
        return read
    return -read if quiet is None else min(-read, quiet)


def _near_print(kind: str, columns: Columns) -> NearPrint | None:
    """The sketch a near copy is recognised by, from the timing columns (None without them).

    Row hashes are CPython's hash of a tuple of numbers: numeric hashes are defined by the language
    and tuple hashing is fixed since 3.8 (64-bit), and one C-level pass is ~20x cheaper than SHA-256.
    """
    timing = _numeric(columns, TIMING_COLUMNS.get(kind, ()))
    align = _numeric(columns, ALIGN_COLUMNS.get(kind, ()))
    if not timing or align is None:  # no timing column: nothing to sketch (and zip below would never end)
        return None
    alignment = _alignment_hashes(align)  # once, for the sketches and the merge keys
    rows, shared, aligned, sequence, few, windows, ranked = _near_parts(timing, align, alignment)
    noise = _own_noise(timing, align)
    spreads = [candidates.spread(columns.ordered(name)) for name in TIMING_COLUMNS[kind][: len(timing)]]
    # (a training log's steps: an honest log holds each once; requests of one length recur by chance)
    repeated = _repeated(alignment, timing) if kind == "training" else None
    wide = _wide_means(timing, alignment, aligned) if sequence is None else None
    keys = candidates.sample_keys(spreads, aligned, windows, few, sequence, ranked, repeated, wide)
    # the merge keys: a copy merged with another dataset's run keeps them (none where keys repeat too often)
    merged = candidates.merge_keys(alignment, timing)
    # kept packed (JSON text, ~10 KB) while the registry is in memory; unpacked for the runs being compared
    # (_near_of): as tuples of floats the sketch took ~50 KB a run, 5 GB at 100,000 run files (issue 54).
    # JSON rather than marshal: a shard's partial carries it to `orv merge-results`, and reading JSON
    # from a file can build nothing but data.
    parts = (shared, aligned, sequence, few, windows, ranked)
    finite = all(all(map(math.isfinite, column)) for column in timing)
    # orjson writes inf as null; the stdlib's Infinity reads back as it was (a value past a float's range)
    text = orjson.dumps(parts) if finite else json.dumps(parts, allow_nan=True).encode()
    packed = zlib.compress(text, 1)  # a third of the text (the windows repeat every aligned value)
    return ("near", len(rows), packed, kind, noise, keys, merged)


MERGED_SHARE = 16  # a training log with at least 1 in this many of its steps held twice or more: a merge (_repeated)


def _repeated(keys: list[int], timing: list[list[Any]]) -> tuple[tuple[int, tuple[Any, ...]], ...] | None:
    """For the candidate keys of a merge of two logs (the steps both hold, twice): the SKETCH lowest keys held
    2 to FEW_OCCURRENCES times, each with every occurrence's timings (as `few`), where they are at least
    1 / MERGED_SHARE of the run's distinct keys and at least MIN_MATCHED. Those are the shorter log's own
    keys, so a copy of it merged with a log five times longer forms its groups (candidates._merged_keys),
    which `few`, the lowest of every key the merge holds, does not: it holds a fifth of them. None for a
    run whose keys do not repeat so (honest runs: every step once)."""
    counts = Counter(keys)
    if len(counts) == len(keys) or max(counts.values()) > FEW_OCCURRENCES:
        return None
    held = [key for key, count in counts.items() if count > 1]
    if len(held) < MIN_MATCHED or len(held) * MERGED_SHARE < len(counts):
        return None
    wanted = set(_lowest(held, SKETCH))
    grouped: dict[int, list[tuple[float, ...]]] = {}
    for i in itertools.compress(range(len(keys)), map(wanted.__contains__, keys)):
        grouped.setdefault(keys[i], []).append(tuple(float(column[i]) for column in timing))
    return tuple(sorted((key, tuple(sorted(rows))) for key, rows in grouped.items()))


WIDE_REACH = 7  # neighbours either side a wide mean takes (_wide_means)


def _wide_means(timing: list[list[Any]], keys: list[int], aligned: Sequence[tuple[int, Any]]) -> list[list[float]]:
    """Per timing column, each aligned sample's mean with WIDE_REACH neighbours either side in list order
    (fewer at the run's ends), for the candidate keys: a copy made of a moving average of 2 or 3 samples
    moves a mean of 15 by a fifth of what it moves the windows' mean of 5, relative to their spread.
    An aligned sample of a run aligned by key is a key the run holds once, so its hash is (key, 0)'s."""
    where = {hash((key, 0)): i for i, key in enumerate(keys)}
    count = len(keys)
    found = []
    for column in timing:
        sums = [0.0, *itertools.accumulate(map(float, column))]
        means = []
        for aligned_key, _ in aligned:
            i = where[aligned_key]
            low, high = max(0, i - WIDE_REACH), min(count, i + WIDE_REACH + 1)
            means.append((sums[high] - sums[low]) / (high - low))
        found.append(means)
    return found


def _alignment_hashes(align: list[list[Any]]) -> list[int]:
    """Each sample's alignment key, hashed as _near_parts hashes it."""
    return list(map(hash, zip(itertools.repeat(_KEY_SALT), *align)))


def _unpack(packed: NearPrint) -> NearPrint:
    """The near print in the layout the comparisons read (NearPrint, above; lists where it was built with
    tuples), from its packed form."""
    inflate = zlib.decompressobj()
    text = inflate.decompress(packed[2], PACKED_LIMIT)
    if inflate.unconsumed_tail:
        raise ValueError("a packed near print inflates past its limit")
    try:
        parts = orjson.loads(text)
    except orjson.JSONDecodeError:  # written by the stdlib for an infinite value (above)
        parts = json.loads(text)
    shared, aligned, sequence, few, windows, ranked = parts
    return (
        "near",
        packed[1],
        shared,
        aligned,
        None,  # the level's slot (NearPrint): the comparisons' indices stay as they were
        packed[3],
        sequence,
        few,
        windows,
        packed[4],
        ranked,
        *packed[5:],
    )


def can_tell_a_copy(fingerprint: Fingerprint) -> bool:
    """Whether a run has samples enough for same_measurement to recognise a near copy of it: at least
    MIN_DISTINCT distinct timing rows. Below that (llama-bench's five repetitions, a handful of requests),
    one appended sample or 1e-5 jitter hides a copy, so such a run cannot prove it is independent."""
    near = _near_of(fingerprint)
    return near is not None and near[1] >= MIN_DISTINCT


_UNPACKED: dict[int, tuple[Any, Any]] = {}


def _kept(cache: dict[int, tuple[Any, Any]], of: Any, make: Callable[[Any], Any], kept: int = 0) -> Any:
    """make(of), kept in `cache` for the CACHE_KEPT runs used most recently (or `kept` objects), by identity
    (`of` is not changed and stays alive while kept beside its result, so its id is not reused meanwhile).
    The least recently used leaves first (emptying the whole cache when full, as before, unpacked each run of
    the 10,000 bench registry's ~60 times in ORV304's order: checks/independence.py)."""
    key = id(of)
    found = cache.get(key)
    if found is not None and found[0] is of:
        cache[key] = cache.pop(key)  # the most recently used last: the least recently used leaves first
        return found[1]
    if found is not None:  # an id that a freed object held
        del cache[key]
    while len(cache) >= (kept or CACHE_KEPT):
        del cache[next(iter(cache))]
    made = make(of)
    cache[key] = (of, made)
    return made


CACHE_KEPT = 2048  # runs kept unpacked and viewed: ORV304 compares a bucket's runs one after another


def _near_of(fingerprint: Fingerprint) -> NearPrint | None:
    """The run's near print, unpacked (kept for the runs used most recently)."""
    last = fingerprint[-1] if fingerprint else None
    if last is None or last[0] != "near":
        return None
    return _kept(_UNPACKED, last, _unpack)


def _values_of(fingerprint: Fingerprint) -> ValuesPrint | None:
    return next((entry for entry in fingerprint[1:] if entry[0] == "values"), None)


def _prints_of(fingerprint: Fingerprint) -> dict[str, tuple[Any, ...]]:
    """The per-column quantile prints, by column."""
    return {entry[0]: entry for entry in fingerprint[1:] if entry[0] not in ("near", "values")}


def shared_share(a: NearPrint, b: NearPrint) -> float | None:
    """The estimated share of the smaller run's distinct timing rows that the other run holds too;
    None when either run's rows are too few or too coarse to say (MIN_DISTINCT, DISTINCT_SHARE).
    Exact when both runs have at most SKETCH distinct rows."""
    na, ha, aligned_a = a[1], a[2], a[3]
    nb, hb, aligned_b = b[1], b[2], b[3]
    for n, aligned in ((na, aligned_a), (nb, aligned_b)):
        samples = max(len(aligned), 1)  # aligned holds min(samples, SKETCH): a floor for the sample count
        if n < MIN_DISTINCT or (samples < SKETCH and n < DISTINCT_SHARE * samples):
            return None
    return _bottom_k_share(ha, na, hb, nb, SKETCH)


def aligned_equal(a: NearPrint, b: NearPrint) -> float | None:
    """The share of aligned samples whose timings are bit-identical in both runs, when that share is
    far beyond what the runs' own resolution and noise allow by chance; None otherwise.

    Chance, per varying column, is the clock's resolution (the smallest gap between the matched
    values) over the spread of the differing pairs' differences: a coarse log (Megatron's 0.1 ms) on
    a quiet cluster repeats a step time by chance, full-precision floats never do. An edit of some
    samples leaves the rest equal and its differences large, so its chance is small.
    """
    view_a, view_b = _view(a), _view(b)
    if len(view_a.keys & view_b.keys) < MIN_MATCHED:
        return None
    by_key = view_a.by_key
    matched = [(by_key[key], values) for key, values in b[3] if key in by_key]
    equal = sum(1 for x, y in matched if x == y)
    if equal < MIN_SHARED_VALUES:
        return None
    chance = 1.0
    for column in range(len(matched[0][0])):
        pooled = sorted({v for pair in matched for v in (pair[0][column], pair[1][column])})
        if len(pooled) < 2:
            continue  # constant: equal by construction, no evidence either way
        resolution = min(y - x for x, y in zip(pooled, pooled[1:]))
        differences = [abs(x[column] - y[column]) for x, y in matched if x[column] != y[column]]
        if not differences:
            return None  # every sample equal in this column: the other rules speak for such a copy
        spread = 1.4826 * statistics.median(differences)
        chance *= min(1.0, resolution / (spread * math.sqrt(2 * math.pi)))
    share = equal / len(matched)
    return share if share >= max(VALUE_SHARE, VALUE_OVER_CHANCE * chance) else None


class _View:
    """What comparing a run's near print with others needs, built once per run rather than once per
    pair (ORV304 compares a run with every run sharing a bucket): its aligned samples by key, their
    windows by width, and whether any key repeats; the keys held a few times (slot 7), every one and those
    held more than once (matched_under_key); as numpy arrays, when first asked for (filtered_agreement's
    fits, _too_few_under_key's keys held once, joint_matches' fastest samples)."""

    __slots__ = (
        "by_key",
        "keys",
        "windows",
        "repeats",
        "few_by_key",
        "few_keys",
        "few_repeated",
        "_near",
        "_arrays",
        "_aligned",
        "_fastest",
        "_few",
    )

    def __init__(self, near: NearPrint) -> None:
        self.by_key = dict(near[3])
        self.keys = frozenset(self.by_key)
        self.windows: dict[int, dict[int, Any]] = {}
        if len(near) > 8:
            for width in range(WINDOW, 0, -1):
                taps = slice(WINDOW - width, WINDOW + width + 1)
                self.windows[width] = {
                    key: window[taps] for (key, _), window in zip(near[3], near[8]) if None not in window[taps]
                }
        few = near[7] if len(near) > 7 else None
        self.few_by_key = dict(few) if few is not None else {}
        self.few_keys = frozenset(self.few_by_key)
        self.few_repeated = frozenset(key for key, rows in self.few_by_key.items() if len(rows) > 1)
        self.repeats = bool(self.few_repeated)
        self._few: tuple[tuple[Any, Any] | None] | None = None
        self._near = near
        self._arrays: dict[int, tuple[dict[int, int], Any]] = {}
        self._aligned: tuple[list[int], Any] | None = None
        self._fastest: tuple[tuple[Any, list[float], Any] | None] | None = None

    def window_array(self, width: int) -> tuple[dict[int, int], Any]:
        """The whole windows of `width` (self.windows): each key's row, and the windows as one numpy array
        (row, neighbour, timing column)."""
        found = self._arrays.get(width)
        if found is None:
            import numpy  # (as _filter_verdict)

            windows = self.windows[width]
            columns = len(self._near[3][0][1]) if self._near[3] else 0
            shape = (len(windows), 2 * width + 1, columns)
            array = numpy.array(list(windows.values()), dtype=float).reshape(shape)
            found = self._arrays[width] = ({key: row for row, key in enumerate(windows)}, array)
        return found

    def aligned_array(self) -> tuple[list[int], Any]:
        """The aligned samples' keys in their order, and their timings as one numpy array (sample, column)."""
        if self._aligned is None:
            import numpy

            aligned = self._near[3]
            columns = len(aligned[0][1]) if aligned else 0
            values = numpy.array([values for _, values in aligned], dtype=float).reshape(len(aligned), columns)
            self._aligned = ([key for key, _ in aligned], values)
        return self._aligned

    def few_arrays(self) -> tuple[Any, Any] | None:
        """The keys held once among those held a few times (near print's slot 7), as a sorted numpy array, and
        their samples' timings as logs; None where some timing there is no positive finite number."""
        if self._few is None:
            import numpy

            single = [(key, rows[0]) for key, rows in self._near[7] or () if len(rows) == 1]
            columns = len(single[0][1]) if single else 0
            values = numpy.array([row for _, row in single], dtype=float).reshape(len(single), columns)
            keys = numpy.array([key for key, _ in single], dtype=numpy.int64)
            fine = bool(numpy.all(values > TINY) and numpy.all(values < SANE))
            self._few = ((keys, numpy.log(values)) if fine else None,)
        return self._few[0]

    def fastest_logs(self) -> tuple[Any, list[float], Any] | None:
        """_fastest_logs of the run, once."""
        if self._fastest is None:
            self._fastest = (_fastest_logs(self._near),)
        return self._fastest[0]


_VIEWS: dict[int, tuple[Any, Any]] = {}


def _view(near: NearPrint) -> _View:
    """The run's _View, kept for the runs compared most recently."""
    return _kept(_VIEWS, near, _View)


def timing_agreement(a: NearPrint, b: NearPrint) -> float | None:
    """How closely b's timings follow a's sample by sample, after the best affine map a*x + b per
    column: the largest relative residual (its AGREE_QUANTILE) over the informative timing columns,
    when each is below its column's limit (AGREE_RELATIVE) and agrees far closer than its own spread
    (AGREE_SPREAD); None when they do not agree so, or when fewer than MIN_MATCHED samples align.

    A column constant in both runs (llama-bench's ttft_ms = 0.0 on a generation test) says nothing
    and is skipped; at least one column must be informative.
    """
    view_a, view_b = _view(a), _view(b)
    noise = [_noise_floor(a, b, column) for column in range(len(TIMING_COLUMNS.get(a[5], ())))]
    found = None
    if len(view_a.keys & view_b.keys) >= MIN_MATCHED:
        by_key = view_a.by_key
        found = _agreement([(by_key[key], values) for key, values in b[3] if key in by_key], a[5], noise=noise)
    if found is None and len(a) > 6 and a[6] is not None and b[6] is not None:
        found = _agreement(_in_order(a[6], b[6], SEQUENCE_MATCHED), a[5], SEQUENCE_MATCHED, noise)
    if found is None and len(a) > 7 and a[7] is not None and b[7] is not None and (view_a.repeats or view_b.repeats):
        found = _agreement(_nearest_under_key(a[7], b[7]), a[5], noise=noise, quantile=KEY_QUANTILE)
    if found is None and len(a) > 10 and a[10] is not None and b[10] is not None:
        found = _agreement(_in_order(a[10], b[10], SEQUENCE_MATCHED), a[5], SEQUENCE_MATCHED, noise)
        if found is None and len(a[10][0]) > 1:  # merged with another run: its fastest interleave
            found = _agreement(_nearest_in_value(a[10], b[10]), a[5], SEQUENCE_MATCHED, noise)
    return found


def _nearest_in_value(xs: Sequence[Sequence[float]], ys: Sequence[Sequence[float]]) -> list[tuple[Any, Any]]:
    """Two runs' fastest samples (sorted by their first timing) paired by that timing: over the range
    both cover, each sample of the run with fewer there with the other's nearest, one to one. Only with a second
    timing column, which must then follow on its own: the first agrees by construction."""
    if not xs or not ys:
        return []
    top = min(xs[-1][0], ys[-1][0])
    low = max(xs[0][0], ys[0][0])
    inside_x = [row for row in xs if low <= row[0] <= top]
    inside_y = [row for row in ys if low <= row[0] <= top]
    flip = len(inside_x) > len(inside_y)
    few, many = (inside_y, inside_x) if flip else (inside_x, inside_y)
    if not many:
        return []
    leads = [row[0] for row in many]
    # one to one: where several samples find the same nearest, only the closest keeps it. A merge pairs
    # each of the original's samples with its own copy, once; a sample standing for several let chance
    # agreement of a few honest samples count as many (7 of the 8 honest pairs of the bench's
    # 10,000-run-file registry ORV304 refused; 0 of 789,366 such comparisons there once one to one)
    nearest: dict[int, tuple[float, int]] = {}
    for n, row in enumerate(few):
        at = bisect.bisect_left(leads, row[0])
        near = min((i for i in (at - 1, at) if 0 <= i < len(many)), key=lambda i: abs(leads[i] - row[0]))
        distance = abs(leads[near] - row[0])
        if near not in nearest or distance < nearest[near][0]:
            nearest[near] = (distance, n)
    return [(many[i], few[n]) if flip else (few[n], many[i]) for i, (_, n) in sorted(nearest.items())]


# Joint matches (matched_jointly): a fixed-length run's fastest requests against another's, in every timing at once
JOINT_SPREAD = 4  # a match: within 1/JOINT_SPREAD of the pair's own spread (median deviation) in every column ...
JOINT_CAP = 0.005  # ... and at most this far (relative): a copy's jitter below the floor (docs/metrics.md)
JOINT_RING = 2  # the shifted windows chance is read off: this many either side per column (24 for two columns)
JOINT_LEAST = 5  # matches a copy must have at least
JOINT_STANDS_OUT = 1e-3  # a chance reading this unlikely under the pooled ones is structure, and counts alone


CELLS = 2 * JOINT_RING + 1  # shifts per column, -JOINT_RING..JOINT_RING windows


def _shift_cells(offsets: Sequence[Any], numpy: Any) -> Any:
    """Each shift's cell, from its shift per column in whole windows (one integer array per column): the shifts
    + JOINT_RING as digits in base CELLS, the first column's the most significant, so that the unshifted cell
    is the middle one (len // 2) of the CELLS ** columns (_joint_counts, _shifted_key_counts, _inner_ring)."""
    cell = numpy.zeros(len(offsets[0]) if len(offsets) else 0, dtype=numpy.int64)
    for offset in offsets:
        cell = cell * CELLS + (numpy.asarray(offset).astype(numpy.int64) + JOINT_RING)
    return cell


def _distinct_per_cell(cells: Any, owners: Any, owned: int, columns: int, numpy: Any) -> Any:
    """For every cell (_shift_cells, of `columns` columns): how many distinct owners (0..owned - 1) hold one of
    the entries in it (a sample or a key counts once however many of its pairs fall there)."""
    return numpy.bincount(numpy.unique(cells * owned + owners) // owned, minlength=CELLS**columns)


def _joint_counts(xs: Any, ys: Any, width: Any, numpy: Any) -> Any:
    """For every shift of ys by whole windows (2 * width per column, up to JOINT_RING either side): how many
    of xs and of ys have a partner within `width` in every column, the smaller of the two (a sample can
    stand for one match only, so neither run's count is more than its own). Indexed by the shift's cell
    (_shift_cells). Column by column on (x, y) arrays: a third axis for the columns costs ~8x as much in
    numpy."""
    inside = None
    offsets = []
    for column in range(xs.shape[1]):  # the shift, in windows, that holds each (x, y)
        offset = numpy.rint((xs[:, column, None] - ys[None, :, column]) / (2 * width[column]))
        near = numpy.abs(offset) <= JOINT_RING
        inside = near if inside is None else inside & near
        offsets.append(offset)
    xi, yi = numpy.nonzero(inside)
    cell = _shift_cells([offset[xi, yi] for offset in offsets], numpy)
    rows = _distinct_per_cell(cell, xi, len(xs), xs.shape[1], numpy)
    return numpy.minimum(rows, _distinct_per_cell(cell, yi, len(ys), xs.shape[1], numpy))


def _within(xs: Any, ys: Any, width: Any, numpy: Any) -> Any:
    """(x, y): whether y lies within `width` of x in every column (column by column, as _joint_counts)."""
    close = None
    for column in range(xs.shape[1]):
        near = numpy.abs(xs[:, column, None] - ys[None, :, column]) <= width[column]
        close = near if close is None else close & near
    return close


def _clustered(values: Any, width: Any, numpy: Any) -> int:
    """How many of a run's own samples have another of its samples within `width` in every column, a
    bit-identical one not counted (a duplicate is a copy's trace, not the workload's clustering)."""
    close = _within(values, values, width, numpy)
    close &= ~_within(values, values, numpy.zeros(values.shape[1]), numpy)  # (a duplicate: every column equal)
    return int(numpy.count_nonzero(close.any(axis=1)))


def _poisson_tail(hits: int, expected: float) -> float:
    """P(X >= hits) for X ~ Poisson(expected)."""
    term, below = math.exp(-expected), 0.0
    for k in range(hits):
        below += term
        term *= expected / (k + 1)
    return max(0.0, 1.0 - below)


def _fastest_logs(near: NearPrint) -> tuple[Any, list[float], Any] | None:
    """A by-order run's fastest samples (NearPrint's slot 10) as logs, each column's median deviation there
    (0 where the column is constant; floats: joint_matches reads them one by one), and each column sorted
    (joint_matches' first look); None where there are none or a timing is no positive finite number."""
    ranked = near[10] if len(near) > 10 else None
    if not ranked:
        return None
    import numpy  # (as _filter_verdict)

    values = numpy.asarray(ranked, dtype=float)
    if values.ndim != 2 or not (numpy.all(values > TINY) and numpy.all(values < SANE)):
        return None
    logs = numpy.log(values)
    spread = numpy.median(numpy.abs(logs - numpy.median(logs, axis=0)), axis=0)
    return logs, spread.tolist(), numpy.sort(logs, axis=0)


def joint_matches(a: NearPrint, b: NearPrint) -> tuple[int, int, float, float] | None:
    """Two fixed-length runs' fastest requests that match in every timing column at once: (matches, samples
    compared, the window's relative width, chance's expectation), or None where too few match to say.
    A copy reordered, thinned and merged with another run keeps its original's requests, each with its
    TTFT *and* its e2e; another run's requests of one length come with other pairs of them.

    Null hypothesis: the runs are independent draws of one workload's requests, so near a sample of one run
    the other's samples lie about as densely as they do a few windows away, and about as densely as the run's
    own samples lie around each other. Chance's expectation is the larger of the matches counted with one
    run shifted by whole windows (JOINT_RING either side per column) and of each run's own clustering at the
    window's width (a workload whose requests fall in tight waves matches itself as often as another run);
    the matches must lie beyond the Poisson tail CHANCE_TAIL of it. The window is 1/JOINT_SPREAD of the
    pair's own spread per column (at most JOINT_CAP), so a quiet machine's re-run, whose requests lie within
    a window of each other, matches as much shifted as not. Needs two informative columns: one column's
    values alone fall near each other by chance (llama-bench's repetitions: the other rules).
    """
    found_a, found_b = _view(a).fastest_logs(), _view(b).fastest_logs()
    if found_a is None or found_b is None:
        return None
    (xs, spread_x, _), (ys, spread_y, sorted_y) = found_a, found_b
    if xs.shape[1] != ys.shape[1] or min(len(xs), len(ys)) < MIN_MATCHED:  # (as the candidate keys)
        return None
    informative = [c for c, (x, y) in enumerate(zip(spread_x, spread_y)) if max(x, y) > 0]
    spread = [min(spread_x[c], spread_y[c]) for c in informative]
    if len(informative) < 2 or min(spread) <= 0:
        return None
    import numpy  # (as _filter_verdict)

    # most pairs stop here, too few matches for any chance to be beaten: each column alone first (a sorted
    # search, the last column, e2e, first: it leaves 7% of the bench's pairs), at the widest the window can be
    def too_few(widths: Sequence[float]) -> bool:
        for column, width in reversed(list(zip(informative, widths))):
            ordered, values = sorted_y[:, column], xs[:, column]
            low = numpy.searchsorted(ordered, values - width)
            if numpy.count_nonzero(numpy.searchsorted(ordered, values + width, side="right") > low) < JOINT_LEAST:
                return True
        return False

    widest = [min(JOINT_CAP, each / JOINT_SPREAD) for each in spread]
    if too_few(widest):
        return None
    # far closer than the runs' own noise too, where read (as timing_agreement's AGREE_SPREAD): requests whose
    # shared part differs by position (a long prompt's prefill queue: TTFT rising request by request) would
    # else match their re-run's one by one, while no sample of either run lies near another of its own
    noise = [_noise_floor(a, b, column) for column in informative]
    widths = [min(each, AGREE_SPREAD * n) if n else each for each, n in zip(widest, noise)]
    if widths != widest and too_few(widths):
        return None
    if len(informative) < xs.shape[1]:
        xs, ys = xs[:, informative], ys[:, informative]
    width = numpy.array(widths)
    close = _within(xs, ys, width, numpy)
    if min(numpy.count_nonzero(close.any(axis=1)), numpy.count_nonzero(close.any(axis=0))) < JOINT_LEAST:
        return None
    counts = _joint_counts(xs, ys, width, numpy)
    centre = len(counts) // 2
    hits = int(counts[centre])
    if hits < JOINT_LEAST:
        return None
    shifted = numpy.delete(counts, centre)
    # each run's own clustering, as matches the other run would have if it were drawn like this one
    own = [
        _clustered(xs, width, numpy) * min(1.0, len(ys) / (len(xs) - 1)),
        _clustered(ys, width, numpy) * min(1.0, len(xs) / (len(ys) - 1)),
    ]
    expected = max((float(shifted.sum()) + sum(own)) / (len(shifted) + 2), 0.5 / len(shifted))
    expected = _with_structure(expected, (*own, float(shifted.max())))
    return hits, min(len(xs), len(ys)), float(width.max()), expected


def _shifted_key_counts(residuals: Any, owners: Any, width: Any, numpy: Any) -> Any:
    """For every shift by whole windows (2 * width per column, up to JOINT_RING either side): how many keys
    have a residual (one per pair of samples under the key) within `width` of it in every column. Indexed
    by the shift's cell (_shift_cells)."""
    offset = numpy.rint(residuals / (2 * width))
    inside = numpy.all(numpy.abs(offset) <= JOINT_RING, axis=1)
    cell = _shift_cells(offset[inside].T, numpy)
    owned = int(owners.max()) + 1 if len(owners) else 1
    return _distinct_per_cell(cell, owners[inside], owned, offset.shape[1], numpy)


def _with_structure(expected: float, readings: Iterable[float]) -> float:
    """Chance's expectation pooled from the shifted windows' readings, raised to any one reading that stands out
    from it (its Poisson tail below JOINT_STANDS_OUT): structure at the window's scale, as waves of requests."""
    for reading in readings:
        if _poisson_tail(math.ceil(reading), expected) < JOINT_STANDS_OUT:
            expected = max(expected, reading)
    return expected


def _window_cap(kind: str, column: int) -> float:
    """The widest window rule 7 may use in a timing column: JOINT_CAP, and the column's AGREE_RELATIVE."""
    names = TIMING_COLUMNS.get(kind, ())
    return (
        min(JOINT_CAP, AGREE_RELATIVE.get(kind, {}).get(names[column], JOINT_CAP)) if column < len(names) else JOINT_CAP
    )


def matched_under_key(a: NearPrint, b: NearPrint) -> tuple[int, int, float, float] | None:
    """Samples under the keys both runs hold (a training log's steps, a random dataset's requests by their
    token counts) that match in every timing column at once far more often than chance: (keys matched, keys
    shared, the window's relative width, chance's expectation), or None. A merge of a copy with another
    run, thinned, keeps half or more of its original's samples, each within its jitter, while another
    run's sample under the key differs by the runs' noise; the rules that read a quantile of the pairs
    (timing_agreement) need three in four, or three in five, of the keys to agree.

    Null hypothesis: under each key the two runs' samples differ by both runs' noise, so the differences
    (one per pair of samples under a key, in logs) lie about as densely at zero as a few windows away, and
    no denser than a normal variable's whose spread is the runs' own noise. The window is AGREE_SPREAD of
    that noise per column (_noise_floor: the larger run's reading, which a copy cannot lower), at most
    JOINT_CAP and the column's AGREE_RELATIVE. Chance's expectation is the larger of the keys matched with
    the differences shifted by whole windows (JOINT_RING either side; pooled, the closer ring alone where
    it holds more, or one shift that stands out), and of the normal bound (per key, its pairs of samples
    times the least of the columns' 2 * window / (noise * sqrt(2 pi))). The keys matched must lie beyond
    its Poisson tail CHANCE_TAIL. Centred at zero, not at the differences' median: a window about the
    median holds the middle differences by construction (4 honest training pairs of the bench's
    3,435-run-file registry, 5-6 of 44-64 keys there); a rescaled copy is rules 2 and 6's."""
    if len(a) <= 7 or len(b) <= 7 or a[7] is None or b[7] is None:
        return None
    view_a, view_b = _view(a), _view(b)
    if len(view_a.few_keys & view_b.few_keys) < MIN_MATCHED or _too_few_under_key(a[5], view_a, view_b):
        return None
    mine = view_a.few_by_key
    shared = [(mine[key], rows) for key, rows in b[7] if key in mine]  # (MIN_MATCHED of them, none empty)
    columns = len(shared[0][0][0])
    noise = [_noise_floor(a, b, column) for column in range(columns)]
    if not any(noise):
        return None
    import numpy  # (as _filter_verdict)

    combos, owners, per_key = [], [], []
    for owner, (xs, ys) in enumerate(shared):
        per_key.append(len(xs) * len(ys))
        for x in xs:
            for y in ys:
                combos.append((x, y))
                owners.append(owner)
    pairs = numpy.asarray(combos, dtype=float)  # (pair, run, column)
    if pairs.ndim != 3 or not (numpy.all(pairs > TINY) and numpy.all(pairs < SANE)):
        return None
    logs = numpy.log(pairs)
    informative = [c for c, n in enumerate(noise) if n and numpy.ptp(logs[:, :, c]) > 0]
    if not informative:
        return None
    read = [float(noise[c] or 0.0) for c in informative]  # (each read: informative above)
    widths = [min(_window_cap(a[5], c), AGREE_SPREAD * n) for c, n in zip(informative, read)]
    counts = _shifted_key_counts(
        logs[:, 1, informative] - logs[:, 0, informative], numpy.asarray(owners), numpy.array(widths), numpy
    )
    middle = len(counts) // 2
    hits = int(counts[middle])
    if hits < JOINT_LEAST:
        return None
    shifted = numpy.delete(counts, middle)
    ring = _inner_ring(len(informative))
    expected = max(float(shifted.mean()), float(counts[list(ring)].mean()), 0.5 / len(shifted))
    expected = _with_structure(expected, (float(shifted.max()),))
    chance = min(2 * width / (noise * _SQRT_TAU) for noise, width in zip(read, widths))
    expected = max(expected, sum(min(1.0, count * chance) for count in per_key))
    if _poisson_tail(hits, expected) > CHANCE_TAIL:
        return None
    return hits, len(shared), max(widths), expected


def _too_few_under_key(kind: str, view_a: _View, view_b: _View) -> bool:
    """matched_under_key's first look, for most pairs the last: fewer keys than JOINT_LEAST could match, even
    in the one column that matches most at the widest window any column can have (JOINT_CAP, AGREE_RELATIVE),
    counting every key held more than once by either run as a match."""
    arrays_a, arrays_b = view_a.few_arrays(), view_b.few_arrays()
    if arrays_a is None or arrays_b is None:
        return False  # (a timing no positive finite number: matched_under_key decides)
    import numpy  # (as _filter_verdict)

    (keys_a, logs_a), (keys_b, logs_b) = arrays_a, arrays_b
    repeated = len((view_a.few_repeated | view_b.few_repeated) & view_a.few_keys & view_b.few_keys)
    if repeated >= JOINT_LEAST:
        return False
    _, at_a, at_b = numpy.intersect1d(keys_a, keys_b, assume_unique=True, return_indices=True)
    differences = numpy.abs(logs_a[at_a] - logs_b[at_b])
    widest = [_window_cap(kind, c) for c in range(differences.shape[1])]
    most = max((int(numpy.count_nonzero(differences[:, c] <= w)) for c, w in enumerate(widest)), default=0)
    return most + repeated < JOINT_LEAST


@functools.cache
def _inner_ring(columns: int) -> tuple[int, ...]:
    """The cells (_shift_cells) one window from zero in some column and at most one in every."""
    import numpy

    shifts = [shift for shift in itertools.product((-1, 0, 1), repeat=columns) if any(shift)]
    return tuple(_shift_cells(numpy.array(shifts).reshape(len(shifts), columns).T, numpy).tolist())


def matched_jointly(a: NearPrint, b: NearPrint) -> tuple[int, int, float, float] | None:
    """joint_matches, where the matches lie beyond the Poisson tail CHANCE_TAIL of chance's expectation."""
    found = joint_matches(a, b)
    return found if found is not None and _poisson_tail(found[0], found[3]) <= CHANCE_TAIL else None


WINDOW = 2  # neighbours either side of a sample that filtered_agreement fits a copy on
WINDOW_MATCHED = 3  # aligned samples with whole windows needed, per fitted weight (2 * width + 2 of them)


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
    import numpy  # (as _filter_verdict)

    floors: dict[int, float | None] = {}  # per column, the pair's noise floor (_noise_floor), once for both ways
    # per direction (each run's windows predicting the other's samples) and column: (design, target, its values)
    # where it can be fitted, else None; then every fit's weights at once, then the verdicts in order
    directions: list[list[tuple[Any, Any, list[float]] | None]] = []
    for view_x, view_y in ((view_a, view_b), (view_b, view_a)):
        for width in range(WINDOW, 0, -1):  # the widest window the aligned samples can support
            index, windows = view_x.window_array(width)
            keys_y, values_y = view_y.aligned_array()
            held = list(map(index.__contains__, keys_y))  # y's aligned samples with a whole window in x
            if sum(held) >= WINDOW_MATCHED * (2 * width + 2):
                break
        else:
            continue
        # the pairs in y's order, as numpy rows of x's windows and of y's values (built once per run: _View)
        rows = list(map(index.__getitem__, itertools.compress(keys_y, held)))
        taken = list(itertools.compress(range(len(keys_y)), held))
        gathered, targets = windows[rows], values_y[taken]
        fits: list[tuple[Any, Any, list[float]] | None] = []
        for column in range(min(len(names), values_y.shape[1])):
            target = numpy.ascontiguousarray(targets[:, column])  # (as lstsq's and the old asarray's)
            ys = target.tolist()
            if min(ys) <= 0 or min(ys) == max(ys):
                fits.append(None)
                continue
            design = numpy.empty((len(ys), 2 * width + 2))  # (column_stack's: the intercept, then the windows)
            design[:, 0] = 1.0
            design[:, 1:] = gathered[:, :, column]
            fits.append((design, target, ys))
        directions.append(fits)
    weights = iter(_least_squares([fit[:2] for fits in directions for fit in fits if fit is not None]))
    for fits in directions:
        for (column, name), fit in zip(enumerate(names), fits):
            if fit is None:
                continue
            if column not in floors:
                floors[column] = _noise_floor(a, b, column)
            found = _filter_verdict(*fit, next(weights), limits.get(name, 0.0), floors[column])
            if found is not None:
                return name, found
    return None


def _least_squares(systems: list[tuple[Any, Any]]) -> list[Any]:
    """numpy.linalg.lstsq(design, target, rcond=None)'s weights for each (design, target), those of one shape in
    one call of the LAPACK routine lstsq calls (gelsd, for each system alone: the same weights, bit for bit;
    bench/judging.py compares); lstsq itself for a shape held once, and wherever that call is not there or
    reports trouble (so an SVD that does not converge raises as lstsq raises, where its fit is read)."""
    import numpy

    found: list[Any] = [None] * len(systems)
    shapes: dict[tuple[int, ...], list[int]] = {}
    for n, (design, _) in enumerate(systems):
        shapes.setdefault(design.shape, []).append(n)
    for (rows, weights), held in shapes.items():
        if len(held) > 1:
            try:
                from numpy.linalg import _umath_linalg

                with numpy.errstate(all="raise", under="ignore"):  # (lstsq: LinAlgError on invalid)
                    solved = _umath_linalg.lstsq(
                        numpy.stack([systems[n][0] for n in held]),
                        numpy.stack([systems[n][1] for n in held])[:, :, None],
                        numpy.finfo(numpy.float64).eps * max(rows, weights),
                        signature="ddd->ddid",
                    )[0]
                for k, n in enumerate(held):
                    found[n] = numpy.ascontiguousarray(solved[k, :, 0])
                continue
            except (ImportError, AttributeError, TypeError, ArithmeticError):
                pass
        for n in held:
            try:
                found[n] = numpy.linalg.lstsq(*systems[n], rcond=None)[0]
            except numpy.linalg.LinAlgError as trouble:  # raised where the fit is read, as it was (_filter_verdict)
                found[n] = trouble
    return found


def _filter_verdict(
    design: Any, target: Any, ys: list[float], weights: Any, limit: float, noise: float | None
) -> float | None:
    """The 75th percentile of |residual| / y after the least-squares fit (`weights`, or the error the fit
    raised) of target (its values `ys`) on design (an intercept and the other run's windows), scaled by
    sqrt(n / (n - p)), when it is at most `limit` and the column can tell (its residuals far below its own
    spread, and below the runs' own relative `noise` where known: _noise_floor); None otherwise."""
    import numpy  # only when two runs share a bucket: the gate's start-up does not pay for it (issue 55)

    if isinstance(weights, Exception):  # (_least_squares)
        raise weights

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
        # the noise counts as at most the ys' own spread: a fit of p weights leaves residuals below that
        # whatever the other run holds, so a noise read above it (the noisier run's, _noise_floor) let a
        # chance fit on a few samples pass as "far below the noise" (an honest pair of 13 requests of the
        # bench's 10,000-run-file registry, e2e spread 0.76% against 1.8% read off the other run). Here
        # only: the affine rules fit two weights, and there the cap cost copies of 16 requests (±0.3%, a
        # third dropped: 15 of 30 caught, not 18; tests/unit/test_copies.py)
        noise = _within_spread(noise, spread / centre)
        spread = min(spread, noise * centre)
    if spread <= 0 or float(numpy.sort(residuals)[middle]) > AGREE_SPREAD * spread:
        return None
    if not _below_noise(residuals.tolist(), ys, p, noise):
        return None
    return relative


def _within_spread(noise: float, spread: float) -> float:
    """A noise reading (relative) counted as at most the fitted column's own spread (_filter_verdict)."""
    return min(noise, spread)


FEW_OCCURRENCES = 4  # a key held at most this often: its samples pair with the nearest under the key
# ... read at this quantile of the residuals, not AGREE_QUANTILE: a merge of two runs thinned by a third
# leaves a key only the other run's sample under a quarter or more of the original's keys (strays)
KEY_QUANTILE = 0.6


def _nearest_under_key(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[Any, Any]]:
    """Samples paired by key where a key holds several (merged, duplicated): under each key, each
    sample of the run holding fewer with the nearest of the other's (by the last timing column).
    Only where some key repeats in either run; otherwise the alignment by key has said all there is."""
    if all(len(rows) == 1 for _, rows in a) and all(len(rows) == 1 for _, rows in b):
        return []
    by_key = dict(a)
    pairs = []
    for key, rows in b:
        candidates = by_key.get(key)
        if not candidates:
            continue
        if len(rows) >= len(candidates):  # the fewer side's samples each find theirs among the other's
            pairs += [(x, min(rows, key=lambda y: abs(x[-1] - y[-1]))) for x in candidates]
        else:
            pairs += [(min(candidates, key=lambda x: abs(x[-1] - y[-1])), y) for y in rows]
    return pairs


SEQUENCE_CLOSE = 0.15  # of the run's own typical step: how close two steps must be to pair samples in order
SEQUENCE_RUN = 4  # ... and so must the next ones (an honest pair meets that by chance ~1e-4 of the time)
SEQUENCE_SKIP = 10  # samples dropped or added in a row that the alignment steps over
# pairs found in order that suffice (each needed a run of SEQUENCE_RUN agreeing steps: a copy of
# llama-bench's ten repetitions with one dropped keeps 6 or 7)
SEQUENCE_MATCHED = 6


def _in_order(
    xs: Sequence[tuple[float, ...]], ys: Sequence[tuple[float, ...]], needed: int = 0
) -> list[tuple[Any, Any]]:
    """Samples of two runs paired in list order with gaps (a diff of the two sequences): a pair only
    where the steps from it to the next SEQUENCE_RUN samples agree within SEQUENCE_CLOSE of the runs'
    own typical step, on the first column that varies. Steps are log-ratios of consecutive samples,
    so a rescale keeps them and a dropped sample changes only the steps around it. `needed`: the pairs
    the caller needs (_agreement's); [] where fewer can be found, without walking (every pair found starts
    a run of agreeing steps in a row and a column of its own, so they are at most the rows, or the columns,
    in which one starts)."""
    if not xs or not ys:
        return []
    # (two sequences a run: its first samples and its fastest)
    steps_x, steps_y = _kept(_STEPS, xs, _log_steps, 2 * CACHE_KEPT), _kept(_STEPS, ys, _log_steps, 2 * CACHE_KEPT)
    for column in range(len(xs[0])):
        found_x, found_y = steps_x[column], steps_y[column]
        if found_x is not None and found_y is not None:
            break
    else:
        return []
    (zx, typical_x, array_x), (zy, typical_y, array_y) = found_x, found_y
    close = SEQUENCE_CLOSE * min(typical_x, typical_y)

    import numpy  # only when two runs are compared (as _filter_verdict): the gate's start-up does not pay for it

    # where the SEQUENCE_RUN steps from (i, j) along its diagonal all agree (fewer at the end: as many as are
    # left), for every (i, j) at once, then per diagonal j - i in increasing i: ORV304 walks every candidate
    # pair of fixed-length runs this way (its largest cost, issue 55)
    nx, ny = len(zx), len(zy)
    agree = numpy.abs(numpy.subtract.outer(array_x, array_y)) <= close
    start = agree.copy()
    for t in range(1, min(SEQUENCE_RUN, nx, ny)):  # past either end nothing disagrees: those cells stay
        start[: nx - t, : ny - t] &= agree[t:, t:]
    # (most candidate pairs of honest runs: a few chance starts, far fewer than a copy's; no walk for them)
    if needed and (numpy.count_nonzero(start.any(axis=1)) < needed or numpy.count_nonzero(start.any(axis=0)) < needed):
        return []
    starts_at = start.tolist()
    starts: dict[int, list[int]] = {}  # per diagonal j - i, the i where a run starts, increasing
    for i, j in zip(*(found.tolist() for found in numpy.nonzero(start))):  # row by row: i increases
        starts.setdefault(j - i, []).append(i)

    def runs_from(i: int, j: int) -> bool:
        return i < nx and j < ny and starts_at[i][j]

    def next_start(diagonal: int, i: int) -> int | None:
        held = starts.get(diagonal, ())
        at = bisect.bisect_left(held, i)
        return held[at] if at < len(held) else None

    pairs, i, j = [], 0, 0
    while i < len(zx) and j < len(zy):
        if runs_from(i, j):
            pairs.append((xs[i], ys[j]))
            i, j = i + 1, j + 1
            continue
        step = next(
            (
                (i + d, j) if runs_from(i + d, j) else (i, j + d)
                for d in range(1, SEQUENCE_SKIP + 1)
                if runs_from(i + d, j) or runs_from(i, j + d)
            ),
            None,
        )
        if step is not None:
            i, j = step
            continue
        # nothing starts here, so the walk steps along its diagonal until something could: the first step
        # t at which a run starts on it (at i + t), on one d below (at i + t + d) or d above (at i + t)
        diagonal, ahead = j - i, []
        for d in range(SEQUENCE_SKIP + 1):
            for on, at in ((diagonal - d, i + 1 + d), (diagonal + d, i + 1)):
                found = next_start(on, at)
                if found is not None:
                    ahead.append(found - at + 1)
        if not ahead:
            break
        i, j = i + min(ahead), j + min(ahead)
    return pairs


def _log_steps(rows: Sequence[tuple[float, ...]]) -> list[tuple[list[float], float, Any] | None]:
    """Per timing column of a run's samples in list order (_in_order): the log-ratios of consecutive samples,
    their median size and them as a numpy array; None where a value is not positive or they are all 0.
    Once per run, not per pair compared (kept as _kept keeps views)."""
    import numpy  # (as _in_order)

    found: list[tuple[list[float], float, Any] | None] = []
    for column in range(len(rows[0])):
        values = [row[column] for row in rows]
        if min(values) <= 0:
            found.append(None)
            continue
        logs = [math.log(v) for v in values]
        steps = [b - a for a, b in zip(logs, logs[1:])]
        typical = statistics.median(map(abs, steps)) if steps else 0.0
        found.append((steps, typical, numpy.asarray(steps)) if steps and typical > 0 else None)
    return found


_STEPS: dict[int, tuple[Any, Any]] = {}


def _fit_residuals(xs: Sequence[float], ys: Sequence[float], using: Sequence[int] | None = None) -> list[float]:
    """|y - (a*x + b)| for every pair, the line fitted (least squares) on the pairs `using` (all)."""
    fx = [xs[i] for i in using] if using is not None else xs
    fy = [ys[i] for i in using] if using is not None else ys
    mean_x, mean_y = statistics.fmean(fx), statistics.fmean(fy)
    var_x = sum([(x - mean_x) ** 2 for x in fx])  # lists, not generators: the same sums, sooner
    slope = sum([(x - mean_x) * (y - mean_y) for x, y in zip(fx, fy)]) / var_x if var_x > 0 else 0.0
    return [abs(y - (mean_y + slope * (x - mean_x))) for x, y in zip(xs, ys)]


def _agreement(
    matched: list[tuple[Any, Any]],
    kind: str,
    needed: int = MIN_MATCHED,
    noise: Sequence[float | None] = (),
    quantile: float = AGREE_QUANTILE,
) -> float | None:
    """timing_agreement on samples already paired (at least `needed` of them); `noise`, the runs' own
    relative noise per column (_noise_floor), bounds "far closer" where known; `quantile`, the share of
    the pairs that must agree (the rest may be strays a merge or a drop paired wrongly)."""
    if len(matched) < needed:
        return None
    limits = AGREE_RELATIVE.get(kind, {})
    names = TIMING_COLUMNS.get(kind, ())
    worst, informative = 0.0, False
    for column in range(len(matched[0][0])):
        xs = [x[column] for x, _ in matched]
        ys = [y[column] for _, y in matched]
        if min(xs) == max(xs) and min(ys) == max(ys):
            continue  # constant in both: no identity either way
        if any(y <= 0 for y in ys):
            return None
        residuals = _fit_residuals(xs, ys)
        # once more on the three quarters that fit best, so that a quarter of strays (samples a
        # merge or a drop paired wrongly) cannot tilt the line the rest follow
        cut = sorted(residuals)[int(quantile * (len(residuals) - 1))]
        inner = [i for i, r in enumerate(residuals) if r <= cut]
        if (
            MIN_MATCHED <= len(inner) < len(residuals)
        ):  # (a refit on fewer lets honest small runs agree: 3 of 3,435 bench runs)
            residuals = _fit_residuals(xs, ys, inner)
        ranked = sorted([r / y for r, y in zip(residuals, ys)])
        relative = ranked[int(quantile * (len(ranked) - 1))]
        limit = limits.get(names[column], 0.0) if column < len(names) else 0.0
        if relative > limit:  # nearly every pair: the spread's two medians are not needed
            return None
        centre = statistics.median(ys)
        spread = statistics.median(abs(y - centre) for y in ys)
        own = noise[column] if column < len(noise) else None
        if spread > 0:
            if statistics.median(residuals) > AGREE_SPREAD * min(spread, own * centre if own else spread):
                return None
            if not _below_noise(residuals, ys, 2, own, quantile):  # the affine map's two weights
                return None
            informative = True
        worst = max(worst, relative)
    return worst if informative else None


def _cells(value: float, tolerance: float, width: float) -> list[int]:
    """The cell of value, and the neighbouring one when value is within the tolerance of their edge."""
    cell = math.floor(value / width)
    cells = [cell]
    if value - cell * width <= tolerance:
        cells.append(cell - 1)
    if (cell + 1) * width - value <= tolerance:
        cells.append(cell + 1)
    return sorted(cells)


def buckets(fingerprint: Fingerprint) -> tuple[str, ...]:
    """Keys that a run shares with every run it could be one measurement with (module docstring):

    - same count, sorted quantiles within the column's tolerance: cells of >= 4x the tolerance on
      three quantiles, the neighbouring cell too near an edge;
    - exact values beyond chance: every hash of a speaking column's value sketch (the test needs a
      hash both sketches hold);
    - shared rows: the SHARED_KEYS lowest row hashes;
    - aligned timings (aligned_equal, timing_agreement, filtered_agreement): the run's candidate keys,
      locality-sensitive hashes of where its samples' timings fall (science/candidates.py): a copy
      whose timings follow the original's within the noise these rules allow keeps them, an
      independent run rarely does (measured, not assumed: `python -m bench.candidates`);
    - the same, for a copy merged with another dataset's run: the merge keys (candidates.merge_keys).

    Value-sketch (`v:`), merge (`m:`) and a keyed run's smoothed and wide candidate keys (`w:`, candidates.MEANS)
    tie two runs only several of one column at a time (`tie`).
    """
    if not fingerprint:
        return ()
    keys: list[str] = []
    prints = list(_prints_of(fingerprint).values())
    if not prints:  # no informative timing column: an identical copy matches by its exact hash
        keys.append("exact:" + str(fingerprint[0][1]))
    else:
        column, count, quantiles, tolerance = prints[0]
        width = max(CELL, 4 * tolerance)
        per_quantile = [_cells(quantiles[i], tolerance, width) for i in KEY_QUANTILES]
        keys += [f"{column}:{count}:" + ",".join(map(str, combo)) for combo in itertools.product(*per_quantile)]
    values = _values_of(fingerprint)
    if values is not None:
        for name, _samples, distinct, _repeats, sketch in values[1]:
            if distinct >= MIN_DISTINCT:  # shared_values may speak for it (the other run's clock)
                keys += [f"v:{name}:{h & 0xFFFFFFFFFFFF:x}" for h in sketch]
    near = _near_of(fingerprint)
    if near is not None:
        if near[1] >= MIN_DISTINCT:  # below, shared rows say nothing (shared_share)
            keys += [f"x:{h & 0xFFFFFFFFFFFF:x}" for h in near[2][:SHARED_KEYS]]
        # a constant or two-valued timing column has no shape to follow (the old shape keys' rule)
        # as many aligned samples as the rules need: MIN_MATCHED, or SEQUENCE_MATCHED for a run aligned by
        # occurrence (its first and fastest samples are paired in order: a copy of 8 requests, 2 dropped)
        needed = SEQUENCE_MATCHED if len(near) > 6 and near[6] is not None else MIN_MATCHED
        if prints and len(near) > 11 and len(near[3]) >= needed:
            # (a smoothed or wide key, marked MEANS, ties only several at a time: COUNTED_TIES)
            keys += [f"w:0:{h & candidates.MASK:x}" if h & candidates.MEANS else f"n:{h:x}" for h in near[11]]
            if len(near) > 12:
                keys += [f"m:{k >> candidates.COLUMN_SHIFT}:{k & candidates.MASK:x}" for k in near[12]]
    return tuple(dict.fromkeys(keys))


def _rows_by_chance(a: Fingerprint, b: Fingerprint, near_a: NearPrint, near_b: NearPrint) -> bool:
    """Whether the rows two runs share are within what their own repeats predict: a row repeats by
    chance at most as often as its least repeating column's value (values print). Megatron's 0.1 ms
    log on a stable cluster repeats whole rows between honest runs; rule 3 had no such guard."""
    values_a, values_b = _values_of(a), _values_of(b)
    if values_a is None or values_b is None:
        return False
    per_b = {entry[0]: entry for entry in values_b[1]}
    chance = 1.0
    for name, na, _da, ra, _ in values_a[1]:
        if name in per_b:
            nb, rb = per_b[name][1], per_b[name][3]
            chance = min(chance, max(_chance(na, ra), _chance(nb, rb)))
    trials, hits = _in_common(near_a[2], near_a[1], near_b[2], near_b[1])
    other = near_b[1] if near_a[1] <= near_b[1] else near_a[1]
    expected = min(1.0, other * chance)
    return not (hits >= VALUE_OVER_CHANCE * expected * trials and _beyond_chance(trials, hits, expected))


def values_copied(a: Fingerprint, b: Fingerprint) -> str | None:
    """same_measurement's exact-values rule alone (shared_values), in words for ORV304, or None: all
    that two runs sharing only value-sketch keys (`v:`, buckets) are compared by, since no other rule's
    keys tie them (on a coarse clock, runs of one workload share values by chance, and so those keys)."""
    values_a, values_b = _values_of(a), _values_of(b)
    if values_a is None or values_b is None:
        return None
    found = shared_values(values_a, values_b)
    if found is None:
        return None
    name, share = found
    return (
        f"{min(share, 1.0):.0%} of the smaller run's `{name}` values are the other's, bit for bit "
        "(independent runs share almost none; values moved between samples, resampled or merged)"
    )


def compared(a: Fingerprint, b: Fingerprint, keys_a: Collection[str], keys_b: Collection[str]) -> str | None:
    """What ORV304 says about two runs, given their buckets: nothing unless the keys they share tie them
    (`tie`); only the exact-values rule when value-sketch keys alone do; else every rule (same_measurement)."""
    how = tie(set(keys_a).intersection(keys_b))
    return None if how is None else judged(a, b, values_only=how == VALUES)


# Keys that tie two runs only several of one column at a time (the others tie at one):
# - value-sketch keys (`v:<column>:<hash>`), two: shared_values flags only at two or more of a column's
#   sketch hashes, every one of which is published (buckets), so this loses nothing; on a coarse clock
#   honest runs of one workload share single values by chance, and each such tie cost a comparison and, in
#   a pull request, a loaded neighbour (issue 55);
# - merge keys (`m:<column>:<hash>`, candidates.merge_keys), four: honest runs of one dataset
#   share a few by chance, a copy about half its sketch;
# - a keyed run's smoothed and wide candidate keys (`w:0:<hash>`, candidates.MEANS; one class, column 0), two:
#   honest logs of one workload share one by chance (10% of pairs of bench-shaped logs; two or more 4%), while every
#   copy the rules flag that no other key ties shares three or more (docs/metrics.md, measured on the corpus
#   and the bench registries' forgeries).
WIDE_TIES = 2
COUNTED_TIES = {"v": 2, "m": 4, "w": WIDE_TIES}
EVERY_RULE = frozenset({"m", "w"})  # counted kinds that, tied, lead to every rule (value-sketch keys: one rule)
VALUES, ALL = "values", "all"  # tie(): judged by the exact-values rule alone, or by every rule


def counted_column(key: str) -> tuple[str, str] | None:
    """(kind of key, column) of a key that ties only several at a time (COUNTED_TIES); None for any other."""
    kind, _, rest = key.partition(":")
    if kind not in COUNTED_TIES or ":" not in rest:
        return None
    return kind, rest.split(":", 1)[0]


def tie(shared: Iterable[str]) -> str | None:
    """How the bucket keys two runs share tie them: ALL (compared by every rule) when one key does that ties
    alone, or enough of a column's keys of a kind in EVERY_RULE (merge keys; smoothed and wide keys); VALUES
    (the exact-values rule alone) when only enough value-sketch keys of a column do; None when nothing ties
    them."""
    held: Counter[tuple[str, str]] = Counter()
    for key in shared:
        counted = counted_column(key)
        if counted is None:
            return ALL
        held[counted] += 1
    tied = {kind for (kind, _), count in held.items() if count >= COUNTED_TIES[kind]}
    return ALL if tied & EVERY_RULE else VALUES if tied else None


def judged(a: Fingerprint, b: Fingerprint, values_only: bool) -> str | None:
    """ORV304's verdict on two runs that share a bucket: the exact-values rule alone when only value-sketch
    keys tie them, else every rule."""
    return values_copied(a, b) if values_only else same_measurement(a, b)


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
            n == cols_b[name][1]
            and max(abs(x - y) for x, y in zip(qa, cols_b[name][2])) <= min(tolerance, cols_b[name][3])
            for name, (_, n, qa, tolerance) in cols_a.items()
        )
    ):
        return "the same timings rescaled, offset or reordered (their sorted values agree far closer than two runs' do)"
    near_a, near_b = _near_of(a), _near_of(b)
    if near_a is not None and near_b is not None:
        share = shared_share(near_a, near_b)
        if share is not None and share >= SHARED_CONTAINMENT and _rows_by_chance(a, b, near_a, near_b):
            share = None
    else:
        share = None
    if share is not None and share >= SHARED_CONTAINMENT:
        return (
            f"{min(share, 1.0):.0%} of the smaller run's samples are the other's, exactly "
            "(samples added, dropped, duplicated or reordered)"
        )
    values = values_copied(a, b)
    if values is not None:
        return values
    if near_a is None or near_b is None:
        return None
    equal = aligned_equal(near_a, near_b)
    if equal is not None:
        return (
            f"{equal:.0%} of the samples both runs hold are bit-identical in every timing, far more than "
            "their clocks and noise allow by chance (the rest edited)"
        )
    agreement = timing_agreement(near_a, near_b)
    if agreement is not None:
        return (
            f"timings that follow the other's sample by sample within {agreement:.3%} after rescaling "
            "(re-measurements differ by far more)"
        )
    filtered = filtered_agreement(near_a, near_b)
    if filtered is not None:
        name, residual = filtered
        return (
            f"`{name}` values that a weighted average of the other run's neighbouring samples predicts "
            f"within {residual:.3%} (rescaled, smoothed or averaged; re-measurements differ by far more)"
        )
    keyed = matched_under_key(near_a, near_b)
    if keyed is not None:
        hits, shared, width, expected = keyed
        return (
            f"{hits} of the {shared} steps or requests both runs hold have a sample in the other within "
            f"{width:.2%} in every timing at once, where the runs' own noise predicts {expected:.1f} (merged with "
            "another run or thinned; re-measurements differ by far more)"
        )
    joint = matched_jointly(near_a, near_b)
    if joint is not None:
        hits, compared_, width, expected = joint
        return (
            f"{hits} of its {compared_} fastest requests have one of the other run's within {width:.2%} in "
            f"every timing at once, where the runs' own spread predicts {expected:.1f} (reordered, thinned "
            "or merged; re-measurements differ by far more)"
        )
    return None


_CACHES = (_UNPACKED, _VIEWS, _STEPS)  # every per-run cache (bench/judging.py empties them between passes)
