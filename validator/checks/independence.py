"""ORV304-ORV305: a run is its own measurement — not a copy of another run's samples or moment."""

from __future__ import annotations

import itertools
import sys
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.evidence.arrival import later_of
from validator.files.interrupts import quiet_stream
from validator.registry.relations import content_keys
from validator.registry.snapshot import RunEntry, Snapshot
from validator.science.independence import COUNTED_TIES, EVERY_RULE, compared, counted_column, judged


@check("ORV304", Severity.ERROR, "run copies another run's samples", related_by="s")
def runs_are_separate_measurements(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Two run files hold one measurement: their raw samples are identical, or one's timings are the
    other's rescaled by a constant, shifted by a constant or put in another order (compared per
    timing column after sorting and an affine normalisation; docs/metrics.md, "Independent runs").
    Real measurements never repeat their step times or request latencies exactly, so a second such
    file is a copy — storing it again with another `measured_by` or date is not a reproduction.

    Also a near copy: the same samples with some added, dropped, duplicated or reordered, or
    timings that follow the other run's sample by sample far closer than two measurements do
    (docs/metrics.md gives the rule and its calibration). Token counts alone never make a copy.

    Reported on the newcomer: the run a pull request adds, or on main the later one by merge order
    (when each file first appeared on the first-parent history), then by `measured_at`, then path;
    once for each earlier run it is one measurement with (a merge of two runs names both).
    Remove the copy and its reference; a reproduction is a new run of the recipe, stored from that
    run's own output.
    """
    copies: dict[tuple[str, str], str] = {}  # (the later run's path, the earlier's) -> how: one finding a pair
    for one, other, how in _copied(snapshot):
        assert one.meta is not None and other.meta is not None
        earlier, later = later_of(snapshot, (one.path, one.meta.measured_at), (other.path, other.meta.measured_at))
        copies[(later, earlier)] = how
    for (path, earlier), how in sorted(copies.items()):
        yield Finding(
            path,
            f"this run is one measurement with `{earlier}`: {how}",
            "remove this run file and its reference; a reproduction is a new run stored from its own tool output",
            line=1,
            col=1,
        )


def _copied(snapshot: Snapshot) -> Iterator[tuple[RunEntry, RunEntry, str]]:
    """(run, other run, how) for each pair ORV304 finds one measurement: judged here, or, in a merge whose
    judging was split over runners (engine/judging.py), the pairs those runners listed, judged again by it."""
    if snapshot.judged is not None:
        by_path = {run.path: run for run in snapshot.runs.values()}
        for one, other, how in snapshot.judged:
            yield by_path[one], by_path[other], how
        return
    yield from copies_among(*pairs_to_judge(snapshot), snapshot.jobs)


def copies_among(
    runs: list[RunEntry], pairs: Iterable[tuple[int, int, bool]], jobs: int
) -> Iterator[tuple[RunEntry, RunEntry, str]]:
    """(run, later run, how) for each of `pairs` (indices into `runs`, as pairs_to_judge gives them) that ORV304's
    rules find one measurement, judged in `jobs` processes when there are many (copied_pairs)."""
    fingerprints = [run.facts.fingerprint if run.facts else () for run in runs]
    for i, j, how in copied_pairs(fingerprints, pairs, jobs):
        yield runs[i], runs[j], how


def pairs_to_judge(snapshot: Snapshot) -> tuple[list[RunEntry], Iterator[tuple[int, int, bool]]]:
    """The runs ORV304 compares (sorted by path) and the pairs of them it judges, in its order (in_blocks):
    (run, later run, by the exact-values rule alone), each pair once."""
    runs = sorted((run for run in snapshot.runs.values() if fingerprinted(run)), key=lambda run: run.path)
    # (a quality run never gets here: its loader keeps no meta or timing facts, and its relation keys are
    # ORV239's `q:` task hashes alone, so neither this check nor pull-request mode ties it by samples)
    # One finding a pair, decided by that pair alone, so that pull-request mode need not reach past a changed
    # file's own pairs (relations.PAIRWISE).
    focus = snapshot.pairs_with  # pull-request mode: only the pairs holding a changed run can differ
    # each run with the runs after it (by path) that share a bucket with it: every pair once, with no
    # registry-wide set of the pairs compared (millions at 100,000 run files: issue 54). A pair tied
    # only by value-sketch keys is judged by the exact-values rule alone; value-sketch and merge keys tie
    # only several of a column at a time (science/independence.py `tie`)
    keyed = ((run.meta.kind, [key for key in content_keys(run) if key.startswith("s:")]) for run in runs if run.meta)

    def tied() -> Iterator[tuple[int, int, bool]]:
        for i, later_runs in tied_after(keyed):
            one = runs[i]
            for j, values_only in later_runs:
                if focus is not None and one.path not in focus and runs[j].path not in focus:
                    continue  # judged alike on both sides of the change
                yield i, j, values_only

    return runs, in_blocks(tied())


def judged_again(one: RunEntry, other: RunEntry) -> str | None:
    """ORV304's verdict on one pair of runs of one kind, from the two alone: what their shared sample keys tie
    (as tied_after decides a pair, and relations.ties in pull-request mode), then the rules. The merge of a
    split judging checks each pair a runner lists so (engine/judging.py)."""
    a, b = (run.facts.fingerprint if fingerprinted(run) and run.facts else None for run in (one, other))
    if a is None or b is None or one.meta is None or other.meta is None or one.meta.kind != other.meta.kind:
        return None
    skip = len(one.meta.kind) + 3  # "s:<kind>:", the rest the bucket
    keys_a, keys_b = ([key[skip:] for key in content_keys(run) if key.startswith("s:")] for run in (one, other))
    return compared(a, b, keys_a, keys_b)


def fingerprinted(run: RunEntry) -> bool:
    """A run ORV304 compares: read with its metadata, and a copy fingerprint of its samples."""
    return run.meta is not None and run.facts is not None and bool(run.facts.fingerprint)


# Judging the pairs is most of ORV304's time where many runs share buckets (1.03 million pairs among the 10,000
# bench registry's 2,000 fixed-length runs), and each pair's verdict is its own: past _SPREAD_FROM pairs they are
# judged in `jobs` forked workers (which inherit the fingerprints), a task the pairs of one block of runs with one
# block of later runs (in_blocks' order; at most _PAIRS_PER_TASK), so that a worker unpacks each run of a task
# once, as one process does (tasks of 4,096 pairs in turn unpacked most runs in both workers: +29% CPU in the
# 10,000 history registry's merge); the verdicts come back in the pairs' order.
_SPREAD_FROM = 8192
_PAIRS_PER_TASK = 1 << 15
_FINGERPRINTS: list[Any] = []  # in a worker: the runs' fingerprints, by index (set before the fork)


def copied_pairs(
    fingerprints: list[Any], pairs: Iterable[tuple[int, int, bool]], jobs: int
) -> Iterator[tuple[int, int, str]]:
    """(run, later run, how) for each of `pairs` (run, later run, by the exact-values rule alone) that
    `judged` finds one measurement, in the pairs' order; in `jobs` processes when there are many."""
    pairs = iter(pairs)
    first = list(itertools.islice(pairs, _SPREAD_FROM))
    if jobs <= 1 or len(first) < _SPREAD_FROM:
        yield from _judge_all(fingerprints, itertools.chain(first, pairs))
        return
    tasks = _packed_tasks(itertools.chain(first, pairs))
    for found in quiet_stream(_judge_task, tasks, jobs, initializer=_remember, initargs=(fingerprints,)):
        yield from found


