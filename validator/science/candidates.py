"""Candidate keys for ORV304's sample-by-sample rules: which runs are worth comparing at all.

The rules that follow a copy sample by sample (science/independence.py: `aligned_equal`,
`timing_agreement`, `filtered_agreement`) used to be reached through keys every run of a workload
shared (its lowest alignment hashes, with its level): every such pair was compared, n^2/2 pairs of
~0.1 ms within a workload (107,006 pairs at 1,129 run files, 984,788 at 3,435; issue 55). Two
honest runs of one workload hold the same requests or steps; what tells them apart is their noise,
so these keys carry it: locality-sensitive hashes of where each sample's timing falls, which a copy
(its timings an affine map of the original's, plus jitter below the noise the rules allow) keeps
and an independent run, whose own noise moves every sample, keeps only by chance.

A key is a few samples (consecutive in the run's alignment-hash order, so that a copy holding the
same requests or steps forms the same groups) and, for each, the cell its timing falls in:

  raw      (timing - the column's median) / its interquartile range: an affine map a*x + b of the
           column leaves it unchanged; cells CELL wide
  window   the same samples normalised by their own range (min -> 0, max -> 1): unchanged by an
           affine map and by anything that moves the column's median or spread (samples dropped,
           added, or another run merged in)
  smoothed each sample's mean with its WINDOW neighbours either side in list order (a copy made of
           a moving average of the original keeps these means, not the samples)
  wide     the same over WIDE_REACH neighbours either side (independence._wide_means), for a run aligned
           by key: a moving average of 2 or 3 moves a mean of 15 far less, relative to the means' spread,
           than a mean of 5 (6 of 10,466 bench forgeries, all training moving averages, kept no mean of 5)

per timing column, so that a copy keeping one column and reshuffling another still meets its original.
A run aligned by occurrence (a fixed-length workload, where every request has the same key) has no
key to group by: its first samples in list order are grouped as they come (raw and smoothed), and its
fastest samples (sorted by the first timing) by their second timing, as `timing_agreement` pairs
them.

A run with fewer than 2 * SMALL samples aligned also groups one sample fewer with up to GAP others
skipped between them (below SMALL only so), so that a copy with a third of its samples dropped still
forms some of its original's groups; a small fixed-length run also groups its fastest by both timings'
own range, and one of at most EXHAUSTIVE samples every way (a third dropped anywhere leaves some group
whole: within a span, 1 in 6 such copies of 10 requests kept none).
A run whose keys repeat (two runs merged) also publishes, for every choice of one occurrence per key, the
raw key (both neighbouring cells near an edge: a merge's median and spread are the mixture's) and the
window key its original would have; a training log merged with a longer one, for the steps it holds twice
(the shorter log's own: `repeated`).

Recall is measured against all pairs, not assumed, and it is not complete: of the forgeries that
`same_measurement` flags, those of the calibration corpus and of the bench registries' runs that share
no key with their original are counted and named (`python -m bench.candidates`; docs/metrics.md,
"Which runs are compared sample by sample").
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

CELL = 0.25  # of the column's interquartile range (raw keys)
WINDOW_CELL = 0.25  # of the group's own range (window keys)
SMOOTH_CELL = 0.5  # of the smoothed values' interquartile range
SAMPLES = {"raw": 5, "window": 6, "smoothed": 5, "sequence": 6}  # samples a key holds
SMALL = 32  # below 2 * SMALL aligned samples, groups may also skip samples ...
GAP = 2  # ... up to this many
EXHAUSTIVE = 12  # a fixed-length run of at most this many samples groups its fastest every way (C(12, 6) = 924)
FIRST = 60  # groups started at the first FIRST samples
SEQUENCE_STRIDE = 5  # smoothed first samples: every 5th (the means of 2 * WINDOW + 1 samples do not overlap)
PROBE = 0.3  # of a cell: a merged run's occurrences publish the neighbouring cell this near an edge
MASK = 0xFFFFFFFFFFFF  # 48 bits a key (as the module's other keys)
LAST_CELL = 1e15  # cells end here (a subnormal spread divides a position to infinity)
# What each key is of, as numbers: a key is CPython's hash of a tuple of numbers, the same in every
# process (a str's hash is salted per process, and boards/keys.json publishes these keys)
RAW, WINDOW, SMOOTHED, SEQUENCE, SEQUENCE_SMOOTHED, RANKED, RANKED_WINDOW = range(0x6E0, 0x6E7)


def _groups(count: int, size: int, gap: int = GAP) -> Iterator[tuple[int, ...]]:
    """Index groups of `size` consecutive samples, and for a small run (below 2 * SMALL, so that a copy
    with up to half dropped forms them too) groups of one fewer with up to GAP samples skipped; below
    SMALL only those."""
    if count < 2 * SMALL:
        yield from _spans(count, size - 1, gap)
    if count >= SMALL:
        yield from _spans(count, size, 0)


def _spans(count: int, size: int, gap: int) -> Iterator[tuple[int, ...]]:
    """Groups starting at each of the first FIRST samples: it and size - 1 of the next size - 1 + gap."""
    for first in range(min(FIRST, count - size + 1)):
        following = range(first + 1, min(count, first + size + gap))
        for rest in itertools.combinations(following, size - 1):
            yield (first, *rest)


@functools.lru_cache(maxsize=64)
def _pickers(count: int, size: int, gap: int = GAP, spans: bool = False) -> tuple[operator.itemgetter, ...]:
    """_groups(count, size, gap) (or _spans), each as an itemgetter that takes its samples' values out
    of a list in one C call (a group holds at least 4, so each gives a tuple). Runs hold at most a
    sketch's samples (64), so the few shapes there are are built once per process (11 on the bench's
    registries; 64 kept: at most ~5 MB, where all 520 possible took 18 MB)."""
    groups = _spans(count, size, gap) if spans else _groups(count, size, gap)
    return tuple(operator.itemgetter(*group) for group in groups)


def _spread(values: Sequence[float]) -> tuple[float, float] | None:
    return spread(sorted(values))


def spread(ordered: Sequence[float]) -> tuple[float, float] | None:
    """(median, interquartile range) of sorted values, None where the range is 0 (nothing to place a
    sample by) or there are too few."""
    n = len(ordered)
    if n < 4:
        return None
    iqr = ordered[(3 * n) // 4] - ordered[n // 4]
    return (ordered[n // 2], iqr) if iqr > 0 else None


def _cells(values: Iterable[float], centre: float, width: float) -> list[int]:
    """Each value's cell: _floor((value - centre) / width), inlined (two calls a value were most of it)."""
    return [math.floor(max(-LAST_CELL, min(LAST_CELL, (v - centre) / width))) for v in values]


