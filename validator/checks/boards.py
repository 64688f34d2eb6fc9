"""ORV7xx: boards/boards.json must equal a fresh regeneration; also how a regeneration is made.

A regeneration is: tiers from the snapshot and its findings -> validator.boards.build -> schema
check -> bytes. The only input besides the registry files is git: `updated_at` is the committer
time of the newest commit touching recipes/, runs/ or catalog/ (docs/boards.md explains why a
boards commit must come after the data it describes).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Iterator, Optional

from validator import schema as schemas
from validator.boards import GitStamp, build, render
from validator.checks import Finding, check
from validator.diagnostics import Severity
from validator.registry import BOARDS_PATH
from validator.tiers import derive

if TYPE_CHECKING:
    from validator.engine import Analysis

STAMP_DIRS = ("recipes", "runs", "catalog")
REGENERATE_HINT = ("run `orv boards` once the data is committed, and commit boards/boards.json on its own; "
                   "never edit it by hand (docs/boards.md)")


class BoardsError(Exception):
    """The boards cannot be regenerated deterministically (git history unreadable or incomplete)."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def _inside_git(root: str) -> bool:
    here = os.path.realpath(root)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return True
        parent = os.path.dirname(here)
        if parent == here:
            return False
        here = parent


def _shallow_boundary(repo: object, sha: str) -> bool:
    """True when `sha` is where a shallow clone's history was cut: git cannot see what it changed."""
    common = getattr(repo, "common_dir", None) or getattr(repo, "git_dir")
    path = os.path.join(str(common), "shallow")
    if not os.path.isfile(path):
        return False
    with open(path, encoding="ascii", errors="replace") as fh:
        return sha in {line.strip() for line in fh}


def git_stamp(root: str) -> GitStamp:
    """The newest commit touching the registry's data, from HEAD's history; empty outside git.

    Outside a git work tree, or before the first commit touching the data, both fields are null
    (deterministic, never the clock). Inside one, any failure to read the history is an error
    rather than a silent null, so that two machines can never disagree.
    """
    if not _inside_git(root):
        return GitStamp()
    try:
        import git

        repo = git.Repo(root, search_parent_directories=True)
        top = repo.working_tree_dir
        if top is None:
            return GitStamp()
        rel = os.path.relpath(os.path.realpath(root), os.path.realpath(top)).replace(os.sep, "/")
        paths = [d if rel == "." else f"{rel}/{d}" for d in STAMP_DIRS]
        if not repo.head.is_valid():
            return GitStamp()
        newest = next(iter(repo.iter_commits("HEAD", paths=paths, max_count=1)), None)
        if newest is None:
            return GitStamp()
        if _shallow_boundary(repo, newest.hexsha):
            raise BoardsError(
                "this clone is shallow: git cannot tell when recipes/, runs/ or catalog/ last changed",
                "fetch the full history (`git fetch --unshallow`; in GitHub Actions, actions/checkout with "
                "`fetch-depth: 0`)")
        when = datetime.fromtimestamp(newest.committed_date, tz=timezone.utc)
        return GitStamp(when.isoformat(timespec="seconds"), newest.hexsha)
    except BoardsError:
        raise
    except Exception as exc:  # noqa: BLE001 - GitPython raises many types; all mean "history unreadable"
        raise BoardsError(f"cannot read the git history of {root}: {type(exc).__name__}: {exc}".strip(),
                          "make sure `git log` works in this folder (git installed, repository readable, "
                          "marked safe.directory if owned by another user)") from None


def regenerate(analysis: "Analysis", stamp: Optional[GitStamp] = None) -> bytes:
    """The bytes `orv boards` writes for this registry. Raises BoardsError if git cannot be read."""
    snapshot = analysis.snapshot
    tiers = derive(snapshot, analysis.diagnostics)
    document = build(snapshot, tiers, stamp if stamp is not None else git_stamp(snapshot.root))
    issues = schemas.validate("boards", document)
    if issues:  # the generator and its schema disagree: orv's bug, never written
        first = issues[0]
        raise RuntimeError(f"generated boards fail schema/boards.schema.json at {list(first.path)}: {first.message}")
    return render(document)


def read_committed(root: str) -> Optional[bytes]:
    """The boards file's bytes, or None if absent. A symlink is never followed: it reads as empty,
    so it always differs from a regeneration (and ORV114 reports it)."""
    path = os.path.join(root, BOARDS_PATH)
    if os.path.islink(path):
        return b""
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as fh:
        return fh.read()


