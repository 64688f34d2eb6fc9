"""science/candidates.py's candidate keys as they were before issue 55's second speed pass (main 23db4bb),
kept verbatim as the reference tests/unit/test_fingerprint_speed.py holds the live ones to: the keys must
not change by a bit. The constants come from the live module. Issue 51 changed two key families on purpose
(a small fixed-length run's fastest grouped every way, by both timings; a training merge's steps held twice;
means of 15 neighbours), and issue 55 one (a keyed run's smoothed and wide keys marked MEANS):
those are mirrored here, marked, so the speed pass is still held to everything else."""

from __future__ import annotations

import heapq
import itertools
import math
import operator
from array import array
from collections.abc import Iterator, Sequence

from validator.science.candidates import (
    CELL,
    COLUMN_SHIFT,
    EXHAUSTIVE,
    FIRST,
    GAP,
    LAST_CELL,
    MASK,
    MEANS,
    MERGE,
    MERGE_CELL,
    MERGE_DISTINCT,
    MERGE_REPEATS,
    MERGE_SKETCH,
    PROBE,
    RANKED,
    RANKED_WINDOW,
    RAW,
    SAMPLES,
    SEQUENCE,
    SEQUENCE_SMOOTHED,
    SEQUENCE_STRIDE,
    SMALL,
    SMOOTH_CELL,
    SMOOTHED,
    WIDE,
    WINDOW,
    WINDOW_CELL,
)


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


def _cell(value: float, centre: float, width: float) -> int:
    return _floor((value - centre) / width)


def _floor(position: float) -> int:
    """floor, with a position past any cell (a subnormal spread divides to infinity) in the last one."""
    return math.floor(max(-LAST_CELL, min(LAST_CELL, position)))


def _window_cells(values: Sequence[float]) -> tuple[int, ...] | None:
    low, high = min(values), max(values)
    if not high > low:
        return None
    return tuple(_floor((v - low) / (high - low) / WINDOW_CELL) for v in values)