def _floor(position: float) -> int:
    """floor, with a position past any cell (a subnormal spread divides to infinity) in the last one."""
    return math.floor(max(-LAST_CELL, min(LAST_CELL, position)))


def _window_cells(values: Sequence[float]) -> tuple[int, ...] | None:
    low, high = min(values), max(values)
    if not high > low:
        return None
    span = high - low
    # (v - low) / span is in [0, 1] (finite values: the near print's are), so its cell is int's: no clamp, no floor
    return tuple([int((v - low) / span / WINDOW_CELL) for v in values])


def _smoothed(windows: Iterable[Sequence[Sequence[float] | None]], column: int) -> list[float]:
    """The mean of the column over each window of neighbouring samples (None beyond the run's ends: left
    out; a row holds a timing or more, so it is true)."""
    pick = operator.itemgetter(column)
    return [sum(map(pick, filter(None, rows))) / (len(rows) - rows.count(None)) for rows in windows]


def sample_keys(
    spreads: Sequence[tuple[float, float] | None],
    aligned: Sequence[tuple[int, Sequence[float]]],
    windows: Sequence[Sequence[Sequence[float] | None]],
    few: Sequence[tuple[int, Sequence[Sequence[float]]]] | None,
    sequence: Sequence[Sequence[float]] | None,
    ranked: Sequence[Sequence[float]] | None,
    repeated: Sequence[tuple[int, Sequence[Sequence[float]]]] | None = None,
    wide: Sequence[Sequence[float]] | None = None,
) -> array:
    """The run's candidate keys (sorted, 48-bit) from its near print's parts (independence._near_parts):
    `spreads`, each timing column's (median, interquartile range) or None; `aligned`, (alignment hash,
    timings) of the aligned samples in hash order; `windows`, each aligned sample's neighbours in list
    order; `few`, (key, every occurrence's timings) where keys repeat a few times; `sequence`, the first
    samples in list order and `ranked`, the fastest, for a run aligned by occurrence (else None);
    `repeated`, as `few` for the keys a merged training log holds twice (independence._repeated), or None;
    `wide`, per timing column each aligned sample's mean of 15 in list order (independence._wide_means), or None.

    A key is the hash of (what it is of, column, the group's alignment hashes, its cells): each sample's
    cell is computed once (not once per group holding it), and each group's alignment hashes once for
    every column and kind of key (issue 55)."""
    found: set[int] = set()
    means_found: set[int] = set()  # a keyed run's smoothed and wide keys, marked MEANS (counted ties)
    columns = [c for c, spread in enumerate(spreads) if spread is not None]
    # keys held twice or more: a merge (a quarter or more of them; a few repeats by chance publish nothing more)
    if few is not None and 4 * sum(len(occurrences) > 1 for _, occurrences in few) >= len(few):
        _merged_keys(found, spreads, columns, few)
    if repeated is not None:  # a merge of two logs: the keys both held, the shorter one's own
        _merged_keys(found, spreads, columns, repeated)
    if sequence is None:
        hashes = [h for h, _ in aligned]
        held: dict[tuple[int, int], list[tuple[int, ...]]] = {}

        def grouped(count: int, size: int) -> Iterator[tuple[tuple[int, ...], operator.itemgetter]]:
            """Each group's alignment hashes and its picker (the hashes taken once per shape)."""
            pickers = _pickers(count, size)
            if (count, size) not in held:
                held[count, size] = [pick(hashes) for pick in pickers]
            return zip(held[count, size], pickers)

        for c in columns:
            centre, width = spreads[c][0], spreads[c][1] * CELL  # type: ignore[index]
            values = [row[c] for _, row in aligned]
            cells = _cells(values, centre, width)
            head = (RAW, c)
            found.update([hash(head + part + pick(cells)) for part, pick in grouped(len(values), SAMPLES["raw"])])
            head = (WINDOW, c)
            for part, pick in grouped(len(values), SAMPLES["window"]):
                window = _window_cells(pick(values))
                if window is not None:
                    found.add(hash(head + part + window))
        # each column's smoothed means, then its wide means: the same keys of cells of their own spread
        series: list[tuple[int, int, Sequence[float]]] = [
            (SMOOTHED, c, _smoothed(windows, c)) for c in range(len(spreads))
        ]
        series += [(WIDE, c, wide_means) for c, wide_means in enumerate(wide or ())]
        for what, c, means in series:
            spread = _spread(means)
            if spread is not None:
                cells = _cells(means, spread[0], spread[1] * SMOOTH_CELL)
                head = (what, c)
                means_found.update(
                    [hash(head + part + pick(cells)) for part, pick in grouped(len(means), SAMPLES["smoothed"])]
                )
    else:
        count = len(sequence)
        for c in columns:
            centre, width = spreads[c][0], spreads[c][1] * CELL  # type: ignore[index]
            positions = _cells([row[c] for row in sequence], centre, width)
            head = (SEQUENCE, c)
            pickers = _pickers(count, SAMPLES["sequence"], GAP if count < SMALL else 0)
            found.update([hash(head + pick(positions)) for pick in pickers])
            reach = len(windows[0]) // 2 if windows else 2
            means = _smoothed((sequence[max(0, i - reach) : i + reach + 1] for i in range(count)), c)
            spread = _spread(means)
            if spread is not None:
                smooth = tuple(_cells(means, spread[0], spread[1] * SMOOTH_CELL))
                # every SEQUENCE_STRIDE-th mean; a small run (as _groups) must hold a few: every other, one fewer
                modes = (
                    [(SAMPLES["smoothed"] - 1, 2 if count < SMALL else SEQUENCE_STRIDE)] if count < 2 * SMALL else []
                )
                modes += [(SAMPLES["smoothed"], SEQUENCE_STRIDE)] if count >= SMALL else []
                for size, stride in modes:
                    span = (size - 1) * stride
                    strided = (SEQUENCE_SMOOTHED, c, stride)
                    found.update(
                        [hash(strided + smooth[first : first + span + 1 : stride]) for first in range(count - span)]
                    )
        if ranked is not None and len(spreads) > 1 and spreads[1] is not None:
            centre, width = spreads[1][0], spreads[1][1] * CELL
            seconds = [row[1] for row in ranked]
            positions = _cells(seconds, centre, width)
            pickers = _pickers(len(positions), SAMPLES["sequence"], GAP if len(positions) < SMALL else 0)
            found.update([hash((RANKED, *pick(positions))) for pick in pickers])
            if len(positions) < SMALL:  # a third of a small run dropped moves its spread: groups by their own range
                # a run this small: every choice of its samples (a third dropped anywhere keeps some whole)
                gap = len(ranked) if len(ranked) <= EXHAUSTIVE else GAP
                firsts = [row[0] for row in ranked]
                for pick in _pickers(len(ranked), SAMPLES["window"], gap, spans=True):
                    window = _window_cells(pick(seconds))
                    lead = _window_cells(pick(firsts))
                    if window is not None and lead is not None:
                        found.add(hash((RANKED_WINDOW, *window, *lead)))
    return array("q", sorted({h & MASK for h in found} | {MEANS | (h & MASK) for h in means_found}))


