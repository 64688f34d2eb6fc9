"""Pull-request mode that checks the change's neighbourhood instead of the whole registry.

A pull request fails only for what it introduces (base.py), and only the files related to the
change can be judged differently before and after it (neighbourhood.py says why). So this path:

  1. asks git what changed since the merge base, and for the base tree's file list and blob ids;
  2. finds the relation keys of the files the change reaches — in the local key index (cache.py),
     keyed by path and blob id, else in the merge base's published keys (boards/keys.json and the
     shards of boards/keys/ the change's keys fall into: boards/keyfile.py, published.py; what makes
     a fresh runner's check proportional to the change), else by loading the file once (and adding
     it to the local index); keys a file has by its path are found by a search of the base's
     listing, never computed for every file (_PathKeyHolders);
  3. loads the neighbourhood — changed files in both versions plus the files sharing keys with
     them — and runs the same registry checks on it as it is and as it was;
  4. counts the findings the first has and the second lacks, plus the pull-request rules.

Nothing here decides a finding: the checks are the same functions a full check runs, on a smaller
snapshot. When this path cannot be sure of that — the catalog changed (every file's judgement may
move), or a submodule is involved (its files are not in git's list) — it returns None and the
caller checks everything.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from itertools import accumulate

from validator.boards.keyfile import KeysUnusable
from validator.checks import Keep, by_scope
from validator.checks.collect import Collector, stage
from validator.diagnostics import Result
from validator.engine.evaluation import (
    BaseView,
    Config,
    Evaluation,
    apply_options,
    run_registry_checks,
    sorted_unique,
    waiver_notes,
)
from validator.git.diff import MODE_SUBMODULE, MODE_SYMLINK, BaseTree, Diff, FileChange, diff
from validator.git.sparse import materialize
from validator.hashing import run_path
from validator.load.cache import KeyIndex, Store, catalog_references, derivation_key, open_index, open_store
from validator.load.documents import Document
from validator.load.pipeline import (
    LOADABLE,
    FileResult,
    assemble,
    load_all,
    load_catalog,
)
from validator.pr.base import load_at_base, subtract_base
from validator.pr.change import on_snapshot
from validator.pr.published import PublishedKeys, open_published
from validator.registry.layout import CATALOG_FILES, KEYS_DIR, REGISTRY_DIRS, SIGNERS_PATH, classify, is_generated
from validator.registry.relations import Keys, grouping, keys_of, path_keys, ties
from validator.registry.snapshot import Catalog, Snapshot


def evaluate_change(
    config: Config,
    data_only: bool = False,
    keep: Keep | None = None,
    rows_related_by: frozenset[str] = frozenset(),
    keys_at: str | None = None,
) -> Evaluation | None:
    """The Evaluation of a pull request from its neighbourhood, or None when everything must be checked.
    `data_only` leaves the generated files (boards/) out of the change: a merge's boards update
    (boards/update.py) compares the data since the commit the boards were made from, and the boards
    commit after it is no part of that. `keep`: only the checks it accepts run (tiers.tier_reads for the
    boards update), and the neighbourhood follows only the relation keys those checks join files by
    (`related_by`) and the key kinds in `rows_related_by` (what the caller itself reads across files):
    a run's sample sketch keys (ORV304) reach a third of the registry, and no tier reads ORV304. `keys_at`:
    the revision whose published keys (boards/keys.json) are used instead of the merge base's: a merge's
    boards update takes HEAD's, made from the base it diffs with, which holds none of its own."""
    assert config.base is not None
    with stage("pull request: git diff"):
        change = diff(config.root, config.base)  # a GitError is a UsageError: exit 2 with its message
    if data_only:
        change = replace(change, files=tuple(c for c in change.files if not is_generated(c.path)))
    changed = {c.path: c for c in change.files if c.path.split("/", 1)[0] in REGISTRY_DIRS}
    # the catalog and the measurers file bear on every file's judgement: check everything
    if any(path.startswith(("catalog/", "measurers/")) for path in changed) or any(
        MODE_SUBMODULE in (c.base_mode, c.head_mode) for c in change.files
    ):
        return None
    with stage("pull request: the merge base's listing"):
        # The key shards are read by name (published.py) and no check reads them: unless the change touches
        # one (case-folded, as a path key compares), they stay out of the listing, where at 10,000 run files
        # they were 65,536 of 87,153 paths and every pass over the listing paid for them.
        touched = any(c.path.casefold().startswith(KEYS_DIR + "/") for c in change.files)
        base_files = change.base.listing(REGISTRY_DIRS, leave_out=None if touched else KEYS_DIR)
    if any(mode == MODE_SUBMODULE for mode, _ in base_files.values()):
        return None
    head_files = {rel for rel in base_files if rel not in changed}
    head_files |= {rel for rel, c in changed.items() if c.present_at_head}

    root = config.root
    # In a sparse checkout, what is read from the working tree is first made part of it (git fetches
    # the blobs a partial clone lacks): the changed files, the catalog, the measurers file and the
    # runs the catalog names as references (derivation_key reads whether they are present), then
    # below the files whose keys are unknown and the neighbourhood. Elsewhere materialize does nothing.
    materialize(
        root,
        sorted(
            {rel for rel, c in changed.items() if c.present_at_head}
            | (head_files & (set(CATALOG_FILES) | {SIGNERS_PATH}))
        ),
    )
    materialize(root, sorted(catalog_references(root) & head_files))
    store = open_store(root) if config.cache else Store()
    catalog_out = Collector()
    documents: dict[str, Document] = {}
    catalog, catalog_ok = load_catalog(root, set(CATALOG_FILES) & head_files, catalog_out, documents, store)
    loader = _Loader(root, catalog, config.jobs, config.progress, keep)
    index = open_index(store)
    follows = None if keep is None else followed_keys(keep) | rows_related_by

    with stage("pull request: the changed files loaded (both sides)"):
        loader.load_changed(changed, change)
    head_keys = {rel: _keys(rel, loader.head.get(rel)) for rel, c in changed.items() if c.present_at_head}
    with stage("pull request: the neighbourhood (published keys, key index)"):
        holder = None if keys_at is None else BaseTree(change.base.commit.repo.commit(keys_at), change.base.prefix)
        published = open_published(root, change.base, change.base_commit, derivation_key(root), base_files, holder)
        try:
            near = _BaseKeys(base_files, changed, index, published, loader).neighbourhood(head_keys, follows)
        except KeysUnusable:  # a malformed shard on the base: find every key by loading, as without keys
            near = _BaseKeys(base_files, changed, index, None, loader).neighbourhood(head_keys, follows)
    # the measurers file decides every signature (ORV222, T3): it is part of any neighbourhood
    near |= {SIGNERS_PATH} & (head_files | set(base_files))
    # Every recipe's quality status is judged against its model's reference run (docs/quality.md):
    # the catalog is unchanged here, so those few runs are loaded as they are on both sides.
    near |= {
        run_path(ref.split(":", 1)[-1]) for spec in catalog.models.values() for ref in spec.quality_reference.values()
    } & set(base_files)
    materialize(root, sorted(near & head_files))  # the snapshot's files, .sig companions included
    with stage("pull request: the neighbourhood loaded"):
        loader.load_unchanged(
            [rel for rel in sorted(near) if rel not in changed and _loadable(rel, base_files[rel][0])]
        )
    index.save()

    head_out, base_out = Collector(), Collector()
    pairs_with = frozenset(changed)
    head = _snapshot(
        root,
        sorted(near & head_files),
        catalog,
        catalog_ok,
        documents,
        catalog_out,
        loader.head,
        head_out,
        keep,
        pairs_with,
    )
    base = _snapshot(
        root,
        sorted(near & set(base_files)),
        catalog,
        catalog_ok,
        documents,
        catalog_out,
        loader.base,
        base_out,
        keep,
        pairs_with,
    )
    pr_change = on_snapshot(change, head)
    head_documents = dict(head.documents)
    for check in by_scope("pr", keep):
        assert check.func is not None
        head_out.findings(check, check.func(pr_change), head_documents)
    found = sorted_unique(head_out.diagnostics)
    base_found = sorted_unique(base_out.diagnostics)
    kept, pre_existing = subtract_base(found, base_found, pr_change.head_paths)
    kept, waived = apply_options(config, kept)
    notes = waiver_notes(waived, pre_existing)
    notes += (
        f"pull-request mode: checked the {len(near & head_files):,} file(s) related to the change, of "
        f"{len(head_files):,}; the others are as on the merge base (docs/pull-requests.md)",
    )
    result = Result(tuple(kept), files_checked=len(near & head_files), notes=notes)
    return Evaluation(
        result, head, found, pr_change, BaseView(base, base_found), tuple(waived), tuple(pre_existing), partial=True
    )


