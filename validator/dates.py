"""What a real date or timestamp is, in one place: ORV121, `orv new --measured` and the docs use this rule.

The schemas' patterns admit only the shape (`YYYY-MM-DD`, months 01-12, days 01-31, hours 00-23,
minutes and seconds 00-59, an optional zone `Z` or `±HH[:MM]`); the calendar is checked here:
a day that does not exist (`2026-02-31`) is refused, and so is a date outside the accepted range,
from `FLOOR` to the time of the check plus one day (a date ahead of every time zone's today is a
typo, not a measurement). A timestamp without a zone is read as UTC, a date alone as the UTC day.
"""

from __future__ import annotations

import datetime
import re

# Before any engine, GPU or model the catalog knows existed (the oldest catalog GPU, the V100,
# shipped in 2017; vLLM and SGLang are from 2023): an earlier date is a typo such as 2006 for 2026.
FLOOR = datetime.date(2015, 1, 1)
# Ahead of the checking clock by at most this much: a day covers every time zone's today (UTC+14).
AHEAD = datetime.timedelta(days=1)

# The shapes the schemas admit (schema/common.schema.json `date`, `timestamp`; validator/models.py uses these).
DATE_PATTERN = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"
TIMESTAMP_PATTERN = (
    r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([T ]([01][0-9]|2[0-3]):[0-5][0-9]"
    r"(:[0-5][0-9](\.[0-9]+)?)?(Z|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)?)?$"
)
_TIMESTAMP = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?"
    r"(Z|([+-])([0-9]{2})(?::?([0-9]{2}))?)?)?$"
)


def moment(text: str) -> datetime.datetime | None:
    """The UTC moment `text` (a date or a timestamp in the schemas' shape) names, or None if it names none."""
    m = _TIMESTAMP.match(text)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(g) if g else 0 for g in m.groups()[:6])
    offset = datetime.timedelta(0)
    if m.group(9):
        if int(m.group(10)) > 23 or int(m.group(11) or 0) > 59:
            return None
        offset = datetime.timedelta(hours=int(m.group(10)), minutes=int(m.group(11) or 0))
        if m.group(9) == "-":
            offset = -offset
    try:
        local = datetime.datetime(year, month, day, hour, minute, second, tzinfo=datetime.timezone(offset))
    except ValueError:  # a day the calendar does not have, an hour 24, a zone of 24 hours or more
        return None
    return local.astimezone(datetime.timezone.utc)


def now() -> datetime.datetime:
    """The checking clock (UTC); tests give `problem` their own `at` instead."""
    return datetime.datetime.now(datetime.timezone.utc)


def problem(text: str, at: datetime.datetime | None = None) -> str | None:
    """Why `text` is not a real date in the accepted range at time `at` (default: now), or None."""
    when = moment(text)
    if when is None:
        return f"`{text}` is not a day on the calendar"
    if when.date() < FLOOR:
        return f"`{text}` is before {FLOOR.isoformat()}, earlier than any measurement orv accepts"
    latest = (at or now()) + AHEAD
    if when > latest:
        return f"`{text}` is in the future (later than {latest.date().isoformat()}, a day after the check)"
    return None
