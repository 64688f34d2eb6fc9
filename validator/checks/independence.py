"""ORV304-ORV305: a run is its own measurement — not a copy of another run's samples or moment."""

from __future__ import annotations

from collections.abc import Iterator

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.evidence.arrival import later_of
from validator.registry.relations import content_keys
from validator.registry.snapshot import RunEntry, Snapshot
from validator.science.independence import VALUES, judged, tie


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
    # the runs holding each `s:` relation key (relations.content_keys: the strings the loader made, not a
    # second copy): a key one run holds maps to it alone, a list only where several do, since most of
    # ~300 keys a run are its own (~1,000,000 keys at 3,435 run files: issue 55's peak memory)
    groups: dict[str, RunEntry | list[RunEntry]] = {}
    keyed: list[tuple[RunEntry, list[str]]] = []
    for run in sorted(snapshot.runs.values(), key=lambda run: run.path):
        if run.meta is None or run.facts is None or not run.facts.fingerprint:
            continue
        # (a quality run never gets here: its loader keeps no meta or timing facts, and its relation keys are
        # ORV239's `q:` task hashes alone, so neither this check nor pull-request mode ties it by samples)
        keys = [key for key in content_keys(run) if key.startswith("s:")]
        for key in keys:
            held = groups.get(key)
            if held is None:
                groups[key] = run
            elif isinstance(held, list):
                held.append(run)
            else:
                groups[key] = [held, run]
        keyed.append((run, keys))
    # (the later run's path, the earlier's) -> how: one finding a pair, decided by that pair alone, so that
    # pull-request mode need not reach past a changed file's own pairs (relations.PAIRWISE)
    copies: dict[tuple[str, str], str] = {}
    # each run with the runs after it (by path) that share a bucket with it: every pair once, with no
    # registry-wide set of the pairs compared (millions at 100,000 run files: issue 54). A pair tied
    # only by value-sketch keys is judged by the exact-values rule alone; value-sketch and merge keys tie
    # only several of a column at a time (science/independence.py `tie`)
    focus = snapshot.pairs_with  # pull-request mode: only the pairs holding a changed run can differ
    for one, shared in keyed:
        after: dict[int, tuple[RunEntry, list[str]]] = {}  # the runs after `one` sharing a bucket, and the keys
        either = focus is None or one.path in focus
        for key in shared:
            held = groups[key]
            if isinstance(held, list):
                for other in held:
                    if other.path > one.path and (either or other.path in focus):  # type: ignore[operator]
                        after.setdefault(id(other), (other, []))[1].append(key.split(":", 2)[2])  # the bucket
        for other, tying in sorted(after.values(), key=lambda found: found[0].path):
            how_tied = tie(tying)
            if how_tied is None:
                continue  # e.g. one shared value of a column: chance, and shared_values never flags it
            assert one.facts is not None and other.facts is not None
            how = judged(one.facts.fingerprint, other.facts.fingerprint, values_only=how_tied == VALUES)
            if how:
                assert one.meta is not None and other.meta is not None
                earlier, later = later_of(
                    snapshot, (one.path, one.meta.measured_at), (other.path, other.meta.measured_at)
                )
                copies[(later, earlier)] = how
    for (path, earlier), how in sorted(copies.items()):
        yield Finding(
            path,
            f"this run is one measurement with `{earlier}`: {how}",
            "remove this run file and its reference; a reproduction is a new run stored from its own tool output",
            line=1,
            col=1,
        )


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
