"""ORV304's judging of a pair made cheaper (issue 55) says what it said, word for word.

The fast paths of science/independence.py, held to the code as it was (tests/testing/judging_reference.py; `_in_order` to fingerprint_reference's)
on the calibration corpus's honest re-runs and forgeries (tests/testing/corpus.py): `filtered_agreement`
gathering its fits from each run's numpy view and fitting a direction's columns in one LAPACK call,
`_in_order` reading each run's steps once and refusing without a walk a pair that cannot reach the pairs
`timing_agreement` needs, and `same_measurement` as a whole. bench/judging.py compares every tied pair of
the bench's registries the same way, against the module at a git revision.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.testing import judging_reference as before
from tests.testing.corpus import Workload, forgeries_of, measure
from tests.testing.fingerprint_reference import _in_order as _in_order_before
from validator.science import independence
from validator.science.independence import (
    SEQUENCE_MATCHED,
    _in_order,
    _near_of,
    filtered_agreement,
    same_measurement,
    sample_fingerprint,
)

WORKLOADS = [
    *(Workload("training", size, 100, jitter=jitter) for size in (64, 200) for jitter in (0.0005, 0.005)),
    *(Workload("inference", size, 200, variable=variable) for size in (16, 64, 200) for variable in (True, False)),
    Workload("inference", 10, 300, variable=False, tool="llama-bench"),
    Workload("inference", 64, 400, cached=0.5),
]


def _pairs() -> list[tuple[str, object, object]]:
    """(what, run, other run) fingerprints: honest re-runs both ways, each forgery against its original both ways."""
    found = []
    for workload in WORKLOADS:
        runs = [measure(workload, r) for r in range(3)]
        prints = [sample_fingerprint(workload.kind, run) for run in runs]
        for i in range(3):
            for j in range(3):
                if i != j:
                    found.append((f"{workload} honest", prints[i], prints[j]))
        made = forgeries_of(workload, runs[0])
        for name, forged in made:
            forged_print = sample_fingerprint(workload.kind, forged)
            found.append((f"{workload} {name}", prints[0], forged_print))
            found.append((f"{workload} {name}, reversed", forged_print, prints[0]))
    return found


PAIRS = _pairs()


def test_filtered_agreement_says_what_it_said_on_honest_and_forged_pairs() -> None:
    flagged = 0
    for what, a, b in PAIRS:
        near_a, near_b = _near_of(a), _near_of(b)
        if near_a is None or near_b is None:
            continue
        found = filtered_agreement(near_a, near_b)
        assert found == before.filtered_agreement(near_a, near_b), what
        flagged += found is not None
    assert flagged >= 20  # the moving averages and rescales of the corpus: the fast fit must flag them too


def test_the_in_order_screen_refuses_only_pairs_too_few_to_agree() -> None:
    """With `needed`, _in_order gives the walk's pairs, or [] where the walk finds fewer: never [] for a pair
    timing_agreement could use (a copy paired in order)."""
    walked = screened = enough = 0
    for what, a, b in PAIRS:
        near_a, near_b = _near_of(a), _near_of(b)
        if near_a is None or near_b is None:
            continue
        for slot in (6, 10):
            xs, ys = near_a[slot], near_b[slot]
            if xs is None or ys is None:
                continue
            full = _in_order_before(xs, ys)
            assert _in_order(xs, ys) == full, what
            fast = _in_order(xs, ys, SEQUENCE_MATCHED)
            assert fast == full or (fast == [] and len(full) < SEQUENCE_MATCHED), what
            walked += 1
            enough += len(full) >= SEQUENCE_MATCHED
            screened += fast != full
    assert walked >= 200 and enough >= 50 and screened >= 1, (walked, enough, screened)


def test_same_measurement_says_what_it_said_on_honest_and_forged_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [same_measurement(a, b) for _, a, b in PAIRS]
    monkeypatch.setattr(independence, "filtered_agreement", before.filtered_agreement)
    monkeypatch.setattr(independence, "_in_order", lambda xs, ys, needed=0: _in_order_before(xs, ys))
    for cache in independence._CACHES:
        cache.clear()
    then = [same_measurement(a, b) for _, a, b in PAIRS]
    for (what, _, _), verdict, reference in zip(PAIRS, now, then):
        assert verdict == reference, what
    assert sum(v is not None for v in now) >= len(PAIRS) // 3  # most forgeries flagged, each the same way
    assert sum(v is not None for (what, _, _), v in zip(PAIRS, now) if "honest" in what) == 0


def test_orv304_judges_every_tied_pair_once_a_block_of_runs_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """in_blocks reorders the pairs (each verdict is its pair's own, the findings are sorted) so that a stretch
    of pairs reads few runs: every pair comes out once, a block's pairs by their later run's block."""
    import random

    from validator.checks import independence as check

    monkeypatch.setattr(check, "_BLOCK", 8)
    rng = random.Random(3)
    pairs = sorted({(i, j, rng.random() < 0.3) for i in range(60) for j in range(i + 1, 60) if rng.random() < 0.4})
    pairs = sorted({(i, j): v for i, j, v in pairs}.items())
    given = [(i, j, v) for (i, j), v in pairs]
    out = list(check.in_blocks(given))
    assert sorted(out) == given and out != given
    keys = [(i // 8, j // 8, i, j) for i, j, _ in out]
    assert keys == sorted(keys)
    monkeypatch.setattr(check, "_PENDING", 5)  # a block too large to hold is judged in parts, none lost
    assert sorted(check.in_blocks(given)) == given


def test_the_per_run_caches_keep_the_runs_used_most_recently() -> None:
    cache: dict[int, tuple[object, object]] = {}
    made: list[object] = []
    runs = [("run", n) for n in range(5)]

    def make(of: object) -> object:
        made.append(of)
        return ("made", of)

    for n in (0, 1, 2, 0, 3, 0, 4):  # 0 used again each time: it stays while 1, then 2, leave
        assert independence._kept(cache, runs[n], make, kept=3) == ("made", runs[n])
    assert made == [runs[0], runs[1], runs[2], runs[3], runs[4]]
    assert [of for of, _ in cache.values()] == [runs[3], runs[0], runs[4]]


def test_orv304_judged_in_worker_processes_says_what_one_process_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past _SPREAD_FROM pairs ORV304 judges them in forked workers, a task of _PAIRS_PER_TASK pairs each
    (checks/independence.py copied_pairs): the same flagged pairs with the same words, in the pairs' order."""
    from validator.checks import independence as check

    fingerprints = [print_ for _, a, b in PAIRS for print_ in (a, b)]
    pairs = [(2 * n, 2 * n + 1, False) for n in range(len(PAIRS))]
    alone = list(check.copied_pairs(fingerprints, pairs, jobs=1))
    monkeypatch.setattr(check, "_SPREAD_FROM", 16)
    monkeypatch.setattr(check, "_PAIRS_PER_TASK", 7)  # tasks that end mid-way through the pairs' list too
    spread = list(check.copied_pairs(fingerprints, iter(pairs), jobs=2))
    assert spread == alone
    monkeypatch.setattr(check, "_BLOCK", 4)  # a task per block of runs and block of later runs
    tasks = list(check._packed_tasks(check.in_blocks(pairs)))
    assert len(tasks) > len(pairs) // 7 and sum(map(len, tasks)) == len(pairs)
    assert list(check.copied_pairs(fingerprints, check.in_blocks(pairs), jobs=2)) == sorted(
        alone, key=lambda found: (found[0] // 4, found[1] // 4, found[0], found[1])
    )
    assert check._FINGERPRINTS == []  # the workers judged them: this process never held the list
    assert len(alone) >= len(PAIRS) // 3  # the forgeries, flagged (the honest pairs are not: the test above)
    few = pairs[:15]  # fewer than _SPREAD_FROM: judged in this process, alike
    assert list(check.copied_pairs(fingerprints, few, jobs=2)) == [found for found in alone if found[0] < 30]


def test_a_stream_of_work_is_never_taken_whole() -> None:
    """quiet_stream (files/interrupts.py) answers in input order and takes at most 2 * jobs items ahead of
    the answers it has given: ORV304's pairs at 100,000 run files are a generator of millions."""
    from validator.files.interrupts import quiet_stream

    taken: list[int] = []

    def items() -> Iterator[int]:
        for n in range(40):
            taken.append(n)
            yield n

    answers = []
    for answer in quiet_stream(abs, (-n for n in items()), jobs=2):
        assert len(taken) - len(answers) <= 4
        answers.append(answer)
    assert answers == list(range(40))
