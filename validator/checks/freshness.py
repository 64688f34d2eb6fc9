"""ORV7xx: the boards (boards/index.json, boards/models/, boards/standings/) and the published keys (boards/keys.json,
boards/keys/) must equal a fresh regeneration
(validator/boards/)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from validator.boards import keyfile
from validator.boards.regenerate import (
    committed_stamp,
    first_difference,
    fresh_document,
    git_stamp,
    restamped,
)
from validator.boards.split import committed_files, split_files
from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.errors import HistoryError
from validator.registry.layout import BOARDS_PATH, DOCUMENT_PATH, KEYS_PATH
from validator.registry.snapshot import Analysis

# One wording everywhere (ORV606/ORV609, docs/pull-requests.md, README): the boards are main's
# business. These checks run only under `orv check --boards`, which main's boards workflow runs.
BOARDS_HINT = (
    "on main, run `orv boards` once the data is committed and commit boards/ "
    "on its own (the boards workflow does this after every merge); on a pull "
    "request branch, leave them as main has them; never edit them by hand (docs/boards.md)"
)


STALE_SHOWN = 20  # ORV701 names at most this many stale files, then says how many more
STAMPED = (BOARDS_PATH,)  # the files that carry the git stamp (meta)


@dataclass(frozen=True)
class _Comparison:
    """Committed boards vs a regeneration, file by file, computed once per analysis for ORV701 and ORV702."""

    problem: Finding | None = None  # cannot compare / not generated yet
    stale: tuple[Finding, ...] = ()  # one per file that differs beyond the index's git stamp
    stamp_behind: tuple[str, str] | None = None  # (committed source_commit, fresh one)


def compare(analysis: Analysis) -> _Comparison:
    """The comparison, made once per snapshot (ORV701 and ORV702 share it)."""
    return analysis.snapshot.memo("boards-comparison", lambda: _compare(analysis))


def _compare(analysis: Analysis) -> _Comparison:
    root = analysis.snapshot.root
    committed = committed_files(root)
    if not committed:
        if analysis.snapshot.recipes:
            return _Comparison(
                Finding(
                    BOARDS_PATH,
                    f"{BOARDS_PATH} has not been generated yet",
                    BOARDS_HINT,
                    line=1,
                    col=1,
                    severity=Severity.WARNING,
                )
            )
        return _Comparison()
    try:
        stamp = git_stamp(root)
        document = fresh_document(analysis, stamp)  # built and validated once, whatever the outcome
        fresh = split_files(document)
    except HistoryError as exc:
        return _Comparison(
            Finding(BOARDS_PATH, f"cannot regenerate the boards to compare: {exc.message}", exc.hint, line=1, col=1)
        )
    differing = sorted(path for path in set(committed) | set(fresh) if committed.get(path) != fresh.get(path))
    if not differing:
        return _Comparison()
    # Committing data and its boards together stamps the index and the whole document with the previous
    # data commit (a commit cannot name itself). Same rows under an older stamp is ORV702, not ORV701.
    if BOARDS_PATH in differing and set(differing) <= set(STAMPED):
        old_stamp = committed_stamp(committed[BOARDS_PATH])
        if old_stamp is not None and old_stamp != stamp:
            old = restamped(document, old_stamp)
            if all(committed.get(path) == old[path] for path in differing):
                return _Comparison(stamp_behind=(str(old_stamp.source_commit), str(stamp.source_commit)))
    findings = [_stale(path, committed.get(path), fresh.get(path)) for path in differing[:STALE_SHOWN]]
    if len(differing) > STALE_SHOWN:
        more = len(differing) - STALE_SHOWN
        findings.append(
            Finding(
                BOARDS_PATH,
                f"{more} more generated boards file(s) differ from a fresh regeneration",
                BOARDS_HINT,
                line=1,
                col=1,
            )
        )
    return _Comparison(stale=tuple(findings))


def _stale(path: str, committed: bytes | None, fresh: bytes | None) -> Finding:
    """ORV701's finding for one generated boards file that differs from its regeneration."""
    if fresh is None and path == DOCUMENT_PATH:
        return Finding(
            path,
            f"{path} is committed, but the combined boards document is published by the boards workflow, "
            "never committed (at 100,000 recipes it would pass GitHub's 100 MB limit); `orv boards` removes it",
            "on main, run `orv boards` and commit boards/ (the boards workflow does this after every merge); "
            "readers fetch the published document, or write it with `orv boards --combined OUT` (docs/boards.md)",
            line=1,
            col=1,
        )
    if fresh is None:
        return Finding(
            path,
            f"{path} names no model on the boards any more (left over); `orv boards` removes it",
            BOARDS_HINT,
            line=1,
            col=1,
        )
    if committed is None:
        return Finding(path, f"{path} is missing: a fresh regeneration writes it", BOARDS_HINT, line=1, col=1)
    difference = first_difference(committed, fresh)
    assert difference is not None
    line, old, new = difference
    return Finding(
        path,
        f"{path} differs from a fresh regeneration at line {line}: committed `{old}`, regenerated `{new}`",
        BOARDS_HINT,
        line=line,
        col=1,
    )