def _merged_keys(
    found: set[int],
    spreads: Sequence[tuple[float, float] | None],
    columns: Sequence[int],
    few: Sequence[tuple[int, Sequence[Sequence[float]]]],
) -> None:
    """A run whose keys repeat (two runs merged): for each group of keys, every choice of one occurrence
    per key gives the raw key (both neighbouring cells near an edge: the merged run's median and spread
    are the mixture's) and the window key the run holding those occurrences alone would publish."""
    order = sorted((hash((key, 0)), occurrences) for key, occurrences in few)
    hashes = [h for h, _ in order]
    held = [occurrences for _, occurrences in order]
    for c in columns:
        centre, width = spreads[c][0], spreads[c][1] * CELL  # type: ignore[index]
        # each key's cells near its occurrences' positions, once (not once per group holding the key)
        probes = []
        for rows in held:
            near: set[int] = set()
            for row in rows:
                position = (row[c] - centre) / width
                near.update((_floor(position - PROBE), _floor(position + PROBE)))
            probes.append(sorted(near))
        head = (RAW, c)
        for pick in _pickers(len(held), SAMPLES["raw"]):
            part = head + pick(hashes)
            found.update([hash(part + cells) for cells in itertools.product(*pick(probes))])
        head = (WINDOW, c)
        for pick in _pickers(len(held), SAMPLES["window"]):
            part = head + pick(hashes)
            for choice in itertools.product(*pick(held)):
                window = _window_cells([row[c] for row in choice])
                if window is not None:
                    found.add(hash(part + window))


