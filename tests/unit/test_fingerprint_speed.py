"""The copy fingerprint's cheaper helpers (issue 55) give bit for bit what the old ones gave.

The reference is the helpers as they were (tests/testing/fingerprint_reference.py). Each helper is
compared with its reference on the same samples, and so is the whole fingerprint with the reference
helpers swapped into the module (the packing and the own-noise estimate, which nobody rewrote,
then run on both). The near print and its candidate keys are held to the ones of main 23db4bb
(fingerprint_reference._near_print, candidates_reference), less the level it no longer computes (nothing
read it), so the keys a registry publishes (boards/keys.json) do not change; and where a timing column
holds a float within independence.TINY of zero but not 0, which since says nothing (_numeric_as_now). "The same" is strict: equal types, floats equal by their bits (0.0 is not -0.0,
1 is not 1.0), arrays by type code and bytes.
"""

from __future__ import annotations

import math
import random
import struct
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tests.testing.fingerprint_reference as reference
from validator.load.pipeline import samples_fast_ok
from validator.science import independence
from validator.science.samples import Columns

Samples = list[dict[str, Any]]
REWRITTEN = ("_row_order", "_multiset_text", "_exact", "_column_print", "_numeric", "_values_print", "_near_print")


def same(a: Any, b: Any) -> bool:
    """Equal in value, type and bits, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, array):
        return a.typecode == b.typecode and a.tobytes() == b.tobytes()
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def test_same_is_strict() -> None:
    assert same((1.0, [2]), (1.0, [2]))
    assert not same(0.0, -0.0) and not same(1, 1.0) and not same((1.0,), [1.0]) and same(math.nan, math.nan)
    assert not same(array("d", [1.0]), array("f", [1.0])) and not same({"a": 1, "b": 2}, {"b": 2, "a": 1})


def _warm(kind: str, samples: Samples) -> Columns:
    """The columns as the loader hands them to the fingerprint (the schema's fast path sorted some)."""
    columns = Columns(samples)
    samples_fast_ok(kind, samples, columns)
    return columns


def _numeric_as_now(columns: Columns, names: Any) -> Any:
    """reference._numeric with the one change of what it means since: a column holding a float within
    independence.TINY of zero but not 0 says nothing, as one past SANE (a 1e-300 among ~1 s steps overflowed
    the noise fits, a subnormal spread zeroed the keys' cells: orv check's internal error)."""
    found = reference._numeric(columns, names)
    tiny = [v for column in found or () for v in column if type(v) is float and 0 < abs(v) < independence.TINY]
    return None if tiny else found


def _reference_fingerprint(monkeypatch: pytest.MonkeyPatch, kind: str, samples: Samples, exact: bool) -> Any:
    with monkeypatch.context() as patched:
        for name in (*REWRITTEN, "_near_parts"):
            patched.setattr(independence, name, getattr(reference, name))
        patched.setattr(independence, "_numeric", _numeric_as_now)
        return _without_level(independence.sample_fingerprint(kind, samples, _warm(kind, samples), exact))


def _without_level(fingerprint: Any) -> Any:
    """The reference fingerprint less its near print's level (packed, its fourth slot), which went."""
    if fingerprint and fingerprint[-1][0] == "near":
        near = fingerprint[-1]
        return (*fingerprint[:-1], (*near[:3], *near[4:]))
    return fingerprint


def agree(new: Callable[[], Any], old: Callable[[], Any]) -> None:
    """The new call returns what the old one did. Where the old one raised (OverflowError: an integer
    past the doubles beside a NaN, which no registry file can hold), the new one may answer instead."""
    try:
        expected = old()
    except OverflowError:
        try:
            new()
        except OverflowError:
            pass
        return
    assert same(new(), expected)


def assert_same_prints(monkeypatch: pytest.MonkeyPatch, kind: str, samples: Samples) -> None:
    """Every rewritten helper and the whole fingerprint (with and without the exact hash, with the
    loader's warm columns and with cold ones) equal their references."""
    for exact in (True, False):
        agree(
            lambda: independence.sample_fingerprint(kind, samples, _warm(kind, samples), exact),
            lambda: _reference_fingerprint(monkeypatch, kind, samples, exact),
        )
    for fresh in (Columns, lambda s: _warm(kind, s)):
        agree(
            lambda: independence._exact(kind, samples, fresh(samples)),
            lambda: reference._exact(kind, samples, fresh(samples)),
        )
        agree(
            lambda: independence._values_print(kind, fresh(samples)),
            lambda: reference._values_print(kind, fresh(samples)),
        )
        for names in (independence.TIMING_COLUMNS.get(kind, ()), independence.ALIGN_COLUMNS.get(kind, ())):
            agree(lambda: independence._numeric(fresh(samples), names), lambda: _numeric_as_now(fresh(samples), names))
    columns = Columns(samples)
    try:
        timing = reference._numeric(columns, independence.TIMING_COLUMNS.get(kind, ()))
        align = reference._numeric(columns, independence.ALIGN_COLUMNS.get(kind, ()))
    except OverflowError:
        return
    if timing and align is not None:
        assert same(independence._near_parts(timing, align), reference._near_parts(timing, align))


# ---- varied run shapes, built from a seed (a few thousand samples where the sketches pick lowest hashes) ----

Value = Callable[[random.Random, int], Any]


def _training(rnd: random.Random, count: int, time_s: Value, steps: str = "in order") -> Samples:
    numbers = list(range(1, count + 1))
    if steps == "twice":  # a merge of two runs: every step twice
        numbers = sorted(numbers + numbers)
    elif steps == "shuffled":
        rnd.shuffle(numbers)
    return [
        {"step": s, "time_s": time_s(rnd, i), "tokens": 1_048_576, "loss": round(2 - i * 1e-4, 5)}
        for i, s in enumerate(numbers)
    ]


def _inference(rnd: random.Random, count: int, fixed: bool, ttft: Value, e2e: Value) -> Samples:
    samples = []
    for i in range(count):
        prompt, output = (1024, 256) if fixed else (rnd.randint(900, 1100), rnd.randint(100, 512))
        samples.append(
            {"prompt_tokens": prompt, "output_tokens": output, "ttft_ms": ttft(rnd, i), "e2e_ms": e2e(rnd, i)}
        )
    return samples


def _gauss(mean: float, sd: float, digits: int = 4) -> Value:
    return lambda rnd, _: round(rnd.gauss(mean, sd), digits)


def _coarse(rnd: random.Random, _: int) -> float:  # a 0.1 ms clock: many repeats
    return round(rnd.uniform(80, 81), 1)


def _odd(rnd: random.Random, _: int) -> Any:  # the values a hostile or broken file may hold
    return rnd.choice([0, 1, 1.0, -0.0, 0.0, 2.5, 1e308, -1e308, math.inf, math.nan, 2**60, 7, 7.0, 1e-300])


def shapes(seed: int) -> Iterator[tuple[str, str, Samples]]:
    rnd = random.Random(seed)
    yield "training", "bench-like", _training(rnd, rnd.choice([40, 700, 2500]), _gauss(55, 0.8, 7))
    yield "training", "merged (steps twice)", _training(rnd, 600, _gauss(55, 0.8, 7), "twice")
    yield "training", "shuffled steps", _training(rnd, 900, _gauss(55, 0.8, 7), "shuffled")
    yield "training", "integer step times", _training(rnd, 300, lambda r, _: r.randint(50, 60))
    yield "training", "odd values", _training(rnd, 60, _odd)
    yield "training", "few samples", _training(rnd, rnd.randint(1, 9), _gauss(55, 0.8, 2))
    yield (
        "inference",
        "bench-like",
        _inference(rnd, rnd.choice([38, 1000, 3000]), False, _gauss(560, 20), _gauss(6000, 1500)),
    )
    yield (
        "inference",
        "fixed-length",
        _inference(rnd, rnd.choice([38, 500, 2000]), True, _gauss(130, 5, 3), _gauss(12000, 200, 3)),
    )
    yield "inference", "coarse clock", _inference(rnd, 800, False, _coarse, _coarse)
    yield "inference", "llama-bench tg (zero TTFT)", _inference(rnd, 10, True, lambda r, _: 0.0, _gauss(900, 3, 6))
    yield "inference", "llama-bench pp", _inference(rnd, 5, True, _gauss(80, 1, 6), _gauss(80, 1, 6))
    yield (
        "inference",
        "integer latencies",
        _inference(rnd, 400, False, lambda r, _: r.randint(1, 9), lambda r, _: r.randint(1, 30)),
    )
    yield "inference", "odd values", _inference(rnd, 50, False, _odd, _odd)
    yield "inference", "odd, few", _inference(rnd, 6, True, _odd, _odd)
    tied = _inference(rnd, 300, False, _gauss(560, 20), lambda r, i: [1, 1.0, 0.0, -0.0, 2][i % 5])
    yield "inference", "lead ties of 1 and 1.0, 0.0 and -0.0", tied
    yield (
        "inference",
        "one value in 1e308",
        _inference(rnd, 100, False, _gauss(560, 20), lambda r, i: 1e308 if i == 7 else 5.0 + i),
    )
    repeated = _inference(rnd, 200, False, _gauss(560, 20), _gauss(6000, 1500))
    yield "inference", "a copy merged in (keys and rows twice)", repeated + [dict(s) for s in repeated[::-1]]


def test_a_bench_registrys_runs_keep_their_fingerprints(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every run file bench/generate.py writes for its first 50 recipes (training, inference, two swept
    recipes' fixed-length points; 64-3,000 samples a run) has the fingerprint, candidate keys included,
    that the reference gives it: the keys a registry publishes stay as they are."""
    from bench import generate

    for i in range(50):  # generate.generate's recipes, without its git repository and boards
        rng = random.Random(20261202 * 1_000_003 + i)
        if i % generate.SWEEP_EVERY == generate.SWEEP_EVERY - 1:
            generate.swept(tmp_path, i, rng)
        else:
            (generate.training if i % 2 == 0 else generate.inference)(
                tmp_path, i, rng, rng.choice(generate.RUNS_PER_RECIPE)
            )
    documents = [orjson.loads(path.read_bytes()) for path in sorted((tmp_path / "runs").rglob("*.json"))]
    assert len(documents) >= 40 and {"training", "inference"} <= {d["kind"] for d in documents}
    for document in documents:
        kind, samples = document["kind"], document["samples"]
        new = independence.sample_fingerprint(kind, samples, _warm(kind, samples))
        assert new[-1][0] == "near" and len(new[-1][-2]) > 0  # candidate keys (then merge keys), compared below
        assert same(new, _reference_fingerprint(monkeypatch, kind, samples, True))


@pytest.mark.parametrize("seed", range(6))
def test_every_run_shape_keeps_its_fingerprint(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    for kind, _, samples in shapes(seed):
        assert_same_prints(monkeypatch, kind, samples)


def test_the_lowest_hashes_below_a_bound_are_the_lowest() -> None:
    """The lowest hashes taken below a bound, and the whole sort when too few fall under it (uneven
    hashes: the bound is a shortcut, never an answer of its own)."""
    rnd = random.Random(1)
    hashes = [rnd.getrandbits(64) - (1 << 63) for _ in range(5000)]
    assert independence._lowest(hashes, 64) == sorted(hashes)[:64]
    for few_low in (0, 1, 63, 64):  # fewer than 64 below the bound: the whole sort
        skewed = sorted(hashes)[:few_low] + [h for h in hashes if h > 0]
        assert independence._lowest(skewed, 64) == sorted(skewed)[:64]
    assert independence._lowest(hashes[:10], 64) == sorted(hashes[:10])


ODD = st.one_of(
    st.integers(-3, 3),
    st.integers(2**53, 2**62),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 1e308, -1e308, 1e150, 5e-324, 2**64, 10**400, -(10**400)]),
)
KIND_AND_SAMPLES = st.one_of(
    st.tuples(
        st.just("training"),
        st.lists(
            st.fixed_dictionaries({"step": st.integers(0, 20), "time_s": ODD, "tokens": st.just(8), "loss": ODD}),
            min_size=1,
            max_size=24,
        ),
    ),
    st.tuples(
        st.just("inference"),
        st.lists(
            st.fixed_dictionaries(
                {"prompt_tokens": st.integers(0, 4), "output_tokens": st.integers(0, 4), "ttft_ms": ODD, "e2e_ms": ODD}
            ),
            min_size=1,
            max_size=24,
        ),
    ),
)


@settings(max_examples=300, deadline=None)
@given(KIND_AND_SAMPLES)
def test_any_values_keep_their_fingerprint(kind_and_samples: tuple[str, Samples]) -> None:
    """Property: NaN, infinities, 1e308, ints beside floats, repeated keys and rows, ties of 1 and 1.0."""
    kind, samples = kind_and_samples
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert_same_prints(monkeypatch, kind, samples)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["training", "inference"]),
    st.integers(0, 2**32),
    st.integers(8, 4000),
    st.sampled_from(["fine", "coarse", "fixed", "integers", "twice"]),
)
def test_large_runs_keep_their_fingerprint(kind: str, seed: int, count: int, shape: str) -> None:
    """Property at the sizes where the sketches take their lowest hashes below a bound."""
    rnd = random.Random(seed)
    value = {"fine": _gauss(500, 50), "coarse": _coarse, "integers": lambda r, _: r.randint(1, 99)}.get(
        shape, _gauss(500, 5)
    )
    if kind == "training":
        samples = _training(rnd, count, value, "twice" if shape == "twice" else "in order")
    else:
        samples = _inference(rnd, count, shape == "fixed", value, _gauss(9000, 900) if shape != "coarse" else value)
        if shape == "twice":
            samples += samples[: count // 2]
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert_same_prints(monkeypatch, kind, samples)
