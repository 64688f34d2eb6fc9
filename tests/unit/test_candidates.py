"""science/candidates.py: the keys that decide which runs ORV304 compares sample by sample.

Each forgery test has its honest twin: a copy shares a key with its original, independent runs of the
same workload (the same requests or steps, their own noise) almost never do. The corpus-wide recall
is in tests/unit/test_copies.py (the CI subset) and `python -m bench.candidates`."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.candidates import registry
from tests.conftest import fuzz_examples
from tests.testing.corpus import Workload, _drop, _map, _merged, _shuffled, _smoothed, forgeries, measure
from validator.pr.neighbourhood import neighbourhood
from validator.registry.relations import ties
from validator.science import candidates, independence
from validator.science.independence import _near_of, buckets, same_measurement, sample_fingerprint


def _keys(kind: str, samples: list[dict[str, Any]]) -> set[int]:
    near = _near_of(sample_fingerprint(kind, samples))
    assert near is not None
    return set(near[11])


def _shares(kind: str, a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    return bool(_keys(kind, a) & _keys(kind, b))


def test_keys_are_sorted_48_bit_and_the_same_for_the_same_samples() -> None:
    run = measure(Workload("inference", 200, 1), 0)
    near = _near_of(sample_fingerprint("inference", run))
    assert near is not None
    keys = list(near[11])
    assert keys == sorted(set(keys)) and all(0 <= k <= candidates.MASK for k in keys)
    assert keys == sorted(_keys("inference", [dict(s) for s in run]))


def test_an_affine_copy_keeps_its_keys_and_runs_with_their_own_noise_share_none() -> None:
    """a*x + b moves no sample's raw, window or smoothed position (but for a value on a cell's edge): the
    copy keeps nearly all its original's keys. Runs of bench/generate.py's shape (their own requests, each
    timing with its own noise) share none."""
    for seed in range(5):
        original = measure(Workload("inference", 500, 20 + seed), 0)
        keys = _keys("inference", original)
        rescaled = _keys("inference", _map("inference", original, 0.97, 0.01, 0.0, seed))
        assert len(keys & rescaled) >= 0.9 * len(keys), seed
    rng = random.Random(7)
    runs = [
        [
            {
                "prompt_tokens": rng.randint(1080, 1120),
                "output_tokens": rng.randint(64, 512),
                "ttft_ms": t,
                "e2e_ms": t + e,
            }
            for t, e in ((550 * rng.uniform(0.98, 1.02), 4000 * rng.uniform(0.5, 1.0)) for _ in range(300))
        ]
        for _ in range(12)
    ]
    keys_of = [_keys("inference", run) for run in runs]
    assert not any(keys_of[i] & keys_of[j] for i in range(12) for j in range(i + 1, 12))


def test_copies_that_rules_flag_share_a_key_and_their_honest_twins_do_not_or_are_not_flagged() -> None:
    """Jitter, a third dropped and reordered, a moving average, a merge with another run: each shares a
    key with its original. The runs merged, and an honest re-run, are never flagged however compared."""
    for seed in range(3):
        for kind, size in (("training", 200), ("inference", 200), ("inference", 16)):
            workload = Workload(kind, size, 40 + seed, jitter=0.005)
            original, other = measure(workload, 0), measure(workload, 1)
            copies = {
                "jitter": _map(kind, original, 1.0, 0.0, 1e-4, seed),
                "drop and reorder": _shuffled(_drop(_map(kind, original, 1.0, 0.0, 1e-4, seed), 10, seed), seed),
                "moving average": _smoothed(kind, original, (-1, 0, 1)),
                "merge": _shuffled(_merged(_map(kind, original, 1.0, 0.0, 1e-4, seed), other), seed),
            }
            first = sample_fingerprint(kind, original)
            for name, copy in copies.items():
                fake = sample_fingerprint(kind, copy)
                if same_measurement(first, fake):
                    assert set(buckets(first)) & set(buckets(fake)), (kind, size, seed, name)
            assert same_measurement(first, sample_fingerprint(kind, other)) is None


def test_independent_runs_mostly_share_no_key() -> None:
    """Runs of one training workload whose step times carry their own noise (uniform ±3%, no shared
    part): before, every pair of one workload and level was compared; now at most a fifth of the 190
    pairs share a key (31 measured, nearly all by the smoothed keys, whose cells are wide enough for a
    moving average's copy: docs/metrics.md "Which runs are compared")."""
    rng = random.Random(5)
    runs = []
    for _ in range(20):
        runs.append([{"step": s, "time_s": 2.0 * rng.uniform(0.97, 1.03), "tokens": 1} for s in range(1, 301)])
    keys = [_keys("training", run) for run in runs]
    sharing = sum(1 for i in range(20) for j in range(i + 1, 20) if keys[i] & keys[j])
    assert sharing <= 38, sharing


def test_the_in_order_walk_pairs_exactly_as_it_did() -> None:
    """_in_order finds where runs of agreeing steps start per diagonal once, and steps over stretches where
    none starts, instead of probing every position: the same pairs as the walk that probed each, for copies
    (rescaled, jittered, thinned, reordered in part) and independent runs, short and long."""
    from tests.testing.fingerprint_reference import _in_order as _in_order_before
    from validator.science.independence import _in_order

    rng = random.Random(11)
    for trial in range(300):
        size = rng.choice((3, 8, 16, 40, 64, 64, 300))
        xs = [(rng.uniform(50, 150), rng.uniform(1000, 3000)) for _ in range(size)]
        kind = trial % 4
        if kind == 0:  # a copy: rescaled, jittered, a few dropped
            ys = [(a * 1.01 * (1 + rng.uniform(-1e-4, 1e-4)), b) for a, b in xs if rng.random() > 0.2]
        elif kind == 1:  # independent
            ys = [(rng.uniform(50, 150), rng.uniform(1000, 3000)) for _ in range(rng.choice((3, 16, 64)))]
        elif kind == 2:  # a copy with its middle reordered and samples added
            ys = xs[: size // 3] + rng.sample(xs[size // 3 :], len(xs[size // 3 :])) + xs[:3]
        else:  # coarse values: ties and zero steps
            ys = [(float(round(a, -1)), b) for a, b in xs]
            xs = [(float(round(a, -1)), b) for a, b in xs]
        assert _in_order(xs, ys) == _in_order_before(xs, ys), trial
        assert _in_order(ys, xs) == _in_order_before(ys, xs), trial


def test_honest_sweep_points_of_other_recipes_are_never_one_measurement() -> None:
    """bench/generate.py's sweeps: 10-38 fixed-length requests per point, TTFT ±10%, decode ±3%, of recipes
    with their own decode rates. Found at 3,435 run files: 3 honest pairs of 10-14 requests flagged once a
    refit on the best-agreeing three quarters was allowed on fewer than MIN_MATCHED pairs (issue 51's
    16-sample refit; reverted). Every pair, in both orders (the rule is not symmetric)."""
    from tests.testing.sweeps import samples_at

    rng = random.Random(3435)
    for concurrency in (2, 4):
        prints = [
            sample_fingerprint(
                "inference",
                samples_at(round(rng.uniform(40, 80), 3), round(rng.uniform(0.005, 0.08), 4), concurrency)[0],
            )
            for _ in range(80)
        ]
        flagged = [(i, j) for i in range(80) for j in range(80) if i != j and same_measurement(prints[i], prints[j])]
        assert flagged == [], (concurrency, flagged[:5])


def test_runs_hypothesis_found_fingerprint_without_a_traceback() -> None:
    """Found by tests/unit/test_properties.py: a timing column whose interquartile range is subnormal
    (2.2e-308) divided a position to infinity (the candidate keys' cells), and a noise fit's 3 x 3 solve
    cubed a scale with ** (OverflowError past a float's range). Both runs now fingerprint."""
    zero = {"prompt_tokens": 0, "output_tokens": 0, "ttft_ms": 0.0}
    subnormal = 2.2250738585072014e-308
    first = [{**zero, "e2e_ms": e} for e in (0.0, 0.0, 0.0, 1.0, subnormal)]
    second = [{**zero, "e2e_ms": 1.0} for _ in range(5)] + [
        {**zero, "e2e_ms": 2.0},
        {**zero, "output_tokens": 1, "e2e_ms": subnormal},
        {**zero, "prompt_tokens": 1, "e2e_ms": 1.0},
    ]
    for samples in (first, second):
        assert sample_fingerprint("inference", samples)


# --------------------------------------------------------------------------- value-sketch keys tie two at a time


def _rounded_run(rng: random.Random, count: int, grid: float, level: float) -> list[dict[str, Any]]:
    """Requests of one workload timed on a coarse clock: values fall on a grid in a narrow band, so honest
    runs share single values by chance (the bench's 1 us TTFT in a +-2% band)."""
    return [
        {
            "prompt_tokens": 100 + i,
            "output_tokens": 50 + i % 7,
            "ttft_ms": round(level * (1 + rng.uniform(-0.02, 0.02)) / grid) * grid,
            "e2e_ms": round(10 * level * (1 + rng.uniform(-0.02, 0.02)) / grid) * grid,
        }
        for i in range(count)
    ]


@settings(max_examples=fuzz_examples(200))
@given(
    seed=st.integers(0, 2**32 - 1),
    count=st.integers(8, 120),
    kept=st.floats(0.0, 1.0),
    grid=st.sampled_from([1e-3, 1e-2, 0.1]),
)
def test_every_pair_the_values_rule_flags_shares_two_value_keys_of_a_column(
    seed: int, count: int, kept: float, grid: float
) -> None:
    """COUNTED_TIES["v"] (two value-sketch keys of a column) is no loss: whenever values_copied flags two runs (a resample, a partial copy or
    chance on a coarse clock), they share two or more value-sketch keys of one column, so the check,
    compared() and pull-request mode's neighbourhood, which skip pairs sharing fewer, skip none it flags."""
    rng = random.Random(seed)
    original = _rounded_run(rng, count, grid, 80.0)
    other = _rounded_run(rng, count, grid, 80.0)
    mixed = [
        {**mine, "ttft_ms": theirs["ttft_ms"], "e2e_ms": theirs["e2e_ms"]} if rng.random() < kept else mine
        for mine, theirs in zip(other, rng.sample(original, len(original)))
    ]
    a, b = sample_fingerprint("inference", original), sample_fingerprint("inference", mixed)
    common = set(buckets(a)) & set(buckets(b))
    if independence.values_copied(a, b) is not None:
        assert independence.tie(k for k in common if k.startswith("v:")) == independence.VALUES


def test_two_runs_sharing_one_value_are_not_compared_and_two_are() -> None:
    assert independence.counted_column("v:ttft_ms:1f") == ("v", "ttft_ms")
    assert independence.counted_column("m:1:1f") == ("m", "1") and independence.counted_column("n:1f") is None
    assert independence.tie(["v:ttft_ms:1", "v:e2e_ms:2"]) is None  # one of each column: chance
    assert independence.tie(["v:ttft_ms:1", "v:ttft_ms:2"]) == independence.VALUES
    assert independence.tie(["v:ttft_ms:1", "n:5"]) == independence.ALL
    assert independence.tie(["m:0:1", "m:0:2", "m:0:3", "m:1:4"]) is None  # three of a column: chance
    assert independence.tie(["m:0:1", "m:0:2", "m:0:3", "m:0:4"]) == independence.ALL
    assert independence.tie([]) is None
    rng = random.Random(5)
    a = sample_fingerprint("inference", _rounded_run(rng, 40, 1e-3, 80.0))
    b = sample_fingerprint("inference", _rounded_run(rng, 40, 1e-3, 80.0))
    keys_a, keys_b = set(buckets(a)), set(buckets(b))
    value_keys = sorted(k for k in keys_a if k.startswith("v:ttft_ms:"))
    one, two = value_keys[:1], value_keys[:2]
    assert independence.values_copied(a, a) is not None  # a run and itself share every value ...
    assert independence.compared(a, a, keys_a, set(one)) is None  # ... but tied by one key they are not compared
    assert independence.compared(a, a, keys_a, set(two)) is not None
    assert independence.compared(a, b, keys_a, keys_b) is None


def test_relation_keys_tie_as_the_value_rule_does_per_kind() -> None:
    v = "s:inference:v:ttft_ms:"
    assert not ties([v + "1"]) and ties([v + "1", v + "2"])
    assert not ties([v + "1", "s:training:v:ttft_ms:2"])  # two kinds: never one pair of runs
    assert ties([v + "1", "s:inference:n:5"]) and ties(["r:abc"]) and not ties([])
    base = {
        "one value": (v + "1", v + "9"),
        "two values": (v + "1", v + "2"),
        "two columns": (v + "1", "s:inference:v:e2e_ms:2"),
        "another kind": ("s:training:v:ttft_ms:1", "s:training:v:ttft_ms:2"),
        "a shape key": ("s:inference:n:5",),
    }
    found = neighbourhood(base, {"new": (v + "1", v + "2", "s:inference:n:5")}, {"new"})
    assert found == {"new", "two values", "a shape key"}


# --------------------------------------------------------------------------- merge keys


def _merge_keys(fingerprint: Any) -> set[str]:
    return {key for key in buckets(fingerprint) if key.startswith("m:")}


def test_a_copy_merged_with_another_datasets_run_keeps_its_merge_keys_and_honest_reruns_do_not() -> None:
    """The bench's most missed forgery: a copy jittered 1e-4, merged with a run of another dataset (its
    requests interleave with the original's in every group of the other keys), 10 dropped and reordered.
    It ties to its original by merge keys; an honest re-run of the same requests on a quiet machine (the
    prefix-cache class: TTFT sigma 0.5%, e2e ~0.3%) seldom does, and is never flagged, tied or not."""
    caught = honest_tied = 0
    for seed in range(30):
        quiet = Workload("inference", 200, seed, cached=0.3)  # the corpus's quietest inference class
        original, rerun = measure(quiet, 0), measure(quiet, 1)  # the same requests, measured again
        other = measure(Workload("inference", 200, 1000 + seed, cached=0.3), 0)
        jittered = [_map("inference", run, 1.0, 0.0, 1e-4, seed) for run in (original, other)]
        fake = _shuffled(_drop(_merged(*jittered), 10, seed), seed)
        first = sample_fingerprint("inference", original)
        forged = sample_fingerprint("inference", fake)
        caught += independence.tie(_merge_keys(first) & _merge_keys(forged)) == independence.ALL
        honest = sample_fingerprint("inference", rerun)
        honest_tied += independence.tie(_merge_keys(first) & _merge_keys(honest)) is not None
        assert same_measurement(first, honest) is None, seed  # tied or not, never flagged
    assert caught >= 28, caught
    # a quiet re-run of the same requests shares a cell here and there: 5 of 30 tie (and are compared,
    # never flagged); runs of other recipes or datasets are at other levels or requests (the bench: 7
    # pairs among 3,435 run files)
    assert honest_tied <= 6, honest_tied


def test_a_rerun_of_the_same_requests_at_a_millionth_apart_ties_by_merge_keys() -> None:
    """The timing columns' keys are of the timings themselves: a copy rescaled by 1% moves every cell of
    them (the ratio's keys and the other keys find it), and one jittered by 1e-6 keeps nearly all."""
    original = measure(Workload("inference", 200, 7), 0)
    first = _merge_keys(sample_fingerprint("inference", original))
    close = _merge_keys(sample_fingerprint("inference", _map("inference", original, 1.0, 0.0, 1e-6, 3)))
    scaled = _merge_keys(sample_fingerprint("inference", _map("inference", original, 1.01, 0.0, 0.0, 3)))
    assert len(first & close) >= 0.9 * len(first) and len(first) == 3 * candidates.MERGE_SKETCH  # TTFT, e2e, ratio
    assert independence.tie(k for k in first & scaled if not k.startswith("m:2:")) is None
    assert independence.tie(first & scaled) == independence.ALL  # the ratio's keys


def test_a_training_copy_merged_with_another_recipes_log_keeps_its_merge_keys_and_a_fixed_length_run_has_none() -> None:
    """A merge of two training logs holds every step twice; the merge keys stay (each step's cell is the
    original's), so a jittered, thinned, reordered merge with another recipe's log ties to its original
    (2 of 3 such bench forgeries were missed without them). A fixed-length workload's requests share one
    key: its samples' cells alone would tie honest runs, so it publishes none."""
    caught = 0
    for seed in range(10):
        original = measure(Workload("training", 500, seed), 0)
        other = measure(Workload("training", 500, 100 + seed), 0)
        jittered = [_map("training", run, 1.0, 0.0, 1e-4, seed) for run in (original, other)]
        fake = _shuffled(_drop(_merged(*jittered), 10, seed), seed)
        first, forged = sample_fingerprint("training", original), sample_fingerprint("training", fake)
        caught += independence.tie(_merge_keys(first) & _merge_keys(forged)) == independence.ALL
    assert caught >= 9, caught
    fixed = measure(Workload("inference", 200, 3, variable=False), 0)
    assert not _merge_keys(sample_fingerprint("inference", fixed))


def test_the_bench_counts_a_forgerys_neighbours_as_pull_request_mode_loads_them(tmp_path: Path) -> None:
    """`python -m bench.candidates` reports how many runs a forgery would be compared with (what a pull
    request adding it costs): the runs whose shared keys tie it (relations.ties, as pull-request mode's
    neighbourhood), not every run sharing one key (on a coarse clock honest runs share single values)."""
    rng = random.Random(3)
    runs = [_rounded_run(rng, 40, 1e-2, 80.0) for _ in range(6)]
    for index, samples in enumerate(runs):
        folder = tmp_path / "runs" / f"{index:02x}"
        folder.mkdir(parents=True)
        (folder / "run.json").write_bytes(orjson.dumps({"kind": "inference", "samples": samples}))
    found = registry(tmp_path, every=6)
    prints = [sample_fingerprint("inference", samples) for samples in runs]
    counts = []
    for _, forged in forgeries("inference", runs[0], 0, runs[1]):
        fake = sample_fingerprint("inference", forged)
        if same_measurement(prints[0], fake):
            fake_keys = {f"s:inference:{key}" for key in buckets(fake)}
            counts.append(sum(ties(fake_keys & {f"s:inference:{key}" for key in buckets(p)}) for p in prints))
    counts.sort()
    assert counts and found["forgery_neighbours_max"] == counts[-1]
    assert found["forgery_neighbours_median"] == counts[len(counts) // 2]


def test_a_copy_rescaled_as_a_whole_then_merged_with_another_datasets_run_keeps_its_ratio_keys() -> None:
    """The cheapest escape from the merge keys' own cells: rescale the copy by 2% before merging it (every
    cell moves), which the rules still flag. Each sample's TTFT over its e2e is unchanged by that, and is
    sketched too; a quiet honest re-run of the same requests still ties no more often (5 of 30)."""
    caught = honest_tied = 0
    for seed in range(30):
        quiet = Workload("inference", 200, seed, cached=0.3)
        original = measure(quiet, 0)
        other = measure(Workload("inference", 200, 1000 + seed, cached=0.3), 0)
        fake = _shuffled(_drop(_merged(_map("inference", original, 1.02, 0.0, 1e-4, seed), other), 10, seed), seed)
        first, forged = sample_fingerprint("inference", original), sample_fingerprint("inference", fake)
        assert same_measurement(first, forged) is not None, seed
        caught += independence.compared(first, forged, buckets(first), buckets(forged)) is not None
        honest = sample_fingerprint("inference", measure(quiet, 1))
        honest_tied += independence.tie(_merge_keys(first) & _merge_keys(honest)) is not None
    assert caught >= 28, caught
    assert honest_tied <= 6, honest_tied
