"""How the boards are regenerated: the git stamp, tiers -> build -> schema check -> bytes, and comparing.

The document is built and checked whole, then stored split (boards/split.py: boards/index.json and one file
per model under boards/models/ and boards/standings/); the combined document readers fetch is assembled
from those files and published by the boards workflow (`orv boards --combined`), never committed.

The only input besides the registry files is git: `updated_at` is the committer time of the
newest commit touching recipes/, runs/ or catalog/ (docs/boards.md explains why a boards commit
must come after the data it describes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from validator.boards.build import GitStamp, build, duplicate_row, render
from validator.boards.split import split_files
from validator.evidence.tiers import derive
from validator.git.history import newest_commit_touching
from validator.load import schema as schemas
from validator.registry.layout import BOARDS_PATH
from validator.registry.snapshot import Analysis

STAMP_DIRS = ("recipes", "runs", "catalog")
# No generated file may pass this: GitHub warns at 50 MB and refuses a file over 100 MB, and every merge
# rewrites a touched model's file. At the bench's largest registry (100,000 recipes, bench/merge_bytes.py's
# size model) the largest is ~18 MB (tests/unit/test_boards_size.py holds it below the limit).
FILE_LIMIT_MB = 25
MB = 1_000_000


def oversized(files: Mapping[str, bytes], limit_bytes: int = FILE_LIMIT_MB * MB) -> list[tuple[str, int]]:
    """The generated files over `limit_bytes`: [(path, bytes)], largest first."""
    return over_limit({path: len(data) for path, data in files.items()}, limit_bytes)


def over_limit(sizes: Mapping[str, int], limit_bytes: int = FILE_LIMIT_MB * MB) -> list[tuple[str, int]]:
    """Of files of these sizes ({path: bytes}), those over `limit_bytes`: [(path, bytes)], largest first."""
    over = [(path, size) for path, size in sizes.items() if size > limit_bytes]
    return sorted(over, key=lambda item: (-item[1], item[0]))


def git_stamp(root: str) -> GitStamp:
    """The newest commit touching the registry's data, from HEAD's history; empty outside git.

    Outside a git work tree, or before the first commit touching the data, both fields are null
    (deterministic, never the clock). Raises HistoryError when the history cannot be read.
    """
    newest = newest_commit_touching(root, STAMP_DIRS)
    return GitStamp(*newest) if newest is not None else GitStamp()


def regenerate(analysis: Analysis, stamp: GitStamp | None = None) -> bytes:
    """The boards as one document's bytes (`orv boards --combined`'s form). Raises HistoryError if git cannot be read."""
    document = fresh_document(analysis, stamp if stamp is not None else git_stamp(analysis.snapshot.root))
    return render(document)


def regenerate_files(analysis: Analysis, stamp: GitStamp | None = None) -> dict[str, bytes]:
    """The files `orv boards` writes for the boards: {path: bytes}: the index and one file per model (its part, its standings)."""
    document = fresh_document(analysis, stamp if stamp is not None else git_stamp(analysis.snapshot.root))
    return split_files(document)


def fresh_document(analysis: Analysis, stamp: GitStamp) -> dict[str, Any]:
    """The boards document, built once and checked: shape by the schema, one row per key by build.duplicate_row."""
    snapshot = analysis.snapshot
    return checked(build(snapshot, derive(snapshot, analysis.diagnostics), stamp))


def checked(document: dict[str, Any]) -> dict[str, Any]:
    """The document, once the schema and build.duplicate_row find nothing wrong with it (a full build's or a
    merge's patched one, boards/update.py); RuntimeError otherwise: orv's bug, never written."""
    issues = [] if schemas.is_valid("boards", document) else schemas.validate("boards", document)
    if issues:  # the generator and its schema disagree: orv's bug, never written
        first = issues[0]
        raise RuntimeError(f"generated boards fail schema/boards.schema.json at {list(first.path)}: {first.message}")
    repeated = duplicate_row(document)
    if repeated is not None:  # the generator repeated a row: orv's bug, never written
        raise RuntimeError(f"generated boards repeat a row in {repeated[0]}: {repeated[1]}")
    return document


def restamped(document: Mapping[str, Any], stamp: GitStamp) -> dict[str, bytes]:
    """The same boards' files under another git stamp (only the index carries it)."""
    meta = {**document["meta"], "updated_at": stamp.updated_at, "source_commit": stamp.source_commit}
    return split_files({**document, "meta": meta})


def read_committed(root: str, rel: str = BOARDS_PATH) -> bytes | None:
    """A generated file's bytes (the boards' index, or boards/keys.json), or None if absent. A symlink is
    never followed: it reads as empty, so it always differs from a regeneration (and ORV114 reports it)."""
    path = os.path.join(root, rel)
    if os.path.islink(path):
        return b""
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as fh:
        return fh.read()


def first_difference(committed: bytes, fresh: bytes) -> tuple[int, str, str] | None:
    """(1-based line, committed line, regenerated line) of the first difference; None if identical."""
    if committed == fresh:
        return None
    old, new = committed.splitlines(keepends=True), fresh.splitlines(keepends=True)
    for number, (a, b) in enumerate(zip(old, new), start=1):
        if a != b:
            return number, _shown(a), _shown(b)
    number = min(len(old), len(new)) + 1
    return (
        number,
        _shown(old[number - 1]) if number <= len(old) else "(end of file)",
        _shown(new[number - 1]) if number <= len(new) else "(end of file)",
    )


def _shown(line: bytes) -> str:
    text = line.decode("utf-8", errors="replace").strip()
    return text if len(text) <= 100 else text[:97] + "..."


def committed_stamp(committed: bytes) -> GitStamp | None:
    """The stamp a committed boards index carries, or None if it cannot be read."""
    try:
        meta = json.loads(committed).get("meta", {})
        return GitStamp(meta.get("updated_at"), meta.get("source_commit"))
    except (ValueError, AttributeError):
        return None