@check("ORV701", Severity.ERROR, "boards out of date", scope="boards")
def boards_out_of_date(analysis: Analysis) -> Iterator[Finding]:
    """A generated boards file differs from a fresh regeneration.

    The boards are generated by `orv boards` from the recipes, run files and catalog; they are
    never edited by hand. They are one document stored split: boards/index.json, per model a manifest and
    its chunks of rows under boards/models/ and its standings under boards/standings/ (docs/boards.md). The combined document
    readers fetch is published by the boards workflow (`orv boards --combined OUT`), never committed: a
    boards/boards.json in the tree is left over. Each file is compared on its own: a finding names each file that
    differs, at its first differing line; a file that is missing, or a model file left over for a
    model no longer on the boards, is stale too. Stale boards are
    main's business: this check runs only with `orv check --boards` (main's boards workflow runs
    it after regenerating), never in a contributor's plain `orv check` or with `--base`. On main:
    run `orv boards` and commit boards/ on its own. On a pull request branch: leave the
    files as main has them (a pull request that changes them is ORV609). `orv boards --check` runs the
    same comparison and exits 1 when a file is stale.

    A registry that has recipes but no boards at all yet gets this code as a warning: not
    publishing boards is allowed (a fork, a scratch registry), publishing stale ones is not.
    It is an error when git history cannot be read (a shallow clone): the comparison cannot be
    made, so it fails closed; fetch the full history.
    """
    result = compare(analysis)
    if result.problem is not None:
        yield result.problem
    yield from result.stale


@check("ORV702", Severity.WARNING, "boards stamped with an older data commit", scope="boards")
def boards_stamp_behind(analysis: Analysis) -> Iterator[Finding]:
    """boards/index.json has every row right but names an older commit as its source.

    This is what committing data and its regenerated boards in one commit gives: the boards can
    only name the data commit before it (`meta.source_commit`, `meta.updated_at`, kept in the index).
    Nothing a reader sees is wrong, so it is a warning; run `orv boards` after the commit (the workflow
    on main does) to refresh the stamp.
    """
    result = compare(analysis)
    if result.stamp_behind is not None:
        old, new = result.stamp_behind
        yield Finding(
            BOARDS_PATH,
            f"boards name data commit {old[:12]}; the newest data commit is {new[:12]}",
            BOARDS_HINT,
            line=1,
            col=1,
        )


@check("ORV703", Severity.ERROR, "key file out of date", scope="boards")
def keys_out_of_date(analysis: Analysis) -> Iterator[Finding]:
    """boards/keys.json or a shard under boards/keys/ differs from a fresh regeneration.

    `orv boards` writes the keys beside the boards: each recipe's and run file's relation keys by
    content (its id, configuration, claims, references, a run's sample fingerprint), named by the
    file's git blob id, inverted (key -> files) and sharded by key into boards/keys/<hex>.json,
    under a small header boards/keys.json stamped with the orv and catalog that made them and the
    git trees of recipes/ and runs/ they were made from. The pull-request gate reads the merge
    base's header and only the shards of the keys its change touches, to find which files a change
    can affect without loading the whole registry on a fresh runner (docs/pull-requests.md). An
    entry for a changed file, or keys stamped by another orv, are simply not used; a *wrong* entry
    for an unchanged file could hide a neighbour, so on main every key file must equal a
    regeneration: each file that differs is named at its first differing line, a missing shard and
    a left-over one too. Like the boards, they are main's business: run `orv boards` on main and
    commit boards/ (the boards workflow does). A registry without the header is allowed:
    pull-request checks then load every file to find the keys.
    """
    committed = keyfile.committed_files(analysis.snapshot.root)
    if KEYS_PATH not in committed:
        return
    # each fresh shard compared as it is made, then dropped (keyfile.KeyShards): only what differs is kept
    header, shards = keyfile.fresh_keys(analysis.snapshot)
    differences: dict[str, tuple[int, str, str] | None] = {}  # path -> first_difference; None: missing, left over
    made = set()
    for path, new in itertools.chain([(KEYS_PATH, header)], shards.made()):
        made.add(path)
        old = committed.get(path)
        if old != new:
            differences[path] = None if old is None else first_difference(old, new)
    for path in committed:
        if path not in made and committed.get(path) is not None:  # (one removed since the listing: gone)
            differences[path] = None
    differing = sorted(differences)
    for path in differing[:STALE_SHOWN]:
        difference = differences[path]
        if path not in made:
            yield Finding(
                path,
                f"{path} is left over: a fresh regeneration writes no such key shard; `orv boards` removes it",
                BOARDS_HINT,
                line=1,
                col=1,
            )
        elif difference is None:
            yield Finding(path, f"{path} is missing: a fresh regeneration writes it", BOARDS_HINT, line=1, col=1)
        else:
            line, was, now = difference
            yield Finding(
                path,
                f"{path} differs from a fresh regeneration at line {line}: committed `{was}`, regenerated `{now}`",
                BOARDS_HINT,
                line=line,
                col=1,
            )
    if len(differing) > STALE_SHOWN:
        yield Finding(
            KEYS_PATH,
            f"{len(differing) - STALE_SHOWN} more key file(s) differ from a fresh regeneration",
            BOARDS_HINT,
            line=1,
            col=1,
        )