def followed_keys(keep: Keep) -> frozenset[str]:
    """The relation key kinds ("r", "s", ...: relations.py) the registry checks `keep` accepts join files by."""
    return frozenset(c.related_by for c in by_scope("registry", keep) if c.related_by)


def _loadable(rel: str, mode: int) -> bool:
    return mode != MODE_SYMLINK and classify(rel) in LOADABLE


def _keys(rel: str, result: FileResult | None) -> Keys:
    return keys_of(rel, result[0] if result else None)


class _Loader:
    """Per-file results of both sides: unchanged files are loaded once and shared."""

    def __init__(
        self,
        root: str,
        catalog: Catalog,
        jobs: int,
        progress: Callable[[int, int], None] | None = None,
        keep: Keep | None = None,
    ) -> None:
        self.root, self.catalog, self.jobs, self.progress, self.keep = root, catalog, jobs, progress, keep
        self.head: dict[str, FileResult] = {}
        self.base: dict[str, FileResult] = {}

    def load_unchanged(self, rels: list[str]) -> None:
        todo = [rel for rel in rels if rel not in self.head]
        for rel, result in zip(
            todo, load_all(self.root, todo, self.catalog, self.jobs, self.progress, self.keep, keys=True)
        ):  # their keys are what is wanted
            self.head[rel] = self.base[rel] = result

    def load_changed(self, changed: dict[str, FileChange], change: Diff) -> None:
        at_head = [rel for rel, c in changed.items() if c.present_at_head and _loadable(rel, c.head_mode)]
        self.head.update(zip(at_head, load_all(self.root, at_head, self.catalog, 1, None, self.keep)))
        self.base.update(load_at_base(change, changed, self.catalog, self.keep))


