"""Independent runs (ORV304, ORV305, tiers): every way of passing one measurement off as two fails.

Each attempt starts from a real-looking run (step times that vary) and makes the "second
measurement" from it: an exact copy under another measurer, a rescale, an offset, a shuffle, the
same moment, the same signer, no signature.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.testing.factories import (
    inference_recipe,
    inference_run,
    store_run,
    training_recipe,
    training_run,
    write_recipe,
)
from tests.testing.signing import keygen, measured, register, sign, tier
from validator.engine.evaluate import Config, analyse, run
from validator.evidence.tiers import NEEDS_SECOND_SIGNER, NEEDS_SIGNED, NOT_INDEPENDENT, derive
from validator.hashing import run_path
from validator.science.independence import same_measurement, sample_fingerprint


def findings(root: Path) -> list[str]:
    return sorted(
        f"{d.code} {d.path}"
        for d in run(Config(root=str(root), skip_boards=True)).diagnostics
        if d.code.startswith("ORV3") and d.code != "ORV303"
    )


def signed_pair(
    registry: Path, tmp_path: Path, recipe: dict[str, Any], first: dict[str, Any], second: dict[str, Any]
) -> tuple[str, str]:
    """Both runs stored, referenced by the recipe and signed by two registered measurers (lab-a,
    lab-b): (the recipe's path, the second run's reference)."""
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(registry, ("lab-a", alice), ("lab-b", bob))
    a, b = store_run(registry, first), store_run(registry, second)
    recipe["runs"] = [a, b]
    rel = write_recipe(registry, recipe)
    sign(registry, a, alice)
    sign(registry, b, bob)
    return rel, b


def copy_finding(root: Path) -> str:
    """The message of the one ORV304 finding `orv check` reports."""
    [copied] = [d for d in run(Config(root=str(root), skip_boards=True)).diagnostics if d.code == "ORV304"]
    return copied.message


def rescaled(doc: dict[str, Any]) -> None:
    for s in doc["samples"]:
        s["time_s"] = s["time_s"] * 0.995  # 0.5% faster every step: still within 1% of the claim


def offset(doc: dict[str, Any]) -> None:
    for s in doc["samples"]:
        s["time_s"] = s["time_s"] + 0.002  # stays within 1% of the claim


def shuffled(doc: dict[str, Any]) -> None:
    times = [s["time_s"] for s in doc["samples"]]
    random.Random(7).shuffle(times)
    for s, t in zip(doc["samples"], times):
        s["time_s"] = t


def exact(doc: dict[str, Any]) -> None:
    pass


@pytest.mark.parametrize("fake", [exact, rescaled, offset, shuffled], ids=["copy", "rescale", "offset", "shuffle"])
def test_a_faked_second_run_is_orv304_and_never_t3(
    fake: Callable[[dict[str, Any]], None], registry: Path, tmp_path: Path
) -> None:
    recipe = training_recipe("faked", 1480.4)
    original = measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", 1)
    second = copy.deepcopy(original)
    fake(second)
    second.update(measured_by="lab-b", measured_at="2026-10-19T11:00:00Z")
    rel, b = signed_pair(registry, tmp_path, recipe, original, second)
    assert findings(registry) == [f"ORV304 {run_path(b.split(':')[1])}"]
    result = tier(registry, rel)
    assert result.tier == "T2" and result.reasons[-1] == NOT_INDEPENDENT
    if fake is exact:  # `orv check` keeps the exact hash and words the copy by it; only `orv boards` leaves it out
        assert copy_finding(registry).endswith("identical samples")
    # `orv boards` loads without the exact hashes (for_tiers): the copy is caught all the same
    boards_view = analyse(str(registry), for_tiers=True)
    assert all(r.facts.fingerprint[0] == ("exact", None) for r in boards_view.snapshot.runs.values())
    assert derive(boards_view.snapshot, boards_view.diagnostics)[rel] == result


def test_a_copy_whose_step_times_say_nothing_is_caught_by_its_exact_hash(registry: Path, tmp_path: Path) -> None:
    """Two-valued step times (warm-up and steady) give no column print: the exact hash alone shows the
    copy, in `orv check` and in `orv boards`, which keeps the hash for such a run."""
    recipe = training_recipe("flat", 1480.4)
    original = training_run(recipe, 1480.4, measured_by="lab-a")
    original["measured_at"] = "2026-10-18T10:00:00Z"
    second = copy.deepcopy(original)
    second.update(measured_by="lab-b", measured_at="2026-10-19T11:00:00Z")
    rel, _ = signed_pair(registry, tmp_path, recipe, original, second)
    assert copy_finding(registry).endswith("identical samples")
    result = tier(registry, rel)
    assert result.tier == "T2" and result.reasons[-1] == NOT_INDEPENDENT
    boards_view = analyse(str(registry), for_tiers=True)
    assert all(
        not [e for e in r.facts.fingerprint[1:] if e[0] not in ("near", "values")] and r.facts.fingerprint[0][1]
        for r in boards_view.snapshot.runs.values()
    )
    assert derive(boards_view.snapshot, boards_view.diagnostics)[rel] == result


def test_two_real_measurements_are_independent(registry: Path, tmp_path: Path) -> None:
    recipe = training_recipe("real", 1480.4)
    rel, _ = signed_pair(
        registry,
        tmp_path,
        recipe,
        measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", 1),
        measured(recipe, 1480.4, "lab-b", "2026-10-19T11:00:00Z", 2),
    )  # same figure, own timings
    assert findings(registry) == []
    assert tier(registry, rel).tier == "T3"
    boards_view = analyse(str(registry), for_tiers=True)  # `orv boards`: no exact hashes, the same T3
    assert derive(boards_view.snapshot, boards_view.diagnostics)[rel].tier == "T3"


def test_same_measured_at_is_orv305_and_not_a_reproduction(registry: Path, tmp_path: Path) -> None:
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(registry, ("lab-a", alice), ("lab-b", bob))
    recipe = training_recipe("same-moment", 1480.4)
    a = store_run(registry, measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", 1))
    b = store_run(registry, measured(recipe, 1480.4, "lab-b", "2026-10-18T10:00:00Z", 2))
    recipe["runs"] = [a, b]
    rel = write_recipe(registry, recipe)
    sign(registry, a, alice)
    sign(registry, b, bob)
    assert findings(registry) == [f"ORV305 {run_path(b.split(':')[1])}"]
    assert tier(registry, rel).reasons == (NOT_INDEPENDENT,)


def test_same_signer_and_unsigned_second_runs_are_not_reproductions(registry: Path, tmp_path: Path) -> None:
    alice = keygen(tmp_path, "lab-a")
    register(registry, ("lab-a", alice))
    recipe = training_recipe("one-lab", 1480.4)
    a = store_run(registry, measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", 1))
    b = store_run(registry, measured(recipe, 1478.0, "lab-a", "2026-10-19T10:00:00Z", 2))
    c = store_run(registry, measured(recipe, 1479.0, "lab-c", "2026-10-20T10:00:00Z", 3))  # unsigned
    recipe["runs"] = [a, b, c]
    rel = write_recipe(registry, recipe)
    assert tier(registry, rel).reasons == (NEEDS_SIGNED,)
    sign(registry, a, alice)
    sign(registry, b, alice)
    assert findings(registry) == []
    assert tier(registry, rel).reasons == (NEEDS_SECOND_SIGNER,)


def test_inference_copies_with_rescaled_latencies_are_one_measurement() -> None:
    recipe = inference_recipe("x")
    doc = inference_run(recipe)
    rng = random.Random(3)
    for s in doc["samples"]:
        s["ttft_ms"] = 80 + rng.random() * 40
        s["e2e_ms"] = s["ttft_ms"] + 2400 + rng.random() * 200
    faked = [{**s, "ttft_ms": s["ttft_ms"] * 1.02, "e2e_ms": s["e2e_ms"] * 1.02} for s in reversed(doc["samples"])]
    # a re-measurement: each request's TTFT moves by tens of percent, its e2e by a few (docs/metrics.md);
    # keeping e2e and nudging TTFT by < 1 ms would be a copy (timings that agree sample by sample)
    other = [
        {**s, "ttft_ms": s["ttft_ms"] * rng.uniform(0.7, 1.3), "e2e_ms": s["e2e_ms"] * rng.uniform(0.97, 1.03)}
        for s in doc["samples"]
    ]
    base = sample_fingerprint("inference", doc["samples"])
    assert same_measurement(base, sample_fingerprint("inference", faked))
    assert same_measurement(base, sample_fingerprint("inference", other)) is None


def test_buckets_never_separate_two_fingerprints_within_the_tolerance() -> None:
    """The grouping that keeps ORV304 linear must not hide a copy whose quantiles straddle a cell edge."""
    from validator.science.independence import CELL, KEY_QUANTILES, QUANTILES, TOLERANCE, buckets, same_measurement

    rng = random.Random(7)
    for _ in range(500):
        base = sorted(rng.random() for _ in range(QUANTILES + 1))
        for i in KEY_QUANTILES:  # put the key quantiles right at a cell edge
            base[i] = round(base[i] / CELL) * CELL
        nudged = [q + rng.uniform(-TOLERANCE, TOLERANCE) * 0.99 for q in base]
        a = (("exact", "a"), ("time_s", 1000, tuple(base), TOLERANCE))
        b = (("exact", "b"), ("time_s", 1000, tuple(nudged), TOLERANCE))
        assert same_measurement(a, b)
        assert set(buckets(a)) & set(buckets(b))


SAMPLE_VALUES = st.one_of(
    st.integers(-5, 5),
    st.integers(2**64, 2**70),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["nan", "},{", "{", "}"]),
    st.none(),
)
SAMPLES = st.lists(
    st.one_of(
        st.dictionaries(st.sampled_from(["step", "time_s", "loss", "},{"]), SAMPLE_VALUES, max_size=3),
        st.dictionaries(st.just("x"), st.lists(st.dictionaries(st.just("y"), SAMPLE_VALUES), max_size=3)),
        SAMPLE_VALUES,
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(SAMPLES, st.randoms(use_true_random=False))
def test_exact_fingerprint_is_the_multiset_of_samples(samples: list[Any], rnd: random.Random) -> None:
    """Any order gives the same exact print; changing one sample changes it (also for nested or odd samples)."""
    exact = sample_fingerprint("other", samples)[0]
    shuffled = copy.deepcopy(samples)
    rnd.shuffle(shuffled)
    assert sample_fingerprint("other", shuffled)[0] == exact
    changed = copy.deepcopy(samples)
    changed[rnd.randrange(len(changed))] = {"step": "changed"}
    if sorted(map(repr, changed)) != sorted(map(repr, samples)):
        assert sample_fingerprint("other", changed)[0] != exact


# Few keys and values, so that lead values tie, rows repeat, 1 meets 1.0 and 0.0 meets -0.0.
TIED_NUMBERS = st.one_of(st.sampled_from([0, 1, 2, 0.0, -0.0, 1.0, 1.5, 2**60]), st.floats(0, 4, allow_nan=False))
TIED_VALUES = st.one_of(*[TIED_NUMBERS] * 12, st.sampled_from(["nan", "skipped", "a", 2**70, None, True]))
TIED_SAMPLES = st.one_of(  # mostly one shape per list, as in a run file
    st.lists(
        st.fixed_dictionaries({"step": TIED_VALUES, "time_s": TIED_VALUES, "tokens": TIED_VALUES, "loss": TIED_VALUES}),
        min_size=1,
        max_size=8,
    ),
    st.lists(
        st.fixed_dictionaries(
            {"prompt_tokens": TIED_VALUES, "output_tokens": TIED_VALUES, "ttft_ms": TIED_VALUES, "e2e_ms": TIED_VALUES},
            optional={"start_ms": TIED_VALUES},
        ),
        min_size=1,
        max_size=8,
    ),
    st.lists(
        st.dictionaries(st.sampled_from(["step", "e2e_ms", "x"]), TIED_VALUES, max_size=3), min_size=1, max_size=8
    ),
)


def _reference_multiset(samples: list[Any]) -> list[str]:
    """The exact print's definition, written plainly: each sample as canonical text, sorted."""
    import json

    return sorted(json.dumps(s, sort_keys=True) for s in samples)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["training", "inference", "other"]),
    TIED_SAMPLES,
    st.randoms(use_true_random=False),
    st.integers(0, 2),
)
def test_exact_print_equal_exactly_when_the_samples_are_one_multiset(
    kind: str, samples: list[Any], rnd: random.Random, how: int
) -> None:
    """The exact print's fast forms (columns sorted by a lead column, ties settled by whole rows)
    match exactly when the plain definition does: a reordered copy always, anything else never."""
    other = copy.deepcopy(samples)
    if how == 0:  # a reordered copy
        rnd.shuffle(other)
    elif how == 1:  # one value changed (maybe to an equal number written otherwise: 1 -> 1.0)
        sample = other[rnd.randrange(len(other))]
        if sample:
            key = rnd.choice(sorted(sample))
            sample[key] = rnd.choice([1, 1.0, -0.0, 0.0, 2**70, "a", None, 3.25])
        rnd.shuffle(other)
    else:  # one sample repeated in place of another
        other[rnd.randrange(len(other))] = copy.deepcopy(other[rnd.randrange(len(other))])
    same = _reference_multiset(samples) == _reference_multiset(other)
    assert (sample_fingerprint(kind, samples)[0] == sample_fingerprint(kind, other)[0]) == same


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["training", "inference", "other"]),
    TIED_SAMPLES,
    st.randoms(use_true_random=False),
    st.integers(0, 3),
)
def test_leaving_the_exact_hash_out_never_changes_a_verdict(
    kind: str, samples: list[Any], rnd: random.Random, how: int
) -> None:
    """`orv boards` leaves the exact hash out where a timing column is informative (exact=False):
    the column prints stay the same, the hash is kept where no column is informative, and whether
    two runs are one measurement comes out the same for any mix of full and partial fingerprints."""
    other = copy.deepcopy(samples)
    if how == 0:  # a reordered copy
        rnd.shuffle(other)
    elif how == 1:  # a rescaled and reordered copy of the timings
        for sample in other:
            for key in ("time_s", "ttft_ms", "e2e_ms"):
                if type(sample.get(key)) in (int, float):
                    sample[key] = sample[key] * 1.5 + 2
        rnd.shuffle(other)
    elif how == 2:  # one value changed
        sample = other[rnd.randrange(len(other))]
        if sample:
            sample[rnd.choice(sorted(sample))] = rnd.choice([1, 1.0, -0.0, 3.25, "a"])
    else:  # another run
        other = [
            dict(sample, **{k: rnd.random() for k in ("time_s", "ttft_ms", "e2e_ms") if k in sample})
            for sample in other
        ]
    full = [sample_fingerprint(kind, s) for s in (samples, other)]
    partial = [sample_fingerprint(kind, s, exact=False) for s in (samples, other)]
    for whole, part in zip(full, partial):
        assert part[1:] == whole[1:]
        column_prints = [p for p in whole[1:] if p[0] not in ("near", "values")]  # sketches are no column print
        assert part[0] == (whole[0] if not column_prints else ("exact", None))
    verdict = same_measurement(*full) is not None
    for a, b in ((partial[0], partial[1]), (full[0], partial[1]), (partial[0], full[1])):
        assert (same_measurement(a, b) is not None) == verdict
        assert (same_measurement(b, a) is not None) == verdict


