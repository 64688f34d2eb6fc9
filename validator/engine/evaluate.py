"""The one-way pipeline: discover -> load -> model -> check -> Evaluation. Prints nothing.

`evaluate(config)` is the only entry the CLI needs: a full check of the tree, or with --base a
pull-request check (validator/pr/: the change's neighbourhood when it can be sure, else the whole
tree with the merge base's findings subtracted). `analyse` is what `orv boards` needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from validator.checks import Keep, by_scope
from validator.checks.collect import Collector, stage
from validator.diagnostics import Diagnostic, Result
from validator.engine.evaluation import (
    BaseView,
    Config,
    Evaluation,
    apply_options,
    check_tree,
    check_waivers,
    run_registry_checks,
    sorted_unique,
    waiver_notes,
)
from validator.errors import UsageError
from validator.evidence.tiers import tier_reads
from validator.files.atomic import settle
from validator.git.sparse import WHOLE_CHECKOUT, refuse_sparse, widen
from validator.load.cache import Store, open_store
from validator.load.pipeline import Loaded, assemble_loaded
from validator.pr.base import introduced
from validator.pr.change import Change, compare
from validator.pr.incremental import evaluate_change
from validator.pr.neighbourhood import index_keys
from validator.registry.snapshot import Analysis, Snapshot

__all__ = ["Analysis", "Config", "Evaluation", "analyse", "evaluate", "evaluate_loaded", "run"]


def analyse(
    root: str,
    jobs: int = 1,
    cache: bool = False,
    for_tiers: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Analysis:
    """Load the registry and run its checks once (no PR or boards scope). `for_tiers`: only the
    checks a tier reads (tiers.tier_reads), what `orv boards` needs; `orv check` reports the others
    (and results loaded so are not cached: the cache holds complete results only). `progress(done,
    total)` is told as files load."""
    out = Collector()
    snapshot = _check_everything(root, out, jobs, cache, keep=tier_reads if for_tiers else None, progress=progress)
    return Analysis(snapshot, tuple(out.diagnostics))


# why a pull request is checked whole (validator/pr/incremental.py returns None for it)
BEARS_ON_EVERY_FILE = "catalog/, measurers/ or a submodule, which bear on every file's judgement"


def run(config: Config) -> Result:
    return evaluate(config).result


def evaluate(config: Config) -> Evaluation:
    """Check the registry; with --base, judge the pull request only for what it introduces."""
    check_waivers(config.waive)
    settle(config.root)  # a killed orv's committed writes finished first (validator/files/atomic.py)
    if config.base is not None and config.neighbourhood:
        evaluation = evaluate_change(config)
        if evaluation is not None:
            return evaluation
    if config.base is None:
        refuse_sparse(
            config.root,
            "`orv check` without --base",
            "Check what your branch changes with `orv check --base origin/main` (it reads the other "
            f"files it needs from git), or first: {WHOLE_CHECKOUT}.",
        )
    elif config.widen:
        widen(config.root, f"the change touches {BEARS_ON_EVERY_FILE}")
    else:
        refuse_sparse(
            config.root,
            f"`orv check --base {config.base}` for this change (it touches {BEARS_ON_EVERY_FILE})",
            f"First: {WHOLE_CHECKOUT}, then check again (or pass --widen, as the pull-request gate does).",
        )
    out = Collector()
    snapshot = _check_everything(config.root, out, config.jobs, config.cache, config)
    return _conclude(config, snapshot, out)


def evaluate_loaded(
    config: Config, loaded: Loaded, judged: Callable[[Snapshot], tuple[tuple[str, str, str], ...]] | None = None
) -> Evaluation:
    """The full check of a tree whose per-file work was done elsewhere (`orv merge-results` puts the
    shards' results together, validator/engine/shard.py): the same registry and boards checks, the same options.
    `judged`: ORV304's verdicts from the runners its pairs were split over (engine/judging.py `verdicts`), read
    off the assembled snapshot before any check runs (it refuses files that are not this merge's parts)."""
    if config.base is not None:
        raise UsageError("merged shard results are a full check; a pull request (--base) is checked in one process")
    check_waivers(config.waive)
    out = Collector()
    snapshot = replace(assemble_loaded(config.root, loaded, out), jobs=config.jobs)
    if judged is not None:
        with stage("ORV304's split judging: the judged files checked, their copies judged again"):
            snapshot = replace(snapshot, judged=judged(snapshot))
    snapshot = run_registry_checks(snapshot, out)
    return _conclude(config, snapshot, out)


def _conclude(config: Config, snapshot: Snapshot, out: Collector) -> Evaluation:
    """Pull-request and boards checks on a checked snapshot, then waivers and path filters."""
    documents = dict(snapshot.documents)
    change: Change | None = None
    if config.base is not None:
        with stage("pull-request checks"):
            change = compare(snapshot, config.base)
            for check in by_scope("pr"):
                assert check.func is not None
                out.findings(check, check.func(change), documents)
    if not config.skip_boards and config.base is None:
        with stage("boards checks"):
            analysis = Analysis(snapshot, tuple(out.diagnostics))
            for check in by_scope("boards"):
                assert check.func is not None
                out.findings(check, check.func(analysis), documents)
    found = sorted_unique(out.diagnostics)
    kept: list[Diagnostic] = list(found)
    base: BaseView | None = None
    pre_existing: list[Diagnostic] = []
    if change is not None:
        with stage("pull request: the merge base checked, its findings subtracted"):
            kept, base, pre_existing = introduced(found, change)
    kept, waived = apply_options(config, kept)
    result = Result(tuple(kept), files_checked=len(snapshot.files), notes=waiver_notes(waived, pre_existing))
    return Evaluation(result, snapshot, found, change, base, tuple(waived), tuple(pre_existing))


def _check_everything(
    root: str,
    out: Collector,
    jobs: int,
    cache: bool,
    config: Config | None = None,
    keep: Keep | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Snapshot:
    """Every file of the tree, checked; with the cache, each committed file's relation keys are
    remembered for later pull-request checks (validator/pr/neighbourhood.py). The keys are computed
    where each file loads when something will read them: the cache's index, or `orv boards`
    (`keep`, the tier checks), which publishes them in boards/keys.json."""
    store = open_store(root) if cache else Store()
    snapshot, loaded = check_tree(
        root, out, jobs, config.progress if config else progress, store, keep, keys=cache or keep is not None
    )
    if cache:
        index_keys(store, loaded.blobs, loaded.results)
    return snapshot
