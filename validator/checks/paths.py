"""ORV117-ORV118: file names every checkout can hold — no case collisions, no control characters."""

from __future__ import annotations

import re
from collections.abc import Iterator

from validator.checks.base import Finding, check
from validator.diagnostics import Severity, printable
from validator.registry.snapshot import Snapshot

_PORTABLE_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@check("ORV117", Severity.ERROR, "paths differ only by case", related_by="f")
def case_collision(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Two files whose paths differ only in upper/lower case. On macOS and Windows checkouts one
    silently overwrites the other, so reviewers and the boards could see different files. Rename
    one of them; ids and file names are lower-case.
    """
    seen: dict[str, str] = {}
    for rel in snapshot.files:
        folded = rel.casefold()
        if folded in seen:
            yield Finding(
                rel,
                f"`{rel}` differs from `{seen[folded]}` only by case",
                "rename the file; recipe ids and file names are lower-case",
            )
        else:
            seen[folded] = rel


@check("ORV118", Severity.ERROR, "file name not portable", per_file=True)
def unportable_name(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A file or folder name with control characters, spaces or other characters outside
    `A-Z a-z 0-9 . _ -`. Such names break terminals, annotations and other platforms' checkouts;
    every name the layout needs (slugs, model ids, hex digests) fits the portable set.
    """
    for rel in snapshot.files:
        bad = [segment for segment in rel.split("/") if not _PORTABLE_SEGMENT.match(segment)]
        if bad:
            # the location is the file's real name (reporters escape it for display, SARIF percent-encodes it)
            yield Finding(
                rel,
                f"name `{printable(bad[0])}` has characters outside A-Z a-z 0-9 . _ -",
                "rename it using lower-case letters, digits, '.', '_' and '-' only",
            )