class _BaseKeys:
    """Every base file's keys, computed only for the files the neighbourhood reaches.

    Content keys (a recipe's or run file's, relations.content_keys) come from the local index, else from
    the base's published keys (published.py: looked up in the shards of the keys asked for), else from
    loading the file (and remembering them). With published keys only the files they do not cover are
    looked at up front: the changed ones and those changed since the keys were made; without, every
    content-keyed base file is. Path keys (relations.path_keys) are found through _PathKeyHolders, never
    computed for every base file: at 100,000 run files that pass alone took seconds (issue 32)."""

    def __init__(
        self,
        base_files: dict[str, tuple[int, str]],
        changed: dict[str, FileChange],
        index: KeyIndex,
        published: PublishedKeys | None,
        loader: _Loader,
    ) -> None:
        self.base_files, self.changed, self.published, self.loader = base_files, changed, published, loader
        self.paths = _PathKeyHolders(base_files)
        self.known: dict[str, Keys] = {}  # all of a file's keys, for the files looked at so far
        self._by_blob: dict[str, list[str]] | None = None  # every base file by blob id, when first asked
        looked_at = base_files.keys() if published is None else (set(changed) | published.stale) & base_files.keys()
        missing: list[str] = []
        for rel in sorted(looked_at):
            mode, blob = base_files[rel]
            if rel in changed:
                self.known[rel] = _keys(rel, loader.base.get(rel))
            elif _loadable(
                rel, mode
            ):  # recipes and run files have keys by content (a run's sample fingerprint, ORV304)
                found = index.get(rel, blob)
                if found is not None:
                    self.known[rel] = found
                else:
                    missing.append(rel)
        materialize(loader.root, missing)
        loader.load_unchanged(missing)
        for rel in missing:
            self.known[rel] = _keys(rel, loader.head[rel])
            index.put(rel, base_files[rel][1], loader.head[rel][0])
        self.by_key: dict[str, set[str]] = {}  # the content and path keys of the files looked at
        for rel, keys in self.known.items():
            for key in keys:
                self.by_key.setdefault(key, set()).add(rel)

    def neighbourhood(self, head: dict[str, Keys], follows: frozenset[str] | None = None) -> set[str]:
        """Changed files plus two hops over shared keys (the second over grouping keys), on both sides of the
        change (neighbourhood.py says why); the same set neighbourhood.neighbourhood gives from every base file's keys. `follows`:
        only keys of these kinds (None: every key)."""
        changed = set(self.changed)

        def keys_of(rels: set[str]) -> set[str]:
            self._look_at(rels)
            found = {key for rel in rels for side in (self.known, head) for key in side.get(rel, ())}
            return found if follows is None else {key for key in found if key.split(":", 1)[0] in follows}

        def sharing(keys: set[str]) -> set[str]:
            held: dict[str, set[str]] = {}  # file -> the keys it holds of these (relations.ties judges them)
            for key in keys:
                for rel in self.by_key.get(key, ()):
                    held.setdefault(rel, set()).add(key)
            if self.published is not None:
                for rel, listed in self.published.holders(sorted(keys), self.covered_by_blob).items():
                    held.setdefault(rel, set()).update(listed)
            found = {rel for rel, shared in held.items() if ties(shared)} | self.paths.holders(keys)
            return found | {rel for rel in changed if ties(keys.intersection(head.get(rel, ())))}

        near = changed | sharing(keys_of(changed))
        return near | sharing(grouping(keys_of(near)))

    def covers(self, rel: str) -> bool:
        """Does the base's published index hold this unchanged file's content keys?"""
        if self.published is None or rel in self.changed or rel not in self.base_files:
            return False
        mode, blob = self.base_files[rel]
        return self.published.covers(rel, mode, blob)

    def covered_by_blob(self, blob: str) -> list[str]:
        """The covered base files holding exactly these bytes (a shard's entry names a blob id)."""
        if self._by_blob is None:
            self._by_blob = {}
            for rel, (_mode, object_id) in self.base_files.items():
                self._by_blob.setdefault(object_id, []).append(rel)
        return [rel for rel in self._by_blob.get(blob, ()) if self.covers(rel)]

    def _look_at(self, rels: set[str]) -> None:
        """All keys of each base file in `rels` not looked at yet: a covered one is loaded (it is part of the
        neighbourhood, so it is loaded anyway; the shards list files by key, not keys by file); any other
        has only its path keys."""
        todo = sorted(rel for rel in rels if rel not in self.known and rel in self.base_files)
        covered = [rel for rel in todo if self.covers(rel)]
        materialize(self.loader.root, covered)
        self.loader.load_unchanged(covered)
        for rel in todo:
            self.known[rel] = _keys(rel, self.loader.head[rel]) if rel in self.loader.head else path_keys(rel)


