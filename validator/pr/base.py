"""The merge base, checked by the same code, and what a pull request introduces beyond it.

A pull request fails only for what it introduces. Cross-file checks still see the whole registry
(a new recipe that duplicates an old one is reported wherever the check reports it), so "what it
introduces" is decided by content, not by path: a finding counts unless the same finding (code,
file, message; not the line, which an edit above it moves) is also reported on the merge base,
checked by the same code. PR rules (ORV6xx) and ORV900 always count. The base is only checked
when some finding is on a file the pull request did not add, so a PR that only adds files costs
one check, not two.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping

from validator.checks import Keep, all_checks, by_scope
from validator.checks.collect import Collector
from validator.diagnostics import Diagnostic
from validator.engine.evaluation import (
    BaseView,
    check_tree,
    run_registry_checks,
    sorted_unique,
)
from validator.git.diff import MODE_SYMLINK, Diff, FileChange
from validator.load.pipeline import LOADABLE, FileResult, assemble, load_all
from validator.pr.change import Change
from validator.registry.layout import REGISTRY_DIRS, classify
from validator.registry.snapshot import Catalog, Snapshot


def introduced(
    found: tuple[Diagnostic, ...], change: Change
) -> tuple[list[Diagnostic], BaseView | None, list[Diagnostic]]:
    """(what counts, the base view if one was needed, what was already on the base)."""
    pr_codes = {c.code for c in by_scope("pr")}
    if all(d.code in pr_codes or d.code == "ORV900" or d.path in change.added_paths for d in found):
        kept, _ = subtract_base(found, ())
        return kept, None, []
    base = check_base(change)
    kept, pre_existing = subtract_base(found, base.diagnostics, change.head_paths)
    return kept, base, pre_existing


def subtract_base(
    found: Iterable[Diagnostic], on_base: Iterable[Diagnostic], touched: frozenset[str] | None = None
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(what counts, what was already on the base): a finding counts unless the base has it too.

    Same finding = same code, file and message (not the line, which an edit above it moves).
    Pull-request rules and ORV900 always count; a PR rule replaces the findings it supersedes
    (`supersedes=` on its @check). With `touched` (the paths the pull request added or altered),
    findings land where the change is: see _untouched.
    """
    checks = all_checks()
    pr_codes = {c.code for c in checks.values() if c.scope == "pr"}
    found = list(found)
    replaced = {(old, d.path) for d in found if d.code in checks for old in checks[d.code].supersedes}
    remaining = Counter((d.code, d.path, d.message) for d in on_base)
    kept: list[Diagnostic] = []
    pre_existing: list[Diagnostic] = []
    for d in found:
        if (d.code, d.path) in replaced:
            continue
        key = (d.code, d.path, d.message)
        if d.code not in pr_codes and d.code != "ORV900" and remaining[key] > 0:
            remaining[key] -= 1
            pre_existing.append(d)
        else:
            kept.append(d)
    if touched is not None:
        kept, earlier = _untouched(kept, on_base, touched, pr_codes)
        pre_existing += earlier
    return kept, pre_existing


def _untouched(
    kept: list[Diagnostic], on_base: Iterable[Diagnostic], touched: frozenset[str], pr_codes: set[str]
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """A cross-file finding on a file the pull request did not touch is about that file's relation
    to a changed one. It does not count if the base already had that code on that file (its
    wording may name the changed file), and a base file's silence does not become a new finding
    when the change's own file carries the same code. Otherwise it counts where it is, never lost."""
    on_base_codes = Counter((d.code, d.path) for d in on_base)
    on_touched = {d.code for d in kept if d.path in touched}
    out: list[Diagnostic] = []
    earlier: list[Diagnostic] = []
    for d in kept:
        if d.path in touched or d.code in pr_codes or d.code == "ORV900":
            out.append(d)
        elif on_base_codes[(d.code, d.path)] > 0:
            on_base_codes[(d.code, d.path)] -= 1
            earlier.append(d)
        elif d.code not in on_touched:
            out.append(d)
    return out, earlier


def check_base(change: Change) -> BaseView:
    """Check the merge base's registry with the same code.

    The base differs from the working tree only in the files the pull request changed, and a
    file's own results depend only on its bytes and the catalog. So, unless the catalog changed,
    the base is assembled from the working tree's results for unchanged files plus the base
    versions of the changed ones; only the registry checks run again. Otherwise the whole base
    tree is exported and checked.
    """
    head = change.snapshot
    changed = {c.path: c for c in change.files if c.path.split("/", 1)[0] in REGISTRY_DIRS}
    # the catalog and the measurers file bear on every file's judgement: check the whole base
    if any(path.startswith(("catalog/", "measurers/")) for path in changed) or not head.loaded:
        return check_base_exported(change)
    out = Collector()
    snapshot = _check_registry_from(head, change, changed, out)
    return BaseView(snapshot, sorted_unique(out.diagnostics))


def check_base_exported(change: Change) -> BaseView:
    """Check the merge base by exporting its whole registry tree to a temporary folder."""
    out = Collector()
    with tempfile.TemporaryDirectory(prefix="orv-base-") as tmp:
        change.base.export(tmp, REGISTRY_DIRS)
        for folder in ("recipes", "catalog"):
            os.makedirs(os.path.join(tmp, folder), exist_ok=True)
        snapshot, _ = check_tree(tmp, out)
    return BaseView(snapshot, sorted_unique(out.diagnostics))


def _check_registry_from(head: Snapshot, change: Change, changed: dict[str, FileChange], out: Collector) -> Snapshot:
    """The base snapshot from the head's per-file results and the base versions of changed files."""
    results: dict[str, FileResult] = {
        rel: (entry, list(found)) for rel, (entry, found) in head.loaded.items() if rel not in changed
    }
    results.update(load_at_base(change, changed, head.catalog))
    files = [rel for rel in head.files if rel not in changed] + [p for p, c in changed.items() if c.present_at_base]
    documents = {rel: doc for rel, doc in head.documents.items() if rel.startswith("catalog/")}
    return run_registry_checks(
        assemble(head.root, files, head.catalog, head.catalog_ok, documents, head.catalog_findings, results, out), out
    )


def load_at_base(
    change: Change | Diff, changed: Mapping[str, FileChange], catalog: Catalog, keep: Keep | None = None
) -> dict[str, FileResult]:
    """Per-file results of the merge-base versions of the changed files (written to a temporary folder);
    `keep`: only the run-file checks it accepts (load.pipeline.load_all)."""
    to_load = [
        path
        for path, c in changed.items()
        if c.present_at_base and c.base_mode != MODE_SYMLINK and classify(path) in LOADABLE
    ]
    with tempfile.TemporaryDirectory(prefix="orv-base-") as tmp:
        for path in to_load:
            full = os.path.join(tmp, *path.split("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as fh:
                fh.write(change.base.read(path) or b"")
        return dict(zip(to_load, load_all(tmp, to_load, catalog, 1, None, keep)))
