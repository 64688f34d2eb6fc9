"""ORV121: dates and timestamps that name a real moment in the accepted range (validator/dates.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from validator import dates
from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.registry.snapshot import Snapshot

SHAPE = re.compile(dates.DATE_PATTERN)


@check("ORV121", Severity.ERROR, "date that does not exist or is out of range", per_file=True)
def real_dates(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A recipe's `measured` or a run's `measured_at` names a day the calendar does not have
    (`2026-02-31`, `2026-02-29`), or a date outside the range orv accepts: not before 2015-01-01
    (before any engine or GPU in the catalog existed: an earlier year is a typo) and not later
    than the time of the check plus one day (a day covers every time zone's today; a later date
    is a typo or a clock set wrong). The schemas admit only the shape: `measured` is a date
    `YYYY-MM-DD` (ISO 8601 / RFC 3339 full-date); `measured_at` is that date, optionally with a
    time `THH:MM[:SS[.fraction]]` (hours 00-23, minutes and seconds 00-59) and a zone `Z` or
    `±HH[:MM]` (RFC 3339); a time without a zone is read as UTC. Write the day the benchmark ran.

    The upper bound follows the clock of the machine that checks, so it is a finding of
    `orv check` only: `orv boards` never reads it, and boards stay byte-identical for a commit.
    """
    at = dates.now()
    for entry in snapshot.recipes:
        doc = snapshot.documents.get(entry.path)
        measured = doc.data.get("measured") if doc is not None and isinstance(doc.data, dict) else None
        # a value of another shape is the schema's finding (ORV104/ORV109); this one judges the calendar
        why = dates.problem(measured, at) if isinstance(measured, str) and SHAPE.match(measured) else None
        if why:
            yield Finding(
                entry.path, f"`measured`: {why}", 'write the day the benchmark ran, as "YYYY-MM-DD"', at=("measured",)
            )
    for run in snapshot.runs.values():
        if run.meta is not None:
            why = dates.problem(run.meta.measured_at, at)
            if why:
                yield Finding(
                    run.path,
                    f"`measured_at`: {why}",
                    "store the run again from the tool's own output (its time, with a zone)",
                    at=("measured_at",),
                )