# Merge keys: a copy merged with a run of *another* dataset interleaves foreign requests between its
# original's in every group above, so it keeps none of those keys. A bottom-k sketch of single samples
# survives that: each element is one sample, (its alignment key, the cell its timing falls in on a log
# scale MERGE_CELL wide), and the MERGE_SKETCH lowest of a run's elements are published. Whatever a copy
# keeps of its original (a subset: samples dropped, another run's added, any order) holds those of the
# original's lowest it kept among its own lowest, so a copy and its original share about MERGE_SKETCH x
# the share of the copy that is the original's. Cells are of the timing itself, not normalised (a merge
# moves the median and spread), so a rescaled copy is left to the keys above; jitter much below a cell
# keeps most cells. Two honest runs of one dataset share an element only where their timings fall in
# one cell, and few such among their lowest: a pair ties at COUNTED_TIES["m"] (4) shared keys of one
# column (independence.tie), measured on the bench registries (docs/metrics.md).
MERGE_CELL = 1e-3  # relative width of a cell (log scale)
MERGE_SKETCH = 32  # lowest elements kept per timing column
WIDE = 0x6E9  # smoothed over WIDE_REACH neighbours either side (independence._wide_means)
# A keyed run's smoothed and wide keys are marked by this bit above their 48 and tie a pair only two at a time
# (independence.COUNTED_TIES["w"]): a mean of 5 or 15 samples averages the run's noise away, so two honest logs
# of one workload, whose groups hold the same steps, put a group's five means in the same cells by chance (one
# of a run's ~120 such keys shared with ~10% of the logs of its workload on the bench's registries: ~100
# neighbours of a new log at 10,000 run files, issue 55), while the copies that only these keys tie share 3 or
# more (docs/metrics.md).
MEANS = 1 << 48
MERGE = 0x6E8  # what a merge key is of (as RAW etc.: numbers only, the same hash in every process)
COLUMN_SHIFT = 48  # a merge key carries its column above its 48 bits
MERGE_DISTINCT, MERGE_REPEATS = 8, 4  # distinct alignment keys a run needs, and how often each at most on average
_LOG_CELL = math.log1p(MERGE_CELL)


