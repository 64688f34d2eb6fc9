"""History walks: which file arrived first by merge order, and the newest commit touching the registry."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Any

from validator.errors import HistoryError
from validator.git.partial import fetch_history_trees, fetch_range_trees
from validator.git.plumbing import plumbing


def arrival_order(root: str, tops: tuple[str, ...]) -> dict[str, int]:
    """path -> when it first appeared on HEAD's first-parent history (0 = the oldest commit), for
    every file ever added under `tops` — one `git log` for all of them. A merge counts as adding
    what its branch brought (`-m --first-parent`: the diff against the first parent), so a pull
    request's files arrive with the commit that merged them. Empty outside git (never raises);
    files absent from the answer (uncommitted, or added by the work tree) are the newest.
    """
    fetch_history_trees(root)
    out = plumbing(
        root,
        "log",
        "--first-parent",
        "-m",
        "--reverse",
        "--relative",
        "--diff-filter=A",
        "--name-only",
        "--format=%x01",
        "--",
        *tops,
    )
    if out is None:
        return {}
    order: dict[str, int] = {}
    for index, commit in enumerate(out.decode(errors="replace").split("\x01")):
        for line in commit.splitlines():
            if line.strip():
                order.setdefault(line.strip(), index)
    return order


# --------------------------------------------------------------------------- history (the boards stamp)


def _inside_git(root: str) -> bool:
    here = os.path.realpath(root)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return True
        parent = os.path.dirname(here)
        if parent == here:
            return False
        here = parent


def _shallow_boundary(repo: Any, sha: str) -> bool:
    """True when `sha` is where a shallow clone's history was cut: git cannot see what it changed."""
    common = getattr(repo, "common_dir", None) or repo.git_dir
    path = os.path.join(str(common), "shallow")
    if not os.path.isfile(path):
        return False
    with open(path, encoding="ascii", errors="replace") as fh:
        return sha in {line.strip() for line in fh}


def newest_commit_touching(root: str, dirs: tuple[str, ...], since: str | None = None) -> tuple[str, str] | None:
    """(ISO committer time in UTC, SHA) of the newest commit on HEAD touching `dirs` under root.

    None outside a git work tree or before the first such commit. With `since` (a commit of HEAD's history),
    only the commits after it are walked (None when none of them touches `dirs`): a merge's boards update
    needs the trees of those few commits only, never the whole history's. Inside one, any failure to read
    the history raises HistoryError rather than answering None, so two machines never disagree.
    """
    if not _inside_git(root):
        return None
    try:
        import git

        repo = git.Repo(root, search_parent_directories=True)
        top = repo.working_tree_dir
        if top is None:
            return None
        rel = os.path.relpath(os.path.realpath(root), os.path.realpath(top)).replace(os.sep, "/")
        paths = [d if rel == "." else f"{rel}/{d}" for d in dirs]
        if not repo.head.is_valid():
            return None
        if since is None:
            fetch_history_trees(root)
        else:
            fetch_range_trees(root, since)
        newest = next(iter(repo.iter_commits(f"{since}..HEAD" if since else "HEAD", paths=paths, max_count=1)), None)
        if newest is None:
            return None
        if _shallow_boundary(repo, newest.hexsha):
            raise HistoryError(
                f"this clone is shallow: git cannot tell when {', '.join(d + '/' for d in dirs)} last changed",
                "fetch the full history (`git fetch --unshallow`; in GitHub Actions, actions/checkout with "
                "`fetch-depth: 0`)",
            )
        when = datetime.fromtimestamp(newest.committed_date, tz=timezone.utc)
        return when.isoformat(timespec="seconds"), newest.hexsha
    except HistoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - GitPython raises many types; all mean "history unreadable"
        raise HistoryError(
            f"cannot read the git history of {root}: {type(exc).__name__}: {exc}".strip(),
            "make sure `git log` works in this folder (git installed, repository readable, "
            "marked safe.directory if owned by another user)",
        ) from None