class _PathKeyHolders:
    """The base files holding any of some path keys (relations.path_keys: "f:" the case-folded path,
    "r:" a run's digest from its name, "i:" a recipe's file-name stem), without computing every file's.

    A path key's value is part of its holder's case-folded path, so one substring search of the
    listing (joined into one string, searched at C speed) finds a superset of the holders, and path_keys
    confirms each candidate: the same answer as computing every file's keys, in milliseconds."""

    PREFIXES = ("f:", "r:", "i:")

    def __init__(self, paths: Iterable[str]) -> None:
        self._source = paths
        self._paths: list[str] = []
        self._text = ""
        self._starts: list[int] = []

    def holders(self, keys: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for key in keys:
            if key[:2] in self.PREFIXES:
                found.update(rel for rel in self._containing(key[2:].casefold()) if key in path_keys(rel))
        return found

    def _containing(self, needle: str) -> Iterator[str]:
        if not self._starts:
            self._paths = list(self._source)
            folded = [rel.casefold() for rel in self._paths]
            self._text = "\n".join(folded)
            self._starts = [0, *accumulate(len(rel) + 1 for rel in folded)]
        if not needle:
            yield from self._paths
            return
        at = self._text.find(needle)
        while at >= 0:
            line = bisect_right(self._starts, at) - 1
            yield self._paths[line]
            at = self._text.find(needle, self._starts[line + 1])


def _snapshot(
    root: str,
    files: list[str],
    catalog: Catalog,
    catalog_ok: bool,
    documents: dict[str, Document],
    catalog_out: Collector,
    results: dict[str, FileResult],
    out: Collector,
    keep: Keep | None = None,
    pairs_with: frozenset[str] | None = None,
) -> Snapshot:
    wanted = set(files)
    picked = {rel: result for rel, result in results.items() if rel in wanted}
    snapshot = assemble(root, files, catalog, catalog_ok, dict(documents), tuple(catalog_out.diagnostics), picked, out)
    return run_registry_checks(replace(snapshot, pairs_with=pairs_with), out, keep)
