"""ORV304's rules 7 and 8 (matched_under_key, joint_matches): their first looks never change a result.

Both rules take a cheap first look that stops a pair which cannot reach JOINT_LEAST matches (joint_matches'
inner `too_few`: each timing column alone by a sorted search at the widest window it can have;
_too_few_under_key: the keys held once by both runs, one column at a time, every key held more than once
counted as a match). A first look may only save time: for any pair of runs, each rule must return exactly
what it returns without it. Here, for generated pairs (fixed-length runs of 8-80 requests with TTFT and e2e
noise of various sizes, random-dataset runs whose token counts repeat, training logs; honest re-runs, copies
and re-runs holding a handful of the first run's samples, jittered, then merged with another run, thinned and
reordered), matched_under_key is compared with itself with _too_few_under_key patched out, and joint_matches
with _joint_without_first_look (its body as it was before the first look, 9b8198a's parent), result for
result, bit for bit; and _too_few_under_key with its docstring, counted by brute force.

It fails where a first look is made stricter (checked by hand, 2026-12-07): JOINT_LEAST + 1 in either, either
rule's widest window halved, one side of joint_matches' sorted search halved, the keys held more than once no
longer counted (each by a changed result, mostly on the pinned examples below). A window narrowed by a tenth
goes unseen: too few generated matches lie that close to the window's edge.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Any
from unittest import mock

import numpy
from hypothesis import event, example, given, settings, target
from hypothesis import strategies as st

from tests.testing.corpus import Workload, _drop, _map, _merged, _shuffled, measure
from validator.science import independence
from validator.science.independence import sample_fingerprint

Samples = list[dict[str, Any]]


@dataclass(frozen=True)
class Case:
    """A pair of runs: `shape`'s workload (its structure fixed by `workload`), a run of it, and a second run
    (`how`: another honest run, a copy of the first jittered by `jitter`, or another run holding `spliced` of
    the first's samples so jittered, in their places: a handful matched, about as many as the rules need),
    merged with a third run of the workload (`merge`), `drop` samples dropped (at most a third, as the corpus's
    _drop), reordered (`shuffle`); compared first to second, or the other way round (`swap`)."""

    shape: str  # "fixed" (fixed-length requests), "keyed" (a random dataset whose token counts repeat), "training"
    size: int
    workload: int
    ttft_noise: float  # fixed and keyed: per-request relative sigma of TTFT; training: per-step jitter
    e2e_noise: float  # fixed and keyed: per-request relative sigma of the decode
    per_wave: int  # fixed: requests prefilled together (TTFT rising wave by wave); 0: no queue, one level
    token_values: int  # keyed: distinct prompt lengths (and as many output lengths) the dataset draws from
    how: str  # "rerun", "copy", or "splice": a rerun with `spliced` of its samples the first run's, jittered
    jitter: float
    spliced: int
    merge: bool
    drop: int
    shuffle: bool
    swap: bool


def _requests(case: Case, run: int) -> Samples:
    """A fixed-length or keyed inference run: the shape (token counts, base latencies) from case.workload, its
    noise from `run`; 5% of requests' TTFT 2-6x (a request queued behind others), as the corpus's."""
    shape, noise = random.Random(case.workload), random.Random(case.workload * 7919 + run)
    prefill, itl = shape.uniform(0.02, 0.2), shape.uniform(8, 40)
    level = 1 + noise.gauss(0, 0.003)
    samples = []
    for i in range(case.size):
        if case.shape == "fixed":
            prompt, output = 1024, 256
            queue = 1 + i // case.per_wave if case.per_wave else 1
        else:
            prompt = 100 + 37 * shape.randrange(case.token_values)
            output = 50 + 11 * shape.randrange(case.token_values)
            queue = 1
        tail = noise.uniform(2, 6) if noise.random() < 0.05 else 1.0
        ttft = (5 + prompt * prefill) * queue * level * math.exp(noise.gauss(0, case.ttft_noise)) * tail
        e2e = ttft + (output - 1) * itl * level * (1 + max(-0.5, noise.gauss(0, case.e2e_noise)))
        samples.append({"prompt_tokens": prompt, "output_tokens": output, "ttft_ms": ttft, "e2e_ms": e2e})
    return samples


def _run(case: Case, run: int) -> Samples:
    if case.shape == "training":
        return measure(Workload("training", case.size, case.workload, jitter=case.ttft_noise), run)
    return _requests(case, run)


def _pair(case: Case) -> tuple[str, Samples, Samples]:
    kind = "training" if case.shape == "training" else "inference"
    first = _run(case, 0)
    copied = _map(kind, first, 1.0, 0.0, case.jitter, case.workload)
    second = copied if case.how == "copy" else _run(case, 1)
    if case.how == "splice":  # (the same place, the same key: a training step, a request's token counts)
        for i in random.Random(case.workload).sample(range(case.size), min(case.spliced, case.size)):
            second[i] = copied[i]
    if case.merge:
        second = _merged(second, _map(kind, _run(case, 2), 1.0, 0.0, case.jitter, case.workload + 1))
    if case.drop:
        second = _drop(second, case.drop, case.workload)
    if case.shuffle:
        second = _shuffled(second, case.workload)
    return (kind, second, first) if case.swap else (kind, first, second)


CASES = st.builds(
    Case,
    shape=st.sampled_from(["fixed", "keyed", "training"]),
    size=st.one_of(st.integers(8, 20), st.integers(8, 80)),  # (small runs: few matches, near the first looks' edge)
    workload=st.integers(0, 10_000),
    ttft_noise=st.sampled_from([0.0005, 0.001, 0.003, 0.01, 0.02, 0.05, 0.25]),
    e2e_noise=st.sampled_from([0.0005, 0.001, 0.003, 0.01, 0.03]),
    per_wave=st.sampled_from([0, 1, 4, 8]),
    token_values=st.sampled_from([3, 5, 8, 16, 64]),
    how=st.sampled_from(["rerun", "copy", "splice"]),
    jitter=st.sampled_from([0.0, 1e-6, 1e-5, 1e-4, 2e-4, 3e-4, 1e-3, 2e-3, 3e-3, 5e-3, 1e-2, 2e-2, 5e-2]),
    spliced=st.integers(3, 9),
    merge=st.booleans(),
    drop=st.integers(0, 27),
    shuffle=st.booleans(),
    swap=st.booleans(),
)


def _case(shape: str, how: str, **changes: Any) -> Case:
    fields: dict[str, Any] = dict(size=64, workload=7, ttft_noise=0.01, e2e_noise=0.01, per_wave=0, token_values=8)
    fields.update(jitter=1e-4, spliced=0, merge=False, drop=0, shuffle=False, swap=False)
    return Case(shape=shape, how=how, **{**fields, **changes})


THINNED = dict(merge=True, drop=20, shuffle=True)  # a copy merged with another run, a third dropped, reordered


def _clear() -> None:
    for cache in independence._CACHES:
        cache.clear()


def _joint_without_first_look(a: Any, b: Any) -> tuple[tuple[int, int, float, float] | None, int | None]:
    """joint_matches as it was before its first look (9b8198a's parent, e724623), on today's helpers; and the
    count its first look reads, by brute force here rather than a sorted search (the fewest of a's fastest
    requests with one of b's within the window in an informative column alone: it stops the pair below
    JOINT_LEAST), or None where the pair ends before the first look."""
    found_a, found_b = independence._fastest_logs(a), independence._fastest_logs(b)
    if found_a is None or found_b is None:
        return None, None
    (xs, spread_x, _), (ys, spread_y, _) = found_a, found_b
    if xs.shape[1] != ys.shape[1] or min(len(xs), len(ys)) < independence.MIN_MATCHED:
        return None, None
    spread = numpy.minimum(spread_x, spread_y)
    informative = numpy.maximum(spread_x, spread_y) > 0
    if numpy.count_nonzero(informative) < 2 or not numpy.all(spread[informative] > 0):
        return None, None
    noise = [independence._noise_floor(a, b, column) for column in range(len(spread))]
    limit = numpy.array([independence.AGREE_SPREAD * n if n else numpy.inf for n in noise])
    if not informative.all():
        xs, ys, spread, limit = xs[:, informative], ys[:, informative], spread[informative], limit[informative]
    width = numpy.minimum(numpy.minimum(independence.JOINT_CAP, spread / independence.JOINT_SPREAD), limit)
    # (the first look reads the widest window too, before the runs' noise: it holds at least as many)
    least = int((numpy.abs(xs[:, None, :] - ys[None, :, :]) <= width).any(axis=1).sum(axis=0).min())
    close = independence._within(xs, ys, width, numpy)
    if min(numpy.count_nonzero(close.any(axis=1)), numpy.count_nonzero(close.any(axis=0))) < independence.JOINT_LEAST:
        return None, least
    counts = independence._joint_counts(xs, ys, width, numpy)
    centre = len(counts) // 2
    hits = int(counts[centre])
    if hits < independence.JOINT_LEAST:
        return None, least
    shifted = numpy.delete(counts, centre)
    own = [
        independence._clustered(xs, width, numpy) * min(1.0, len(ys) / (len(xs) - 1)),
        independence._clustered(ys, width, numpy) * min(1.0, len(xs) / (len(ys) - 1)),
    ]
    expected = max((float(shifted.sum()) + sum(own)) / (len(shifted) + 2), 0.5 / len(shifted))
    for reading in (*own, float(shifted.max())):
        if independence._poisson_tail(math.ceil(reading), expected) < independence.JOINT_STANDS_OUT:
            expected = max(expected, reading)
    return (hits, min(len(xs), len(ys)), float(width.max()), expected), least


def _keyed_first_look(kind: str, a: Any, b: Any) -> int | None:
    """The count _too_few_under_key reads, by its docstring and by brute force: the keys both runs hold that
    either holds more than once, plus, in the one column where most do, the keys each holds once whose samples
    lie within the widest window any column can have (JOINT_CAP, AGREE_RELATIVE); None where matched_under_key
    ends before it (fewer than MIN_MATCHED keys shared)."""
    if a[7] is None or b[7] is None:
        return None
    mine, theirs = dict(a[7]), dict(b[7])
    shared = mine.keys() & theirs.keys()
    if len(shared) < independence.MIN_MATCHED:
        return None
    repeated = sum(1 for key in shared if len(mine[key]) > 1 or len(theirs[key]) > 1)
    once = sorted(key for key in shared if len(mine[key]) == 1 == len(theirs[key]))
    if not once:
        return repeated
    x, y = (numpy.log(numpy.array([rows[key][0] for key in once], dtype=float)) for rows in (mine, theirs))
    names, limits = independence.TIMING_COLUMNS[kind], independence.AGREE_RELATIVE[kind]
    widest = [min(independence.JOINT_CAP, limits.get(name, independence.JOINT_CAP)) for name in names[: x.shape[1]]]
    return repeated + int((numpy.abs(x - y) <= numpy.array(widest)).sum(axis=0).max())


def _outcomes(case: Case) -> dict[str, tuple[Any, Any, int | None]]:
    """Per rule, on the case's pair: what it returns, what it returns without its first look (the caches
    emptied before each), and the count the first look reads (None: the pair ends before it)."""
    kind, first, second = _pair(case)
    a, b = (independence._near_of(sample_fingerprint(kind, run)) for run in (first, second))
    assert a is not None and b is not None
    _clear()
    joint, keyed = independence.joint_matches(a, b), independence.matched_under_key(a, b)
    _clear()
    joint_plain, joint_look = _joint_without_first_look(a, b)
    _clear()
    with mock.patch.object(independence, "_too_few_under_key", lambda *_: False):
        keyed_plain = independence.matched_under_key(a, b)
    _clear()
    keyed_look = _keyed_first_look(kind, a, b)
    if keyed_look is not None:  # the first look itself, as its docstring states it
        stops = independence._too_few_under_key(kind, independence._view(a), independence._view(b))
        assert stops == (keyed_look < independence.JOINT_LEAST), (stops, keyed_look)
    _clear()
    return {"joint": (joint, joint_plain, joint_look), "keyed": (keyed, keyed_plain, keyed_look)}


def _end(plain: Any, look: int | None) -> str:
    """Where a pair ends: before the first look, stopped by it, refused after it, or found."""
    if look is None:
        return "before"
    return "stopped" if look < independence.JOINT_LEAST else "found" if plain is not None else "refused"


# Pairs found with a few matches, some of them only near one edge of the window (searched for: ~1% of thinned
# fixed-length splices and copies jittered about as wide as the window, and of training logs' at 0.02%): a first
# look narrowed on either side stops them, where most generated pairs' matches lie far inside the window.
ABOVE = _case("fixed", "splice", size=19, workload=6308, per_wave=1, jitter=0.003, spliced=4, **THINNED, swap=True)
BELOW = _case("fixed", "splice", size=12, workload=8717, ttft_noise=0.25, e2e_noise=0.03, jitter=0.005, spliced=9)
BELOW_NOISE = _case("fixed", "copy", size=23, workload=5810, e2e_noise=0.003, per_wave=1, jitter=0.002)
STEPS = _case("training", "splice", size=11, workload=3329, ttft_noise=0.05, jitter=0.0002, spliced=8, swap=True)
STEPS_COPIED = _case("training", "copy", size=13, workload=2019, ttft_noise=0.01, jitter=0.0002, drop=21)


@example(ABOVE)  # joint_matches: 5 of 19
@example(replace(BELOW, merge=True, drop=21))  # 6 of 12
@example(replace(BELOW_NOISE, drop=24, shuffle=True))  # 6 of 16, the window the runs' noise's
@example(replace(STEPS, drop=18, shuffle=True))  # matched_under_key: 5 of 8 steps
@example(STEPS_COPIED)  # 9 of 9
@settings(max_examples=400, deadline=None)
@given(CASES)
def test_the_first_looks_never_change_what_rules_7_and_8_return(case: Case) -> None:
    """joint_matches and matched_under_key return what they return without their first looks, and a pair a
    first look stops has no result without it. Hypothesis is steered to the pairs found with the fewest
    matches the first look sees (target): where a stricter first look would stop them."""
    for rule, (found, plain, look) in _outcomes(case).items():
        end = _end(plain, look)
        event(f"{rule}: {end}")
        if end == "found":
            assert look is not None
            target(-float(look), label=f"{rule}: a found pair's first-look count, negated")
        assert found == plain, rule
        assert plain is None or end != "stopped", rule


REACHED = {  # one case of the generator per rule and outcome
    ("joint", "stopped"): _case("fixed", "rerun", size=16, ttft_noise=0.25),
    ("joint", "refused"): _case("fixed", "rerun", ttft_noise=0.25),
    ("joint", "found"): _case("fixed", "copy", ttft_noise=0.25, **THINNED),
    ("keyed", "stopped"): _case("keyed", "rerun", size=24, ttft_noise=0.25, token_values=64),
    ("keyed", "refused"): _case("training", "rerun", merge=True),
    ("keyed", "found"): _case("keyed", "copy", ttft_noise=0.25, token_values=64, **THINNED),
}


def test_the_generated_pairs_reach_every_outcome_of_both_first_looks() -> None:
    """The property says something only where the pairs reach both sides of each first look: pairs it stops,
    pairs it lets through that the rule then refuses, and pairs the rule finds, for each rule."""
    for (rule, outcome), case in REACHED.items():
        found, plain, look = _outcomes(case)[rule]
        assert found == plain and _end(plain, look) == outcome, (rule, outcome, look, found)