def _smoothed(rows: Sequence[Sequence[float] | None], column: int) -> float:
    """The mean of the column over a window of neighbouring samples (None beyond the run's ends)."""
    held = [row[column] for row in rows if row is not None]
    return sum(held) / len(held)


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
    samples in list order and `ranked`, the fastest, for a run aligned by occurrence (else None)."""
    found: set[int] = set()
    means_found: set[int] = set()
    columns = [c for c, spread in enumerate(spreads) if spread is not None]
    # keys held twice or more: a merge (a quarter or more of them; a few repeats by chance publish nothing more)
    if few is not None and 4 * sum(len(occurrences) > 1 for _, occurrences in few) >= len(few):
        _merged_keys(found, spreads, columns, few)
    if repeated is not None:  # issue 51 (after 23db4bb): a training merge's steps held twice
        _merged_keys(found, spreads, columns, repeated)
    if sequence is None:
        hashes = [h for h, _ in aligned]
        rows = [row for _, row in aligned]
        for c in columns:
            centre, width = spreads[c][0], spreads[c][1] * CELL  # type: ignore[index]
            for group in _groups(len(rows), SAMPLES["raw"]):
                cells = tuple(_cell(rows[i][c], centre, width) for i in group)
                found.add(hash((RAW, c, *(hashes[i] for i in group), *cells)))
            for group in _groups(len(rows), SAMPLES["window"]):
                window = _window_cells([rows[i][c] for i in group])
                if window is not None:
                    found.add(hash((WINDOW, c, *(hashes[i] for i in group), *window)))
        for c in range(len(spreads)):
            means = [_smoothed(window, c) for window in windows]
            spread = _spread(means)
            if spread is not None:
                for group in _groups(len(means), SAMPLES["smoothed"]):
                    cells = tuple(_cell(means[i], spread[0], spread[1] * SMOOTH_CELL) for i in group)
                    means_found.add(hash((SMOOTHED, c, *(hashes[i] for i in group), *cells)))
        for c, means in enumerate(wide or ()):  # issue 51 (after 23db4bb): means of 15 in list order
            spread = _spread(means)
            if spread is not None:
                for group in _groups(len(means), SAMPLES["smoothed"]):
                    cells = tuple(_cell(means[i], spread[0], spread[1] * SMOOTH_CELL) for i in group)
                    means_found.add(hash((WIDE, c, *(hashes[i] for i in group), *cells)))
    else:
        count = len(sequence)
        for c in columns:
            centre, width = spreads[c][0], spreads[c][1] * CELL  # type: ignore[index]
            positions = [_cell(row[c], centre, width) for row in sequence]
            for group in _groups(count, SAMPLES["sequence"], GAP if count < SMALL else 0):
                found.add(hash((SEQUENCE, c, *(positions[i] for i in group))))
            reach = len(windows[0]) // 2 if windows else 2
            means = [_smoothed(sequence[max(0, i - reach) : i + reach + 1], c) for i in range(count)]
            spread = _spread(means)
            if spread is not None:
                smooth = [_cell(m, spread[0], spread[1] * SMOOTH_CELL) for m in means]
                # every SEQUENCE_STRIDE-th mean; a small run (as _groups) must hold a few: every other, one fewer
                modes = (
                    [(SAMPLES["smoothed"] - 1, 2 if count < SMALL else SEQUENCE_STRIDE)] if count < 2 * SMALL else []
                )
                modes += [(SAMPLES["smoothed"], SEQUENCE_STRIDE)] if count >= SMALL else []
                for size, stride in modes:
                    span = (size - 1) * stride
                    for first in range(max(0, count - span)):
                        found.add(hash((SEQUENCE_SMOOTHED, c, stride, *smooth[first : first + span + 1 : stride])))
        if ranked is not None and len(spreads) > 1 and spreads[1] is not None:
            centre, width = spreads[1][0], spreads[1][1] * CELL
            positions = [_cell(row[1], centre, width) for row in ranked]
            for group in _groups(len(positions), SAMPLES["sequence"], GAP if len(positions) < SMALL else 0):
                found.add(hash((RANKED, *(positions[i] for i in group))))
            if len(positions) < SMALL:  # a third of a small run dropped moves its spread: groups by their own range
                # issue 51 (after 23db4bb): every group of a run of at most EXHAUSTIVE, by both timings' own range
                gap = len(ranked) if len(ranked) <= EXHAUSTIVE else GAP
                for group in _spans(len(ranked), SAMPLES["window"], gap):
                    window = _window_cells([ranked[i][1] for i in group])
                    lead = _window_cells([ranked[i][0] for i in group])
                    if window is not None and lead is not None:
                        found.add(hash((RANKED_WINDOW, *window, *lead)))
    # issue 55 (after 05b6922): a keyed run's smoothed and wide keys marked MEANS (they tie several at a time)
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
        for group in _groups(len(held), SAMPLES["raw"]):
            probes = []
            for i in group:
                near: set[int] = set()
                for row in held[i]:
                    position = (row[c] - centre) / width
                    near.update((_floor(position - PROBE), _floor(position + PROBE)))
                probes.append(sorted(near))
            for cells in itertools.product(*probes):
                found.add(hash((RAW, c, *(hashes[i] for i in group), *cells)))
        for group in _groups(len(held), SAMPLES["window"]):
            for choice in itertools.product(*(held[i] for i in group)):
                window = _window_cells([row[c] for row in choice])
                if window is not None:
                    found.add(hash((WINDOW, c, *(hashes[i] for i in group), *window)))


LOG_CELL = math.log1p(MERGE_CELL)


# merge_keys as a loop over the samples (main 05b6922), before numpy computed CPython's hashes at once
def merge_keys(alignment: Sequence[int], timing: Sequence[Sequence[float]]) -> array:
    """candidates.merge_keys, one sample at a time (its docstring says what the keys are)."""
    found: list[int] = []
    if len(timing) >= 2:
        found += _joint_keys(alignment, timing, len(timing) + 1)
    distinct = len(set(alignment))
    if distinct < MERGE_DISTINCT or distinct * MERGE_REPEATS < len(alignment):
        return array("q", sorted(found))
    columns = list(timing)
    if len(columns) >= 2:  # each sample's first timing over its second: a copy rescaled as a whole keeps it
        columns.append([a / b if 0 < b < math.inf else 0.0 for a, b in zip(columns[0], columns[1])])
    for c, column in enumerate(columns):
        keys, values = alignment, column
        total = sum(column)  # one C pass: NaN or inf anywhere makes it so; then keep only what a log can place
        if not (total < math.inf and min(column, default=0) > 0):
            kept = [(key, value) for key, value in zip(alignment, column) if 0 < value < math.inf]
            keys, values = [key for key, _ in kept], [value for _, value in kept]
        cells = map(math.floor, map(operator.mul, map(math.log, values), itertools.repeat(1 / LOG_CELL)))
        elements = set(map(hash, zip(itertools.repeat(MERGE), itertools.repeat(c), keys, cells)))
        found += sorted({(c << COLUMN_SHIFT) | (h & MASK) for h in heapq.nsmallest(MERGE_SKETCH, elements)})
    return array("q", sorted(found))


def _joint_keys(alignment: Sequence[int], timing: Sequence[Sequence[float]], column: int) -> list[int]:
    """The bottom-k sketch of each sample's (alignment key, cell of its first timing, cell of its second),
    as merge keys of `column` (after the ratio's). A fixed-length workload's requests share one alignment
    key, so the per-column sketches say nothing of which sample is which, but a sample's two timings
    together do: a copy merged with another run (of any workload), thinned and reordered, keeps about the
    share of them that it keeps of its original, as above."""
    scale = 1 / LOG_CELL
    elements = {
        hash((MERGE, column, key, math.floor(math.log(first) * scale), math.floor(math.log(second) * scale)))
        for key, first, second in zip(alignment, timing[0], timing[1])
        if 0 < first < math.inf and 0 < second < math.inf
    }
    return sorted({(column << COLUMN_SHIFT) | (h & MASK) for h in heapq.nsmallest(MERGE_SKETCH, elements)})
