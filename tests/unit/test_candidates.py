"""science/candidates.py: the keys that decide which runs ORV304 compares sample by sample.

Each forgery test has its honest twin: a copy shares a key with its original, independent runs of the
same workload (the same requests or steps, their own noise) almost never do. The corpus-wide recall
is in tests/unit/test_copies.py (the CI subset) and `python -m bench.candidates`."""

from __future__ import annotations

import random
from typing import Any

from tests.testing.corpus import Workload, _drop, _map, _merged, _shuffled, _smoothed, measure
from validator.science import candidates
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
