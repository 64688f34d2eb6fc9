"""ORV304's merge keys computed with numpy (science/candidates.py `merge_keys`) are the loop's, bit for bit
(for timings below 2**53, all a clock gives: an int above is read as the nearest float).

The keys are published (boards/keys.json's shards) and compared across processes, so numpy must give
CPython's own hashes of the same tuples and math's own cells: each piece is held to Python's, and the
whole to the loop it replaced (tests/testing/candidates_reference.py `merge_keys`, main 05b6922).
"""

from __future__ import annotations

import math
import random

import numpy
from hypothesis import given, settings
from hypothesis import strategies as st

import tests.testing.candidates_reference as reference
from tests.testing.corpus import forgeries_of, measure, workloads
from validator.science import candidates, independence
from validator.science.samples import Columns

EDGES = [
    0,
    1,
    -1,
    -2,
    2,
    (1 << 61) - 2,
    (1 << 61) - 1,
    1 << 61,
    -((1 << 61) - 1),
    -(1 << 61),
    (1 << 63) - 1,
    -(1 << 63),
]


def test_int_hashes_are_pythons_at_the_edges_and_anywhere() -> None:
    rnd = random.Random(7)
    values = EDGES + [rnd.randint(-(1 << 63), (1 << 63) - 1) for _ in range(2000)]
    found = candidates.int_hashes(numpy, numpy.array(values, dtype=numpy.int64)).view(numpy.int64).tolist()
    assert found == [hash(v) for v in values]


def test_small_int_hashes_are_pythons() -> None:
    values = [-(10**15), -2, -1, 0, 1, 2, 10**15, *range(-50, 50)]
    found = candidates.small_int_hashes(numpy, numpy.array(values, dtype=numpy.int64)).view(numpy.int64).tolist()
    assert found == [hash(v) for v in values]


def test_tuple_hashes_are_pythons() -> None:
    rnd = random.Random(11)
    for width in (1, 2, 3):
        rows = [
            [rnd.choice(EDGES + [rnd.randint(-(1 << 63), (1 << 63) - 1), rnd.randint(-99, 99)]) for _ in range(width)]
            for _ in range(500)
        ]
        columns = [numpy.array(column, dtype=numpy.int64) for column in zip(*rows)]
        for constants in ([], [candidates.MERGE, 3], [-1]):
            lanes = candidates._lanes(numpy, constants, *(candidates.int_hashes(numpy, column) for column in columns))
            found = candidates.tuple_hashes(numpy, lanes).tolist()
            assert found == [hash((*constants, *row)) for row in rows]


def test_log_cells_are_maths_even_next_to_a_cell_edge() -> None:
    """Values at a cell's edge (powers of 1 + MERGE_CELL), where a last-bit difference of the log moves the floor."""
    rnd = random.Random(3)
    step = math.log1p(candidates.MERGE_CELL)
    edges = [
        math.exp(k * step) * f
        for k in range(-3000, 20000, 7)
        for f in (1.0, math.nextafter(1.0, 2), math.nextafter(1.0, 0))
    ]
    values = edges + [rnd.uniform(1e-3, 1e6) for _ in range(5000)] + [float(rnd.randint(1, 10**9)) for _ in range(500)]
    found = candidates.log_cells(numpy, numpy.array(values)).tolist()
    assert found == [math.floor(math.log(v) * (1 / step)) for v in values]


class _OffByOneBit:
    """numpy, except that its log is a bit off (another build's SIMD log may be): the cells must not move."""

    def __init__(self, direction: float) -> None:
        self.direction = direction

    def __getattr__(self, name: str) -> object:
        return getattr(numpy, name)

    def log(self, values: numpy.ndarray) -> numpy.ndarray:
        return numpy.nextafter(numpy.log(values), self.direction)


def test_log_cells_do_not_follow_a_log_a_bit_off() -> None:
    step = math.log1p(candidates.MERGE_CELL)
    values = [math.exp(k * step) for k in range(-3000, 20000, 7)]
    expected = [math.floor(math.log(v) * (1 / step)) for v in values]
    for direction in (math.inf, -math.inf):
        assert candidates.log_cells(_OffByOneBit(direction), numpy.array(values)).tolist() == expected


def _inputs(kind: str, samples: list[dict]) -> tuple[list[int], list[list[float]]] | None:
    columns = Columns(samples)
    timing = independence._numeric(columns, independence.TIMING_COLUMNS[kind])
    align = independence._numeric(columns, independence.ALIGN_COLUMNS[kind])
    return None if not timing or align is None else (independence._alignment_hashes(align), timing)


def test_every_corpus_run_and_forgery_keeps_its_merge_keys() -> None:
    compared = 0
    for workload in workloads(1):
        run = measure(workload, 0)
        for samples in (run, *(forged for _, forged in forgeries_of(workload, run))):
            found = _inputs(workload.kind, samples)
            if found is not None:
                assert candidates.merge_keys(*found) == reference.merge_keys(*found)
                compared += 1
    assert compared > 1000


TIMING = st.one_of(
    st.floats(min_value=-1e6, max_value=1e9, allow_nan=False),
    st.integers(-5, 10**12),
    st.sampled_from([0, 0.0, -0.0, 1, 1.0, 1e-300]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), TIMING, TIMING), min_size=1, max_size=80))
def test_any_timings_keep_their_merge_keys(rows: list[tuple[int, int, float, float]]) -> None:
    """Property: zeros, negatives, ints beside floats, repeated keys (a merge), one column or two."""
    alignment = [hash((p, o)) for p, o, _, _ in rows]
    for timing in ([[r[2] for r in rows], [r[3] for r in rows]], [[r[2] for r in rows]]):
        assert candidates.merge_keys(alignment, timing) == reference.merge_keys(alignment, timing)