def _judge_all(fingerprints: list[Any], pairs: Iterable[tuple[int, int, bool]]) -> Iterator[tuple[int, int, str]]:
    for i, j, values_only in pairs:
        how = judged(fingerprints[i], fingerprints[j], values_only=values_only)
        if how:
            yield i, j, how


def _packed_tasks(pairs: Iterable[tuple[int, int, bool]]) -> Iterator[array[int]]:
    """The pairs, each packed in one integer (as in_blocks), a task per block of runs and block of later
    runs they hold, at most _PAIRS_PER_TASK a task."""
    task = array("q")
    blocks = (-1, -1)
    for i, j, values_only in pairs:
        if (i // _BLOCK, j // _BLOCK) != blocks or len(task) >= _PAIRS_PER_TASK:
            if task:
                yield task
            task, blocks = array("q"), (i // _BLOCK, j // _BLOCK)
        task.append(pack_pair(i, j, values_only))
    if task:
        yield task


def _remember(fingerprints: list[Any]) -> None:
    global _FINGERPRINTS
    _FINGERPRINTS = fingerprints


def _judge_task(task: array[int]) -> list[tuple[int, int, str]]:
    return list(_judge_all(_FINGERPRINTS, map(unpack_pair, task)))


# The order ORV304 judges its pairs in (a pair's verdict is its own, and the findings are sorted, so the order
# changes no finding): a block of _BLOCK runs (by path) at a time, its pairs by the block of their later run, so
# that a stretch of pairs reads at most 2 * _BLOCK runs, which stay unpacked (science/independence.py's CACHE_KEPT).
# In path order every run's partners spread over the registry: at the 10,000 bench registry's 11,542 fingerprinted
# run files, 434,000 unpacks of a near print (~1.3 ms each, with its view) against 38,000 by block (issue 55).
_BLOCK = 1024
_PENDING = 1 << 20  # pairs held at most (~40 MB): a block of runs sharing one large bucket is judged in parts
_INDEX_BITS = 24  # a run's index in a packed pair (16 million runs)
_INDEX_MASK = (1 << _INDEX_BITS) - 1


def in_blocks(pairs: Iterable[tuple[int, int, bool]]) -> Iterator[tuple[int, int, bool]]:
    """The pairs (run, later run, judged by the exact-values rule alone), given by run, in the order ORV304
    judges them: a block of _BLOCK runs' pairs at a time, by the block of their later run, then by index."""
    pending: list[int] = []  # (later run's block, run, later run, values only), packed in one integer
    block = -1
    for i, j, values_only in pairs:
        if i // _BLOCK != block or len(pending) >= _PENDING:
            yield from _unpacked(pending)
            pending, block = [], i // _BLOCK
        assert i <= _INDEX_MASK and j <= _INDEX_MASK
        pending.append((j // _BLOCK) << (2 * _INDEX_BITS + 1) | pack_pair(i, j, values_only))
    yield from _unpacked(pending)


def _unpacked(pending: list[int]) -> Iterator[tuple[int, int, bool]]:
    for packed in sorted(pending):
        yield unpack_pair(packed)


def pack_pair(i: int, j: int, values_only: bool) -> int:
    """A pair (run, later run, judged by the exact-values rule alone) in one integer (anything above its
    2 * _INDEX_BITS + 1 bits is the packer's own: in_blocks' block)."""
    return i << (_INDEX_BITS + 1) | j << 1 | values_only


def unpack_pair(packed: int) -> tuple[int, int, bool]:
    return (packed >> (_INDEX_BITS + 1)) & _INDEX_MASK, (packed >> 1) & _INDEX_MASK, bool(packed & 1)


# ORV304's buckets, grouped without keeping their strings: at 100,000 run files the runs hold ~38 million
# bucket keys (~380 a run), and a dict of them by string took several GB (issue 54). Each key is kept as
# its 64-bit hash and the class `tie` counts it by; the hashes held by two runs or more are found by
# sorting them (numpy), a slice of the hash range at a time, so the sort's copies stay a fraction of them.
_SLICES = 8  # slices of the hash range (by its top three bits) sorted one at a time
_CHUNK = 1 << 20  # hashes matched against the repeated ones per numpy call


def tied_after(keyed: Iterable[tuple[str, list[str]]]) -> Iterator[tuple[int, list[tuple[int, bool]]]]:
    """Given each run's kind and `s:<kind>:<bucket>` keys (runs sorted by path), for each run (its index)
    that the keys tie (science/independence.py `tie`) to a run after it: those runs (indices, ascending),
    each with whether only value-sketch keys tie them (judged by the exact-values rule alone).

    Keys are compared by 64-bit hash (Python's, within this process): two different keys with one hash
    (~1 in 20,000 registries of 100,000 run files) would only add a pair for `judged` to compare. A run's
    shared keys and what they tie are counted with numpy, not a Python loop per shared key (at the 3,000
    bench registry ~850,000 of them: half of ORV304's time outside judging, issue 55)."""
    import numpy  # only here: the gate's start-up does not pay for it

    hashes = array("q")
    classes = array("B")  # 0: a key that ties alone; else its class (class_ids)
    ends = array("q")  # where each run's keys end in `hashes`
    class_ids: dict[tuple[str, str], int] = {}  # (kind of key, column) -> its class
    by_prefix: dict[str, int] = {}  # a key's "<kind of key>:<column>" -> its class (0: it ties alone)
    for kind, keys in keyed:
        start = len(hashes)
        hashes.extend(map(hash, keys))
        classes.extend(bytes(len(keys)))
        skip = len(kind) + 3  # "s:<kind>:"
        for n in [n for n, key in enumerate(keys) if key.startswith(_COUNTED, skip)]:
            key = keys[n]
            end = key.find(":", skip + 2)
            prefix = key[skip:end] if end > 0 else key  # "<kind of key>:<column>", the class's name
            class_id = by_prefix.get(prefix)
            if class_id is None:
                counted = counted_column(key[skip:])
                class_id = 0 if counted is None else class_ids.setdefault(counted, len(class_ids) + 1)
                if end > 0:
                    by_prefix[prefix] = class_id
            classes[start + n] = class_id
        ends.append(len(hashes))
    if not hashes:
        return
    every = numpy.frombuffer(hashes, dtype=numpy.int64)
    repeated = _repeated(numpy, every)
    if not len(repeated):
        return
    found = []
    for low in range(0, len(every), _CHUNK):
        chunk = every[low : low + _CHUNK]
        at = numpy.minimum(numpy.searchsorted(repeated, chunk), len(repeated) - 1)
        found.append(numpy.flatnonzero(repeated[at] == chunk) + low)
    held = numpy.concatenate(found)  # the positions of shared keys, in run order
    del found
    # per shared key: its run, its group (its hash's rank among the repeated ones) and its class; as numpy
    # arrays, not lists: at 10,000 run files most keys are shared (millions)
    runs = len(ends)
    owners = numpy.searchsorted(numpy.frombuffer(ends, dtype=numpy.int64), held, side="right").astype(numpy.int64)
    key_of = numpy.searchsorted(repeated, every[held]).astype(numpy.int64)
    class_of = numpy.frombuffer(classes, dtype=numpy.uint8)[held]
    del every, held
    # every shared key's holders, by group and within it in path order (a stable sort of keys in run order);
    # a key's later holders are those of its group past its run: (group, run) ranks them in one sorted array
    by_key = numpy.argsort(key_of, kind="stable")
    ranked = key_of[by_key] * (runs + 1) + owners[by_key]
    members = owners[by_key].astype(numpy.int32)
    del by_key
    after = numpy.searchsorted(ranked, key_of * (runs + 1) + owners, side="right")
    upto = numpy.searchsorted(ranked, (key_of + 1) * (runs + 1))
    del ranked, key_of
    # what one key of each class needs to tie (COUNTED_TIES; 1 for a key that ties alone), and whether it
    # is a merge, smoothed or wide key (enough of them tie as any key does; enough value-sketch keys only for
    # shared_values)
    least = numpy.ones(len(class_ids) + 1, dtype=numpy.int64)
    every_rule = numpy.zeros(len(class_ids) + 1, dtype=bool)
    for (kind, _), class_id in class_ids.items():
        least[class_id], every_rule[class_id] = COUNTED_TIES[kind], kind in EVERY_RULE
    run_start = numpy.searchsorted(owners, numpy.arange(runs + 1))
    for one in numpy.unique(owners).tolist():
        low, high = int(run_start[one]), int(run_start[one + 1])
        counts = upto[low:high] - after[low:high]
        total = int(counts.sum())
        if not total:
            continue
        # the later holders of each of this run's keys, one after another, with the key's class
        firsts = numpy.repeat(after[low:high] - (numpy.cumsum(counts) - counts), counts)
        others = members[firsts + numpy.arange(total)]
        labels = numpy.repeat(class_of[low:high], counts)
        alone = labels == 0
        pairs, held_keys = numpy.unique(others[~alone].astype(numpy.int64) * 256 + labels[~alone], return_counts=True)
        label = pairs & 255
        enough = held_keys >= least[label]
        by_all = numpy.union1d(others[alone], pairs[enough & every_rule[label]] >> 8)
        by_values = numpy.setdiff1d(pairs[enough & ~every_rule[label]] >> 8, by_all)
        if len(by_all) or len(by_values):
            tied = [(j, False) for j in by_all.tolist()] + [(j, True) for j in by_values.tolist()]
            yield one, sorted(tied)


_COUNTED = tuple(f"{kind}:" for kind in COUNTED_TIES)


def _repeated(numpy: Any, every: Any) -> Any:
    """The values `every` holds more than once, sorted; found a slice of their range at a time (by the
    top three bits), so that no sort copies more than a slice."""
    top = every.view(numpy.uint8)[7 if sys.byteorder == "little" else 0 :: every.itemsize] >> 5
    parts = []
    for part in range(_SLICES):
        chosen = numpy.sort(every[top == part])
        parts.append(numpy.unique(chosen[1:][chosen[1:] == chosen[:-1]]))
    return numpy.sort(numpy.concatenate(parts))


@check("ORV305", Severity.WARNING, "two runs of a recipe share measured_at", related_by="r")
def runs_of_a_recipe_differ_in_time(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Two runs backing the same recipe, by different measurers, carry the same `measured_at`. Two
    measurers rarely start the same benchmark at the same moment; the usual cause is one tool
    output stored twice. The pair does not count as a reproduction for T3 (docs/boards.md). A
    warning, not an error, because a date-only `measured_at` can coincide.

    Store each run from its own tool output; give `measured_at` with the time of day.
    """
    for _entry, recipe in snapshot.valid_recipes():
        seen: dict[str, RunEntry] = {}
        for digest in recipe.run_digests:
            run = snapshot.runs.get(digest)
            if run is None or run.meta is None:
                continue
            other = seen.get(run.meta.measured_at)
            if other is not None and other.meta is not None and other.meta.measured_by != run.meta.measured_by:
                yield Finding(
                    run.path,
                    f"`measured_at` {run.meta.measured_at} is also that of `{other.path}` (recipe `{recipe.id}`)",
                    "store each run from its own tool output, with measured_at to the second",
                    at=("measured_at",),
                )
            seen.setdefault(run.meta.measured_at, run)