def merge_keys(alignment: Sequence[int], timing: Sequence[Sequence[float]]) -> array:
    """The run's merge keys (sorted; each column's index above COLUMN_SHIFT bits) from its samples'
    alignment hashes and timing columns, and where there are two, their ratio (the next index: a copy
    rescaled as a whole, then merged, keeps it) and the two together (_joint_keys); only the last for a run
    whose keys say little of which sample is which (a fixed-length workload holds one key: fewer than
    MERGE_DISTINCT, or a key held over MERGE_REPEATS times on average). A merge of two runs of one training
    log holds each step twice, and keeps them.

    Each element's key is CPython's hash of (MERGE, column, alignment hash, cell...), computed for all the
    samples at once with numpy (tuple_hashes); tests/unit/test_merge_keys.py holds it to the per-sample
    loop it replaced (a fifth of a run's fingerprint, issue 55), bit for bit for timings below 2**53 (an int
    timing above is read as the nearest float)."""
    import numpy  # as science/independence.py: only where a run is fingerprinted

    hashed = int_hashes(numpy, numpy.array(alignment, dtype=numpy.int64))
    # (as floats: an int timing past 2**53, 285 years in ms, is read rounded where the loop read it whole)
    columns = [numpy.array(column, dtype=numpy.float64) for column in timing]
    found: list[int] = []
    if len(columns) >= 2:
        found += _joint_keys(numpy, hashed, columns[0], columns[1], len(columns) + 1)
    distinct = len(set(alignment))
    if distinct < MERGE_DISTINCT or distinct * MERGE_REPEATS < len(alignment):
        return array("q", sorted(found))
    if len(columns) >= 2:  # each sample's first timing over its second: a copy rescaled as a whole keeps it
        first, second = columns[0], columns[1]
        usable = (second > 0) & (second < math.inf)
        with numpy.errstate(all="ignore"):
            columns.append(numpy.where(usable, first / numpy.where(usable, second, 1.0), 0.0))
    for c, column in enumerate(columns):
        kept = (column > 0) & (column < math.inf)  # only what a log can place
        cells = log_cells(numpy, column[kept])
        elements = tuple_hashes(numpy, _lanes(numpy, (MERGE, c), hashed[kept], small_int_hashes(numpy, cells)))
        found += _lowest_of(numpy, elements, c)
    return array("q", sorted(found))


def _joint_keys(numpy: Any, hashed: Any, first: Any, second: Any, column: int) -> list[int]:
    """The bottom-k sketch of each sample's (alignment key, cell of its first timing, cell of its second),
    as merge keys of `column` (after the ratio's). A fixed-length workload's requests share one alignment
    key, so the per-column sketches say nothing of which sample is which, but a sample's two timings
    together do: a copy merged with another run (of any workload), thinned and reordered, keeps about the
    share of them that it keeps of its original, as above."""
    kept = (first > 0) & (first < math.inf) & (second > 0) & (second < math.inf)
    cells = [small_int_hashes(numpy, log_cells(numpy, values[kept])) for values in (first, second)]
    return _lowest_of(numpy, tuple_hashes(numpy, _lanes(numpy, (MERGE, column), hashed[kept], *cells)), column)