def test_two_left_out_hashes_are_not_a_match() -> None:
    """Two partial fingerprints share the placeholder ("exact", None); it must never read as identical samples."""
    rng = random.Random(5)
    runs = [
        [{"step": i, "time_s": rng.uniform(1, 2), "tokens": 4096, "loss": 2.5} for i in range(50)] for _ in range(2)
    ]
    a, b = (sample_fingerprint("training", run, exact=False) for run in runs)
    assert a[0] == b[0] == ("exact", None)
    assert same_measurement(a, b) is None


@pytest.mark.parametrize("kind", ["training", "inference"])
def test_exact_print_of_real_shaped_runs_ignores_order_only(kind: str) -> None:
    """Real-shaped samples take the column form (steps in order, latencies sorted, a few tied
    latencies settled by whole rows); a shuffle keeps the print, any one changed value changes it."""
    rng = random.Random(11)
    if kind == "training":
        samples = [
            {"step": i, "time_s": round(rng.uniform(1, 2), 2), "tokens": 4096, "loss": rng.choice([2.5, "nan"])}
            for i in range(400)
        ]
    else:  # 3 decimals of a narrow range: many equal latencies
        samples = [
            {
                "prompt_tokens": 1000,
                "output_tokens": rng.randrange(2, 9),
                "ttft_ms": round(rng.uniform(80, 81), 3),
                "e2e_ms": round(rng.uniform(900, 901), 2),
            }
            for _ in range(400)
        ]
    from validator.science.independence import _multiset_text
    from validator.science.samples import Columns

    assert _multiset_text(kind, samples, Columns(samples)) is not None  # the fast form, not the fallback
    exact = sample_fingerprint(kind, samples)[0]
    shuffled = samples[::-1]
    rng.shuffle(shuffled)
    assert sample_fingerprint(kind, shuffled)[0] == exact
    for key in samples[0]:
        changed = copy.deepcopy(shuffled)
        value = changed[7][key]
        changed[7][key] = value + 1 if not isinstance(value, str) else "inf"
        assert sample_fingerprint(kind, changed)[0] != exact


