"""Independent runs (ORV304, ORV305, tiers): every way of passing one measurement off as two fails.

Each attempt starts from a real-looking run (step times that vary) and makes the "second
measurement" from it: an exact copy under another measurer, a rescale, an offset, a shuffle, the
same moment, the same signer, no signature.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.testing.factories import store_run, inference_recipe, inference_run, training_recipe, write_recipe
from tests.testing.signing import keygen, measured, register, sign, tier
from validator.engine import Config, run
from validator.hashing import run_path
from validator.independence import same_measurement, sample_fingerprint
from validator.tiers import NEEDS_SECOND_SIGNER, NEEDS_SIGNED, NOT_INDEPENDENT


def findings(root: Path) -> list[str]:
    return sorted(f"{d.code} {d.path}" for d in run(Config(root=str(root), skip_boards=True)).diagnostics
                  if d.code.startswith("ORV3") and d.code != "ORV303")


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
def test_a_faked_second_run_is_orv304_and_never_t3(fake: Callable[[dict[str, Any]], None], registry: Path,
                                                    tmp_path: Path) -> None:
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(registry, ("lab-a", alice), ("lab-b", bob))
    recipe = training_recipe("faked", 1480.4)
    original = measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", 1)
    second = copy.deepcopy(original)
    fake(second)
    second.update(measured_by="lab-b", measured_at="2026-10-19T11:00:00Z")
    a, b = store_run(registry, original), store_run(registry, second)
    recipe["runs"] = [a, b]
    rel = write_recipe(registry, recipe)
    sign(registry, a, alice)
    sign(registry, b, bob)
    assert findings(registry) == [f"ORV304 {run_path(b.split(':')[1])}"]
    result = tier(registry, rel)
    assert result.tier == "T2" and result.reasons[-1] == NOT_INDEPENDENT


def test_two_real_measurements_are_independent(registry: Path, tmp_path: Path) -> None:
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(registry, ("lab-a", alice), ("lab-b", bob))
    recipe = training_recipe("real", 1480.4)
    a = store_run(registry, measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", 1))
    b = store_run(registry, measured(recipe, 1480.4, "lab-b", "2026-10-19T11:00:00Z", 2))  # same figure, own timings
    recipe["runs"] = [a, b]
    rel = write_recipe(registry, recipe)
    sign(registry, a, alice)
    sign(registry, b, bob)
    assert findings(registry) == []
    assert tier(registry, rel).tier == "T3"


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
    other = [{**s, "ttft_ms": s["ttft_ms"] + rng.random()} for s in doc["samples"]]
    base = sample_fingerprint("inference", doc["samples"])
    assert same_measurement(base, sample_fingerprint("inference", faked))
    assert same_measurement(base, sample_fingerprint("inference", other)) is None


def test_buckets_never_separate_two_fingerprints_within_the_tolerance() -> None:
    """The grouping that keeps ORV304 linear must not hide a copy whose quantiles straddle a cell edge."""
    from validator.independence import CELL, KEY_QUANTILES, QUANTILES, TOLERANCE, buckets, same_measurement

    rng = random.Random(7)
    for _ in range(500):
        base = sorted(rng.random() for _ in range(QUANTILES + 1))
        for i in KEY_QUANTILES:  # put the key quantiles right at a cell edge
            base[i] = round(base[i] / CELL) * CELL
        nudged = [q + rng.uniform(-TOLERANCE, TOLERANCE) * 0.99 for q in base]
        a = (("exact", "a"), ("time_s", 1000, tuple(base)))
        b = (("exact", "b"), ("time_s", 1000, tuple(nudged)))
        assert same_measurement(a, b)
        assert set(buckets(a)) & set(buckets(b))


SAMPLE_VALUES = st.one_of(st.integers(-5, 5), st.integers(2**64, 2**70), st.floats(-2, 2, allow_nan=False),
                          st.sampled_from(["nan", "},{", "{", "}"]), st.none())
SAMPLES = st.lists(st.one_of(st.dictionaries(st.sampled_from(["step", "time_s", "loss", "},{"]), SAMPLE_VALUES,
                                             max_size=3),
                             st.dictionaries(st.just("x"), st.lists(st.dictionaries(st.just("y"), SAMPLE_VALUES),
                                                                    max_size=3)),
                             SAMPLE_VALUES), min_size=1, max_size=6)


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
