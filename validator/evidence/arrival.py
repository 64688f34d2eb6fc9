"""Which of two files came later: the merge order ORV304 and ORV239 blame a copy by (git history).

A file's arrival is when it first appeared on HEAD's first-parent history (validator/git/,
`arrival_order`: one `git log` for every run file); a file not committed yet — what a pull
request or the work tree adds — is the newest. Asked once per snapshot, and only when a check has
found a copy, so a clean registry never pays for it.
"""

from __future__ import annotations

import math
from typing import Any

from validator.git.history import arrival_order
from validator.registry.snapshot import Snapshot


def arrival(snapshot: Snapshot, path: str) -> float:
    """The file's place in merge order (math.inf: not committed yet, the newest)."""
    order = snapshot.memo("arrival", lambda: arrival_order(snapshot.root, ("runs",)))
    return order.get(path, math.inf)


def later_of(snapshot: Snapshot, a: tuple[str, Any], b: tuple[str, Any]) -> tuple[str, str]:
    """(earlier path, later path) of two (path, tie-break) pairs: merge order, then the tie-break
    (e.g. measured_at), then the path — never the path alone where history tells them apart."""
    key_a = (arrival(snapshot, a[0]), a[1], a[0])
    key_b = (arrival(snapshot, b[0]), b[1], b[0])
    return (a[0], b[0]) if key_a <= key_b else (b[0], a[0])