def test_timing_agreement_needs_the_relative_bound_not_only_the_spread() -> None:
    """Step times that vary by design (1-2 s a step) give a column a wide spread, so an honest re-measurement
    (its own 0.5% noise per step) passes the spread test alone; only the relative bound (AGREE_RELATIVE, checked
    first since the merge was sped up) keeps it from agreeing. A copy scaled by 1.0003 with 1e-5 jitter agrees."""
    from validator.science.independence import AGREE_RELATIVE, timing_agreement

    rnd = random.Random(11)
    times = [1.0 + (i % 10) / 9 for i in range(64)]

    def near(values: list[float]) -> tuple[Any, ...]:
        return (None, None, None, [(i, (t,)) for i, t in enumerate(values)], None, "training")

    original = near(times)
    honest = near([t * (1 + rnd.gauss(0, 0.005)) for t in times])
    forged = near([t * 1.0003 + rnd.uniform(-1e-5, 1e-5) for t in times])
    stable = near([t * (1 + rnd.gauss(0, 0.0005)) for t in times])  # a stable cluster's 0.05% per step
    assert timing_agreement(original, stable) is None
    assert timing_agreement(original, honest) is None
    agreement = timing_agreement(original, forged)
    assert agreement is not None and agreement <= AGREE_RELATIVE["training"]["time_s"]