def _lowest_of(numpy: Any, elements: Any, column: int) -> list[int]:
    """The MERGE_SKETCH lowest distinct element hashes, as merge keys of `column` (sorted)."""
    ordered = numpy.sort(elements)  # (a sort, then the distinct ones: numpy.unique hashes them, several times slower)
    first = numpy.ones(len(ordered), dtype=bool)  # each value's first place
    first[1:] = ordered[1:] != ordered[:-1]
    return sorted({(column << COLUMN_SHIFT) | (h & MASK) for h in ordered[first][:MERGE_SKETCH].tolist()})


def log_cells(numpy: Any, values: Any) -> Any:
    """math.floor(math.log(v) / ...) of each positive finite value (MERGE_CELL wide on a log scale), as int64.
    numpy's log may differ from the C library's in the last bit, which moves a floor only for a product
    next to an integer: those few are recomputed with math's, so every cell is the loop's."""
    scaled = numpy.log(values) * (1 / _LOG_CELL)
    cells = numpy.floor(scaled)
    edge = numpy.flatnonzero(numpy.abs(scaled - numpy.rint(scaled)) < 1e-6)
    for i in edge.tolist():
        cells[i] = math.floor(math.log(float(values[i])) * (1 / _LOG_CELL))
    return cells.astype(numpy.int64)


# CPython's hash of a tuple (Objects/tupleobject.c, xxHash's lanes; the same since 3.8) and of an int
# (Python/pyhash.c: modulo the Mersenne prime 2**61 - 1, sign kept, -1 read as -2), for numpy's int64 arrays.
_XXPRIME_1, _XXPRIME_2, _XXPRIME_5 = 11400714785074694791, 14029467366897019727, 2870177450012600261
_MODULUS = (1 << 61) - 1
_UINT64 = (1 << 64) - 1


def int_hashes(numpy: Any, values: Any) -> Any:
    """hash(int(v)) of each int64, as uint64 (two's complement)."""
    raw = values.view(numpy.uint64)
    negative = values < 0
    magnitude = numpy.where(negative, ~raw + numpy.uint64(1), raw)  # |v|, -2**63's too
    reduced = (magnitude & numpy.uint64(_MODULUS)) + (magnitude >> numpy.uint64(61))
    reduced = numpy.where(reduced >= numpy.uint64(_MODULUS), reduced - numpy.uint64(_MODULUS), reduced)
    hashed = numpy.where(negative, ~reduced + numpy.uint64(1), reduced)
    return numpy.where(hashed == numpy.uint64(_UINT64), numpy.uint64(_UINT64 - 1), hashed)  # -1 -> -2


def small_int_hashes(numpy: Any, values: Any) -> Any:
    """hash(int(v)) of int64s below 2**61 - 1 in magnitude (cells, constants): v itself, -1 read as -2; as uint64."""
    return numpy.where(values == -1, -2, values).view(numpy.uint64)


def tuple_hashes(numpy: Any, lanes: Any) -> Any:
    """hash(tuple(row)) of each row of ints, given each int's hash (a uint64 matrix, a column per position:
    int_hashes, small_int_hashes), as int64: CPython's, computed for all the rows at once."""
    rows, width = lanes.shape
    state = numpy.full(rows, _XXPRIME_5, dtype=numpy.uint64)
    for k in range(width):
        state = state + lanes[:, k] * numpy.uint64(_XXPRIME_2)
        state = (state << numpy.uint64(31)) | (state >> numpy.uint64(33))
        state = state * numpy.uint64(_XXPRIME_1)
    state = state + numpy.uint64(width ^ (_XXPRIME_5 ^ 3527539))
    state = numpy.where(state == numpy.uint64(_UINT64), numpy.uint64(1546275796), state)
    return state.view(numpy.int64)


def _lanes(numpy: Any, constants: Sequence[int], *blocks: Any) -> Any:
    """A tuple_hashes matrix: the constants' hashes in every row, then the blocks (one hash a row each)."""
    fixed = numpy.array([hash(v) & _UINT64 for v in constants], dtype=numpy.uint64)
    return numpy.column_stack([numpy.broadcast_to(fixed, (len(blocks[0]), len(constants))), *blocks])