def first_difference(committed: bytes, fresh: bytes) -> Optional[tuple[int, str, str]]:
    """(1-based line, committed line, regenerated line) of the first difference; None if identical."""
    if committed == fresh:
        return None
    old, new = committed.splitlines(keepends=True), fresh.splitlines(keepends=True)
    for number, (a, b) in enumerate(zip(old, new), start=1):
        if a != b:
            return number, _shown(a), _shown(b)
    number = min(len(old), len(new)) + 1
    return (number, _shown(old[number - 1]) if number <= len(old) else "(end of file)",
            _shown(new[number - 1]) if number <= len(new) else "(end of file)")


def _shown(line: bytes) -> str:
    text = line.decode("utf-8", errors="replace").strip()
    return text if len(text) <= 100 else text[:97] + "..."


@dataclass(frozen=True)
class _Comparison:
    """Committed boards vs a regeneration, computed once per analysis for ORV701 and ORV702."""

    problem: Optional[Finding] = None  # cannot compare / missing file
    rows_differ: Optional[tuple[int, str, str]] = None  # first difference beyond the git stamp
    stamp_behind: Optional[tuple[str, str]] = None  # (committed source_commit, fresh one)


_LAST: list[tuple[object, _Comparison]] = []  # (snapshot, its comparison): ORV701 and ORV702 share one


def _committed_stamp(committed: bytes) -> Optional[GitStamp]:
    try:
        meta = json.loads(committed).get("meta", {})
        return GitStamp(meta.get("updated_at"), meta.get("source_commit"))
    except (ValueError, AttributeError):
        return None


def compare(analysis: "Analysis") -> _Comparison:
    if _LAST and _LAST[0][0] is analysis.snapshot:
        return _LAST[0][1]
    result = _compare(analysis)
    _LAST[:] = [(analysis.snapshot, result)]
    return result


def _compare(analysis: "Analysis") -> _Comparison:
    root = analysis.snapshot.root
    committed = read_committed(root)
    if committed is None:
        if analysis.snapshot.recipes:
            return _Comparison(Finding(BOARDS_PATH, "boards/boards.json has not been generated yet",
                                       "run `orv boards` and commit boards/boards.json", line=1, col=1,
                                       severity=Severity.WARNING))
        return _Comparison()
    try:
        stamp = git_stamp(root)
        fresh = regenerate(analysis, stamp)
    except BoardsError as exc:
        return _Comparison(Finding(BOARDS_PATH, f"cannot regenerate the boards to compare: {exc.message}",
                                   exc.hint, line=1, col=1))
    if committed == fresh:
        return _Comparison()
    # Committing data and its boards together stamps the boards with the previous data commit
    # (a commit cannot name itself). Same rows under an older stamp is ORV702, not ORV701.
    old_stamp = _committed_stamp(committed)
    if old_stamp is not None and old_stamp != stamp and committed == regenerate(analysis, old_stamp):
        return _Comparison(stamp_behind=(str(old_stamp.source_commit), str(stamp.source_commit)))
    return _Comparison(rows_differ=first_difference(committed, fresh))


@check("ORV701", Severity.ERROR, "boards out of date", scope="boards")
def boards_out_of_date(analysis: "Analysis") -> Iterator[Finding]:
    """boards/boards.json differs from a fresh regeneration.

    The boards are generated by `orv boards` from the recipes, run files and catalog; they are
    never edited by hand. The finding points at the first line that differs. To fix: run
    `orv boards` and commit boards/boards.json (on main a workflow does this after every merge).
    `orv boards --check` runs the same comparison and exits 1 when the file is stale.

    A registry that has recipes but no boards/boards.json yet gets this code as a warning: not
    publishing boards is allowed (a fork, a scratch registry), publishing stale ones is not.
    It is an error when git history cannot be read (a shallow clone): the comparison cannot be
    made, so it fails closed; fetch the full history.
    """
    result = compare(analysis)
    if result.problem is not None:
        yield result.problem
    elif result.rows_differ is not None:
        line, old, new = result.rows_differ
        yield Finding(BOARDS_PATH,
                      f"boards/boards.json differs from a fresh regeneration at line {line}: "
                      f"committed `{old}`, regenerated `{new}`",
                      REGENERATE_HINT, line=line, col=1)


@check("ORV702", Severity.WARNING, "boards stamped with an older data commit", scope="boards")
def boards_stamp_behind(analysis: "Analysis") -> Iterator[Finding]:
    """boards/boards.json has every row right but names an older commit as its source.

    This is what committing data and its regenerated boards in one commit gives: the boards can
    only name the data commit before it (`meta.source_commit`, `meta.updated_at`). Nothing a reader
    sees is wrong, so it is a warning; run `orv boards` after the commit (the workflow on main
    does) to refresh the stamp.
    """
    result = compare(analysis)
    if result.stamp_behind is not None:
        old, new = result.stamp_behind
        yield Finding(BOARDS_PATH, f"boards name data commit {old[:12]}; the newest data commit is {new[:12]}",
                      "run `orv boards` and commit boards/boards.json to refresh the stamp", line=1, col=1)
