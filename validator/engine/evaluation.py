"""One evaluation's shared parts: its options, its outcome, and the steps both the full and the pull-request modes take."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from validator.checks import Keep, all_checks, by_scope
from validator.checks.collect import Collector, stage
from validator.diagnostics import Diagnostic, Result
from validator.errors import UsageError
from validator.load.cache import Store
from validator.load.pipeline import Loaded, assemble_loaded, load_tree
from validator.pr.change import Change
from validator.registry.snapshot import Snapshot


@dataclass(frozen=True)
class Config:
    root: str
    paths: tuple[str, ...] = ()  # report only findings in these repository-relative paths/prefixes
    base: str | None = None  # git ref for the pull-request rules
    waive: tuple[str, ...] = ()  # codes a maintainer waived for this PR
    skip_boards: bool = False
    jobs: int = 1  # processes for loading files; the CLI passes the number of usable cores
    cache: bool = False  # reuse per-file results by git blob id (validator/load/cache.py); the CLI's default
    # with --base, check only the change's neighbourhood (validator/pr/incremental.py); False checks
    # every file, which the job summary's board delta needs
    neighbourhood: bool = True
    # with --base in a sparse checkout, when the change needs every file (catalog, measurers, a
    # submodule): check every file out (`git sparse-checkout disable`) instead of refusing
    widen: bool = False
    progress: Callable[[int, int], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class BaseView:
    """The registry as it was at the merge base, checked by the same code (pull-request mode)."""

    snapshot: Snapshot
    diagnostics: tuple[Diagnostic, ...]


@dataclass(frozen=True)
class Evaluation:
    """One check and what the pull-request summary needs besides the Result."""

    result: Result
    snapshot: Snapshot
    found: tuple[Diagnostic, ...]  # every finding on the working tree, before PR filtering and waivers
    change: Change | None = None  # with --base
    base: BaseView | None = None  # computed with --base when needed (pre-existing findings, summary)
    waived: tuple[Diagnostic, ...] = ()
    pre_existing: tuple[Diagnostic, ...] = ()  # findings already on the base branch, not counted
    partial: bool = False  # snapshot, found and base cover only the change's neighbourhood


def check_waivers(codes: tuple[str, ...]) -> None:
    known = all_checks()
    for code in codes:
        if code not in known:
            raise UsageError(f"--waive {code}: no such check code (`orv explain all` lists them)")
        if code == "ORV900":
            raise UsageError("ORV900 cannot be waived: it means a check did not complete, so nothing was checked")


def run_registry_checks(snapshot: Snapshot, out: Collector, keep: Keep | None = None) -> Snapshot:
    """The registry-scope checks (those `keep` accepts, when given)."""
    documents = dict(snapshot.documents)
    with stage("registry checks"):
        for check in by_scope("registry", keep):
            assert check.func is not None
            out.findings(check, check.func(snapshot), documents)
    return snapshot


def check_tree(
    root: str,
    out: Collector,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    store: Store = Store(),
    keep: Keep | None = None,
    keys: bool = False,
) -> tuple[Snapshot, Loaded]:
    """Load the tree at root and run the run-file and registry checks on it (those `keep` accepts,
    when given); `keys`: each entry carries its relation keys, computed where it loads."""
    with stage("load"):
        loaded = load_tree(root, jobs, progress, store, keep=keep, keys=keys)
    with stage("snapshot: assemble"):
        snapshot = replace(assemble_loaded(root, loaded, out), jobs=jobs)
    return run_registry_checks(snapshot, out, keep), loaded


def apply_options(config: Config, kept: list[Diagnostic]) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(what is reported, what a waiver took out): --waive codes, then the PATHS filter."""
    waived = [d for d in kept if d.code in config.waive]
    kept = [d for d in kept if d.code not in config.waive]
    if config.paths:
        kept = [d for d in kept if _in_paths(d.path, config.paths)]
    return kept, waived


def sorted_unique(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(sorted(_dedupe(diagnostics), key=Diagnostic.sort_key))


def waiver_notes(waived: list[Diagnostic], pre_existing: list[Diagnostic]) -> tuple[str, ...]:
    notes = tuple(
        f"{code} waived for this pull request: {n} finding(s) not counted"
        for code, n in sorted(Counter(d.code for d in waived).items())
    )
    if pre_existing:
        notes += (f"{len(pre_existing)} finding(s) already on the base branch not counted",)
    return notes


def _in_paths(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(p in (".", "") or path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def _dedupe(diagnostics: Iterable[Diagnostic]) -> Iterator[Diagnostic]:
    seen = set()
    for d in diagnostics:
        if d not in seen:
            seen.add(d)
            yield d
