"""ORV304-ORV305: a run is its own measurement — not a copy of another run's samples or moment."""

from __future__ import annotations

from typing import Iterator

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.independence import buckets, same_measurement
from validator.registry import RunEntry, Snapshot


def _order(run: RunEntry) -> tuple[str, str]:
    assert run.meta is not None
    return run.meta.measured_at, run.path


@check("ORV304", Severity.ERROR, "run copies another run's samples", related_by="s")
def runs_are_separate_measurements(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Two run files hold one measurement: their raw samples are identical, or one's timings are the
    other's rescaled by a constant, shifted by a constant or put in another order (compared per
    timing column after sorting and an affine normalisation; docs/metrics.md, "Independent runs").
    Real measurements never repeat their step times or request latencies exactly, so a second such
    file is a copy — storing it again with another `measured_by` or date is not a reproduction.

    Reported on every copy after the earliest (by `measured_at`, then path). Remove the copy and
    its reference; a reproduction is a new run of the recipe, stored from that run's own output.
    """
    groups: dict[tuple[str, str], list[RunEntry]] = {}
    for run in snapshot.runs.values():
        if run.meta is None or run.facts is None or not run.facts.fingerprint:
            continue
        for key in buckets(run.facts.fingerprint):
            groups.setdefault((run.meta.kind, key), []).append(run)
    reported: set[str] = set()
    for runs in groups.values():
        runs.sort(key=_order)
        for i, later in enumerate(runs):
            if later.path in reported:
                continue
            for earlier in runs[:i]:
                assert later.facts is not None and earlier.facts is not None
                how = same_measurement(earlier.facts.fingerprint, later.facts.fingerprint)
                if how:
                    reported.add(later.path)
                    yield Finding(later.path, f"this run is one measurement with `{earlier.path}`: {how}",
                                  "remove this run file and its reference; a reproduction is a new run stored "
                                  "from its own tool output", line=1, col=1)
                    break


@check("ORV305", Severity.WARNING, "two runs of a recipe share measured_at", related_by="r")
def runs_of_a_recipe_differ_in_time(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Two runs backing the same recipe, by different measurers, carry the same `measured_at`. Two
    measurers rarely start the same benchmark at the same moment; the usual cause is one tool
    output stored twice. The pair does not count as a reproduction for T3 (docs/boards.md). A
    warning, not an error, because a date-only `measured_at` can coincide.

    Store each run from its own tool output; give `measured_at` with the time of day.
    """
    for entry, recipe in snapshot.valid_recipes():
        seen: dict[str, RunEntry] = {}
        for digest in recipe.run_digests:
            run = snapshot.runs.get(digest)
            if run is None or run.meta is None:
                continue
            other = seen.get(run.meta.measured_at)
            if other is not None and other.meta is not None and other.meta.measured_by != run.meta.measured_by:
                yield Finding(run.path, f"`measured_at` {run.meta.measured_at} is also that of `{other.path}` "
                                        f"(recipe `{recipe.id}`)",
                              "store each run from its own tool output, with measured_at to the second",
                              at=("measured_at",))
            seen.setdefault(run.meta.measured_at, run)
