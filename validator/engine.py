"""The one-way pipeline: discover -> load -> model -> check -> Result. Prints nothing."""

from __future__ import annotations

import operator
import os
import traceback
from types import MappingProxyType
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from pydantic import ValidationError

from validator import schema as schemas
from validator.checks import Check, Finding, by_scope
from validator.cache import BlobCache, Store, open_cache, open_store
from validator.diagnostics import Diagnostic, Result, Severity
from validator.hashing import content_address, is_canonical
from validator.loading import (MAX_JSON_BYTES, Document, LoadError, decode_utf8, find_duplicate_json_keys,
                               load_yaml_document, locate_yaml_key, parse_json, read_bytes)
from validator.models import (GpuSpec, InferenceRecipe, ModelSpec, RunMeta, StartingPoint, TrainingRecipe,
                              WorkloadSpec)
from validator.recompute import RunFacts, inference_facts, training_facts
from validator.registry import (CATALOG_FILES, Catalog, RecipeEntry, RunEntry, Snapshot, classify, discover,
                                run_digest_from_path, strip_samples)


class UsageError(Exception):
    """Bad invocation (exit 2), not a finding."""


@dataclass(frozen=True)
class Config:
    root: str
    paths: tuple[str, ...] = ()  # report only findings in these repository-relative paths/prefixes
    base: str | None = None  # git ref for the pull-request rules
    waive: tuple[str, ...] = ()  # codes a maintainer waived for this PR
    skip_boards: bool = False
    jobs: int = 1  # processes for loading files; the CLI passes the number of usable cores
    cache: bool = False  # reuse per-file results by git blob id (validator/cache.py); the CLI's default
    # with --base, check only the change's neighbourhood (validator/incremental.py); False checks
    # every file, which the job summary's board delta needs
    neighbourhood: bool = True
    progress: Callable[[int, int], None] | None = field(default=None, compare=False)


@dataclass
class RunFile:
    """A run file while its bytes are in memory: what run-file checks see."""

    path: str
    raw: bytes
    doc: Document
    name_digest: str | None
    actual_digest: str
    canonical: bool
    meta: RunMeta | None
    facts: RunFacts | None


@dataclass
class _Collector:
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add(self, d: Diagnostic) -> None:
        self.diagnostics.append(d)

    def load_error(self, path: str, exc: LoadError) -> None:
        self.add(Diagnostic(exc.code, _severity(exc.code), path, exc.line, exc.col, exc.message, exc.hint))

    def schema_issues(self, doc: Document, kind: str, issues: Iterable[schemas.SchemaIssue]) -> None:
        for issue in issues:
            if issue.at_key and doc.path.endswith((".yaml", ".yml")):
                line, col = locate_yaml_key(doc.text, issue.path)
            else:
                line, col = doc.locate(issue.path)
            self.add(Diagnostic(issue.code, _severity(issue.code), doc.path, line, col, issue.message, issue.hint))

    def findings(self, check: Check, findings: Iterable[Finding], documents: dict[str, Document]) -> None:
        try:
            for f in findings:
                self.add(_to_diagnostic(check, f, documents))
        except Exception:  # noqa: BLE001 - a raising check is orv's bug, reported, never a traceback
            self.add(_internal_error(check.code))


def _severity(code: str) -> Severity:
    from validator.checks import all_checks

    entry = all_checks().get(code)
    return entry.severity if entry else Severity.ERROR


def _to_diagnostic(check: Check, f: Finding, documents: dict[str, Document]) -> Diagnostic:
    line, col = f.line, f.col
    if line is None:
        doc = documents.get(f.path)
        if doc is None:
            line, col = 1, 1
        elif f.key and doc.path.endswith((".yaml", ".yml")):
            line, col = locate_yaml_key(doc.text, f.at)
        else:
            line, col = doc.locate(f.at)
    return Diagnostic(check.code, f.severity or check.severity, f.path, line, col or 1, f.message, f.hint)


def _internal_error(code: str) -> Diagnostic:
    tb = traceback.format_exc(limit=3).strip().splitlines()
    where = tb[-3].strip() if len(tb) >= 3 else ""
    return Diagnostic("ORV900", Severity.ERROR, ".", 1, 1,
                      f"check {code} crashed: {tb[-1] if tb else 'unknown error'} ({where})",
                      "this is a bug in orv, not in your files; please report it with this message")


# --------------------------------------------------------------------------- loading stages


def _load_catalog(root: str, files: set[str], out: _Collector, documents: dict[str, Document]
                  ) -> tuple[Catalog, bool]:
    parts: dict[str, Any] = {}
    ok = True
    for rel, kind in CATALOG_FILES.items():
        if rel not in files:
            if kind != "catalog-starting-points":
                out.add(Diagnostic("ORV108", Severity.ERROR, rel, 1, 1, f"catalog file {rel} is missing",
                                   "restore it from the main branch; checks need the catalog"))
                ok = False
            continue
        try:
            doc = load_yaml_document(root, rel)
        except LoadError as exc:
            out.load_error(rel, exc)
            ok = False
            continue
        documents[rel] = doc
        issues = schemas.validate(kind, doc.data)
        if issues:
            out.schema_issues(doc, kind, issues)
            ok = False
            continue
        parts[kind] = doc.data
    rel_of = {kind: rel for rel, kind in CATALOG_FILES.items()}

    def typed(kind: str, at: tuple[Any, ...], model: Any, value: Any) -> Any:
        """The entry's model; a schema-valid entry the model refuses is reported, never raised."""
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            nonlocal ok
            ok = False
            error = exc.errors()[0]
            where = (*at, *error["loc"])
            doc = documents[rel_of[kind]]
            line, col = doc.locate(where)
            out.add(Diagnostic("ORV109", Severity.ERROR, doc.path, line, col,
                               f"`{'.'.join(map(str, where))}` cannot be used: {error['msg']}",
                               "write a plain number or text within the documented range"))
            return None

    def build(kind: str, key: str, model: Any) -> dict[str, Any]:
        raw = parts.get(kind, {}).get(key, {}) or {}
        built = {k: typed(kind, (key, k), model, v) for k, v in sorted(raw.items())}
        return {k: v for k, v in built.items() if v is not None}

    points = parts.get("catalog-starting-points", {}).get("starting_points", [])
    catalog = Catalog(
        hardware=build("catalog-hardware", "hardware", GpuSpec),
        models=build("catalog-models", "models", ModelSpec),
        workloads=build("catalog-workloads", "workloads", WorkloadSpec),
        starting_points=tuple(p for p in (typed("catalog-starting-points", ("starting_points", i), StartingPoint, v)
                                          for i, v in enumerate(points)) if p is not None),
    )
    return catalog, ok


def load_catalog(root: str, files: set[str], out: _Collector, documents: dict[str, Document],
                 store: Store = Store()) -> tuple[Catalog, bool]:
    """_load_catalog, remembered in .git/orv by the cache key (which hashes the catalog files and orv):
    loading runs jsonschema, ~0.2 s that a pull-request check would otherwise spend every time."""
    from validator.cache import remembered

    present = sorted(set(CATALOG_FILES) & files)
    # the key hashes the files' bytes, not whether they are links (a link is refused when loaded)
    shape = [(rel, os.path.islink(os.path.join(root, rel))) for rel in present]
    stored = remembered(store, "catalog")
    if isinstance(stored.value, tuple) and len(stored.value) == 5 and stored.value[0] == shape:
        _, catalog, ok, findings, docs = stored.value
        out.diagnostics.extend(findings)
        documents.update(docs)
        return catalog, ok
    mine, docs = _Collector(), {}
    catalog, ok = _load_catalog(root, set(present), mine, docs)
    stored.save((shape, catalog, ok, tuple(mine.diagnostics), docs))
    out.diagnostics.extend(mine.diagnostics)
    documents.update(docs)
    return catalog, ok


def _load_recipe(root: str, rel: str, kind: str, out: _Collector, documents: dict[str, Document]
                 ) -> RecipeEntry | None:
    try:
        doc = load_yaml_document(root, rel)
    except LoadError as exc:
        out.load_error(rel, exc)
        return None
    documents[rel] = doc
    if not isinstance(doc.data, dict):
        out.add(Diagnostic("ORV104", Severity.ERROR, rel, 1, 1, "a recipe must be a YAML mapping",
                           "start from a recipe in recipes/ and keep `id:`, `kind:` … at the top level"))
        return RecipeEntry(rel, doc, None)
    model = TrainingRecipe if kind == "recipe-training" else InferenceRecipe
    recipe = _validated(model, doc.data, kind, doc, out)
    return RecipeEntry(rel, doc, recipe)


def _has_null(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if item is None:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _validated(model: Any, data: Any, kind: str, doc: Document, out: _Collector) -> Any:
    """The typed model of data, or None after reporting why not.

    The strict pydantic model is tried first (compiled, ~50x faster than jsonschema); only a
    rejection runs jsonschema, whose errors word the findings. The models are at least as strict
    as the schemas (tests/test_schema_agreement.py), so "pydantic accepts" implies "schema accepts".
    """
    if not _has_null(data):  # no schema field allows null; pydantic's Optional would take it
        try:
            return model.model_validate(data)
        except ValidationError:
            pass
    issues = schemas.validate(kind, data) if kind != "run" else validate_run_data(data)
    if issues:
        out.schema_issues(doc, kind, issues)
        return None
    try:  # schema-valid but outside the strict model, e.g. 1.0 written for an integer
        return model.model_validate(data, strict=False)
    except ValidationError as exc:
        out.add(Diagnostic("ORV900", Severity.ERROR, doc.path, 1, 1,
                           f"schema accepted the file but the model did not: {exc.errors()[0]['msg']}",
                           "this is a bug in orv; please report it"))
        return None


_INT = {int}
_NUMBER = {int, float}
_LOSS = {int, float, str}


def _column(samples: list[Any], key: str) -> list[Any] | None:
    try:
        return list(map(operator.itemgetter(key), samples))
    except (KeyError, TypeError):
        return None


# The schemas' upper bounds: JSON's safe integers, and numbers a double can hold.
_MAXIMUM = {int: 2**53 - 1, float: 1.7976931348623157e308}


def _typed(values: list[Any] | None, allowed: set[type], minimum: float | None = None,
           exclusive: bool = False) -> bool:
    if values is None or not set(map(type, values)) <= allowed:
        return False
    numbers = [v for v in values if type(v) is not str] if str in allowed else values
    if numbers and max(map(abs, numbers)) > _MAXIMUM[int if allowed == _INT else float]:
        return False
    if minimum is None:
        return True
    low = min(values)
    return low > minimum if exclusive else low >= minimum


def samples_fast_ok(kind: str, samples: Any) -> bool:
    """The schema's rules for `samples` items, checked column by column with C-speed builtins.

    ~10x faster than a per-item Python loop and ~100x faster than jsonschema on 1,000 samples.
    Returns False on the first doubt; the caller then runs jsonschema for exact findings.
    """
    if type(samples) is not list or len(samples) > 1_000_000:
        return False
    if not samples:
        return True
    if set(map(type, samples)) != {dict}:
        return False
    lengths = set(map(len, samples))
    if kind == "training":
        return (lengths == {4}
                and _typed(_column(samples, "step"), _INT, 0)
                and _typed(_column(samples, "time_s"), _NUMBER, 0, exclusive=True)
                and _typed(_column(samples, "tokens"), _INT, 1)
                and _typed(_column(samples, "loss"), _LOSS))
    if not lengths <= {4, 5}:
        return False
    if 5 in lengths:  # the fifth key may only be start_ms
        starts = [s["start_ms"] for s in samples if "start_ms" in s]
        if sum(map(len, samples)) != 4 * len(samples) + len(starts) or not _typed(starts, _NUMBER, 0):
            return False
    return (_typed(_column(samples, "prompt_tokens"), _INT, 0)
            and _typed(_column(samples, "output_tokens"), _INT, 0)
            and _typed(_column(samples, "ttft_ms"), _NUMBER, 0)
            and _typed(_column(samples, "e2e_ms"), _NUMBER, 0))


def validate_run_data(data: Any) -> list[schemas.SchemaIssue]:
    """Schema issues of a run document: the envelope by jsonschema, the samples by the fast path."""
    if not isinstance(data, dict):
        return [schemas.SchemaIssue("ORV104", (), "a run file must be a JSON object",
                                    "create run files with `orv add-run`")]
    kind = data.get("kind")
    if kind not in ("training", "inference"):
        return [schemas.SchemaIssue("ORV109" if "kind" in data else "ORV108", ("kind",),
                                    f"run `kind` must be \"training\" or \"inference\", not {kind!r}",
                                    "set `kind` to the kind of the recipe this run backs")]
    schema_kind = f"run-{kind}"
    if "samples" in data and samples_fast_ok(kind, data["samples"]):
        return schemas.validate(schema_kind, strip_samples(data))
    return schemas.validate(schema_kind, data)


def compute_facts(meta: RunMeta, data: dict[str, Any], catalog: Catalog) -> RunFacts | None:
    samples = data.get("samples")
    if not samples:
        return RunFacts()
    if meta.kind == "training":
        workload = catalog.workloads.get(meta.workload or "")
        warmup = workload.warmup_steps if workload else 0
        return training_facts(samples, meta.hardware.count, warmup, workload.convergence if workload else None)
    return inference_facts(samples, meta.duration_s)


def load_run(root: str, rel: str, catalog: Catalog, out: _Collector) -> RunFile | None:
    try:
        raw = read_bytes(root, rel, MAX_JSON_BYTES)
        text = decode_utf8(raw)
        data = parse_json(raw, text)
        canonical = is_canonical(raw, data)
        if not canonical:
            find_duplicate_json_keys(text)  # only a non-canonical file can hide a duplicate key
    except LoadError as exc:
        out.load_error(rel, exc)
        return None
    doc = Document(rel, data, text)
    meta = facts = None
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind in ("training", "inference") and samples_fast_ok(kind, data.get("samples", [])):
        meta = _validated(RunMeta, strip_samples(data), "run", doc, out)
    else:  # the samples (or the kind) look wrong: let jsonschema say exactly where
        issues = validate_run_data(data)
        if issues:
            out.schema_issues(doc, "run", issues)
        else:
            meta = _validated(RunMeta, strip_samples(data), "run", doc, out)
    if meta is not None:
        facts = compute_facts(meta, data, catalog)
    return RunFile(rel, raw, doc, run_digest_from_path(rel), content_address(raw), canonical, meta, facts)


# --------------------------------------------------------------------------- the pipeline


def find_root(start: str) -> str:
    """The registry root: the nearest folder at or above `start` holding catalog/ and recipes/."""
    here = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        if os.path.isdir(os.path.join(here, "catalog")) and os.path.isdir(os.path.join(here, "recipes")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            raise UsageError(f"{start}: not inside an OpenRecipes registry (no catalog/ and recipes/ above it)")
        here = parent


# Worker state for parallel loading: set once per process by _init_worker.
_WORKER: dict[str, Any] = {}


def _init_worker(root: str, catalog: Catalog) -> None:
    _WORKER.update(root=root, catalog=catalog)


def _load_one(rel: str) -> tuple[RecipeEntry | RunEntry | None, list[Diagnostic]]:
    """Load one recipe or run file (run-file checks included); what a worker process does."""
    root, catalog = _WORKER["root"], _WORKER["catalog"]
    out = _Collector()
    kind = classify(rel)
    if kind in ("recipe-training", "recipe-inference"):
        return _load_recipe(root, rel, kind, out, {}), out.diagnostics
    run = load_run(root, rel, catalog, out)
    if run is None:
        return RunEntry(rel, run_digest_from_path(rel) or "", "", False, None, None), out.diagnostics
    single = {rel: run.doc}
    for check in by_scope("run-file"):
        assert check.func is not None
        out.findings(check, check.func(run, catalog), single)
    # The bytes and samples go out of scope here: only the reduced entry is kept.
    return (RunEntry(rel, run.name_digest or "", run.actual_digest, run.canonical, run.meta, run.facts,
                     len(run.raw)), out.diagnostics)


def _load_all(root: str, rels: list[str], catalog: Catalog, jobs: int,
              progress: Callable[[int, int], None] | None) -> Iterator[tuple[Any, list[Diagnostic]]]:
    """Every file's entry and findings, in input order; spread over `jobs` processes when it pays."""
    _init_worker(root, catalog)
    total = len(rels)
    if jobs <= 1 or total < 256:  # a process pool costs ~0.1 s to start; small registries skip it
        results: Iterable[tuple[Any, list[Diagnostic]]] = map(_load_one, rels)
        for done, item in enumerate(results, 1):
            if progress and done % 500 == 0:
                progress(done, total)
            yield item
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker,
                             initargs=(root, catalog)) as pool:
        for done, item in enumerate(pool.map(_load_one, rels, chunksize=64), 1):
            if progress and done % 500 == 0:
                progress(done, total)
            yield item


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def build_snapshot(root: str, out: _Collector, jobs: int = 1,
                   progress: Callable[[int, int], None] | None = None, use_cache: bool = False) -> Snapshot:
    files = discover(root)
    documents: dict[str, Document] = {}
    catalog_out = _Collector()
    store = open_store(root) if use_cache else Store()
    catalog, catalog_ok = load_catalog(root, set(files), catalog_out, documents, store)
    # Links are never followed (ORV114 reports them); files with no place are ORV107's.
    to_load = [rel for rel in files if classify(rel) in LOADABLE and not os.path.islink(os.path.join(root, rel))]
    cache = open_cache(root, store)
    results: dict[str, tuple[Any, list[Diagnostic]]] = {}
    pending = []
    for rel in to_load:
        hit = cache.get(rel)
        if hit is None:
            pending.append(rel)
        else:
            results[rel] = hit
    for rel, result in zip(pending, _load_all(root, pending, catalog, jobs, progress)):
        results[rel] = result
        cache.put(rel, result)
    cache.save()
    if use_cache:
        _index_keys(store, cache, results)
    return _assemble(root, files, catalog, catalog_ok, documents, tuple(catalog_out.diagnostics), results, out)


LOADABLE = ("recipe-training", "recipe-inference", "run")


def _index_keys(store: Store, cache: BlobCache, results: dict[str, tuple[Any, list[Diagnostic]]]) -> None:
    """Remember each committed file's relation keys, so pull-request mode need not load it again."""
    from validator.cache import open_index
    from validator.neighbourhood import keys_of

    index = open_index(store)
    for rel, blob in cache.blobs.items():
        if index.get(rel, blob) is None:
            index.put(rel, blob, keys_of(rel, results.get(rel, (None,))[0]))
    index.retain(cache.blobs)
    index.save()


def _assemble(root: str, files: list[str], catalog: Catalog, catalog_ok: bool, documents: dict[str, Document],
              catalog_findings: tuple[Diagnostic, ...], results: dict[str, tuple[Any, Any]],
              out: _Collector) -> Snapshot:
    """The snapshot from per-file results (in path order); their findings go to `out`."""
    out.diagnostics.extend(catalog_findings)
    recipes: list[RecipeEntry] = []
    runs: list[RunEntry] = []
    for rel in sorted(results):
        entry, diagnostics = results[rel]
        out.diagnostics.extend(diagnostics)
        if isinstance(entry, RecipeEntry):
            recipes.append(entry)
            documents[entry.path] = entry.doc
        elif isinstance(entry, RunEntry):
            runs.append(entry)
    return Snapshot(root, tuple(sorted(files)), catalog, tuple(sorted(recipes, key=lambda r: r.path)),
                    MappingProxyType({r.name_digest: r for r in sorted(runs, key=lambda r: r.path)}),
                    MappingProxyType(dict(documents)), catalog_ok,
                    MappingProxyType({rel: (e, tuple(d)) for rel, (e, d) in results.items()}), catalog_findings)


@dataclass(frozen=True)
class Analysis:
    """One load of the registry and its registry-scope findings: what tiers and boards are built from."""

    snapshot: Snapshot
    diagnostics: tuple[Diagnostic, ...]  # every load and registry finding, before waivers and path filters


def analyse(root: str, jobs: int = 1, cache: bool = False) -> Analysis:
    """Load the registry and run the registry checks once (what `orv boards` needs; no PR or boards scope)."""
    out = _Collector()
    snapshot = _check_registry(root, out, jobs, cache)
    return Analysis(snapshot, tuple(out.diagnostics))


def run(config: Config) -> Result:
    return evaluate(config).result


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
    change: Any = None  # validator.gitdiff.Change with --base
    base: BaseView | None = None  # computed with --base when needed (pre-existing findings, summary)
    waived: tuple[Diagnostic, ...] = ()
    pre_existing: tuple[Diagnostic, ...] = ()  # findings already on the base branch, not counted
    partial: bool = False  # snapshot, found and base cover only the change's neighbourhood


def evaluate(config: Config) -> Evaluation:
    """Check the registry; with --base, judge the pull request only for what it introduces."""
    _check_waivers(config.waive)
    if config.base is not None and config.neighbourhood:
        from validator.incremental import evaluate_change

        evaluation = evaluate_change(config)
        if evaluation is not None:
            return evaluation
    out = _Collector()
    snapshot = _check_registry(config.root, out, config.jobs, config.cache, config.progress)
    documents = dict(snapshot.documents)
    change = None
    if config.base is not None:
        change = _compare(snapshot, config.base)
        for check in by_scope("pr"):
            assert check.func is not None
            out.findings(check, check.func(change), documents)
    if not config.skip_boards and config.base is None:
        analysis = Analysis(snapshot, tuple(out.diagnostics))
        for check in by_scope("boards"):
            assert check.func is not None
            out.findings(check, check.func(analysis), documents)
    found = sorted_unique(out.diagnostics)
    kept: list[Diagnostic] = list(found)
    base: BaseView | None = None
    pre_existing: list[Diagnostic] = []
    if change is not None:
        kept, base, pre_existing = _introduced(found, change)
    kept, waived = apply_options(config, kept)
    result = Result(tuple(kept), files_checked=len(snapshot.files), notes=waiver_notes(waived, pre_existing))
    return Evaluation(result, snapshot, found, change, base, tuple(waived), tuple(pre_existing))


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
    notes = tuple(f"{code} waived for this pull request: {n} finding(s) not counted"
                  for code, n in sorted(Counter(d.code for d in waived).items()))
    if pre_existing:
        notes += (f"{len(pre_existing)} finding(s) already on the base branch not counted",)
    return notes


def _check_registry(root: str, out: _Collector, jobs: int = 1, cache: bool = False,
                    progress: Callable[[int, int], None] | None = None) -> Snapshot:
    """Load the tree at root and run the run-file and registry checks on it."""
    return _run_registry_checks(build_snapshot(root, out, jobs, progress, cache), out)


def _run_registry_checks(snapshot: Snapshot, out: _Collector) -> Snapshot:
    documents = dict(snapshot.documents)
    for check in by_scope("registry"):
        assert check.func is not None
        out.findings(check, check.func(snapshot), documents)
    return snapshot


def _check_waivers(codes: tuple[str, ...]) -> None:
    from validator.checks import all_checks

    known = all_checks()
    for code in codes:
        if code not in known:
            raise UsageError(f"--waive {code}: no such check code (`orv explain all` lists them)")
        if code == "ORV900":
            raise UsageError("ORV900 cannot be waived: it means a check did not complete, so nothing was checked")


def _compare(snapshot: Snapshot, base: str) -> Any:
    from validator.gitdiff import GitError, compare  # only PR checks need git

    try:
        return compare(snapshot, base)
    except GitError as exc:
        raise UsageError(str(exc)) from None


# --------------------------------------------------------------------------- pull-request mode
#
# A pull request fails only for what it introduces. Cross-file checks still see the whole registry
# (a new recipe that duplicates an old one is reported wherever the check reports it), so "what it
# introduces" is decided by content, not by path: a finding counts unless the same finding (code,
# file, message; not the line, which an edit above it moves) is also reported on the merge base,
# checked by the same code. PR rules (ORV6xx) and ORV900 always count. The base is only checked
# when some finding is on a file the pull request did not add, so a PR that only adds files costs
# one check, not two.


def _introduced(found: tuple[Diagnostic, ...], change: Any
                ) -> tuple[list[Diagnostic], BaseView | None, list[Diagnostic]]:
    pr_codes = {c.code for c in by_scope("pr")}
    if all(d.code in pr_codes or d.code == "ORV900" or d.path in change.added_paths for d in found):
        kept, _ = subtract_base(found, ())
        return kept, None, []
    base = check_base(change)
    kept, pre_existing = subtract_base(found, base.diagnostics, change.head_paths)
    return kept, base, pre_existing


def subtract_base(found: Iterable[Diagnostic], on_base: Iterable[Diagnostic],
                  touched: frozenset[str] | None = None) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(what counts, what was already on the base): a finding counts unless the base has it too.

    Same finding = same code, file and message (not the line, which an edit above it moves).
    Pull-request rules and ORV900 always count; a PR rule replaces the findings it supersedes.
    With `touched` (the paths the pull request added or altered), findings land where the change
    is: see _untouched.
    """
    from validator.checks.pr import SUPERSEDES

    pr_codes = {c.code for c in by_scope("pr")}
    found = list(found)
    replaced = {(old, d.path) for d in found for old in SUPERSEDES.get(d.code, ())}
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


def _untouched(kept: list[Diagnostic], on_base: Iterable[Diagnostic], touched: frozenset[str],
               pr_codes: set[str]) -> tuple[list[Diagnostic], list[Diagnostic]]:
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


def check_base(change: Any) -> BaseView:
    """Check the merge base's registry with the same code.

    The base differs from the working tree only in the files the pull request changed, and a
    file's own results depend only on its bytes and the catalog. So, unless the catalog changed,
    the base is assembled from the working tree's results for unchanged files plus the base
    versions of the changed ones; only the registry checks run again. Otherwise the whole base
    tree is exported and checked.
    """
    from validator.registry import REGISTRY_DIRS

    head = change.snapshot
    changed = {c.path: c for c in change.files if c.path.split("/", 1)[0] in REGISTRY_DIRS}
    if any(path.startswith("catalog/") for path in changed) or not head.loaded:
        return check_base_exported(change)
    out = _Collector()
    snapshot = _check_registry_from(head, change, changed, out)
    return BaseView(snapshot, sorted_unique(out.diagnostics))


def check_base_exported(change: Any) -> BaseView:
    """Check the merge base by exporting its whole registry tree to a temporary folder."""
    import tempfile

    from validator.registry import REGISTRY_DIRS

    out = _Collector()
    with tempfile.TemporaryDirectory(prefix="orv-base-") as tmp:
        change.base.export(tmp, REGISTRY_DIRS)
        for folder in ("recipes", "catalog"):
            os.makedirs(os.path.join(tmp, folder), exist_ok=True)
        snapshot = _check_registry(tmp, out)
    return BaseView(snapshot, sorted_unique(out.diagnostics))


def _check_registry_from(head: Snapshot, change: Any, changed: dict[str, Any], out: _Collector) -> Snapshot:
    """The base snapshot from the head's per-file results and the base versions of changed files."""
    results = {rel: result for rel, result in head.loaded.items() if rel not in changed}
    results.update(load_at_base(change, changed, head.catalog))
    files = [rel for rel in head.files if rel not in changed] + [p for p, c in changed.items() if c.present_at_base]
    documents = {rel: doc for rel, doc in head.documents.items() if rel.startswith("catalog/")}
    return _run_registry_checks(_assemble(head.root, files, head.catalog, head.catalog_ok, documents,
                                          head.catalog_findings, results, out), out)


def load_at_base(change: Any, changed: dict[str, Any], catalog: Catalog) -> dict[str, tuple[Any, list[Diagnostic]]]:
    """Per-file results of the merge-base versions of the changed files (written to a temporary folder)."""
    import tempfile

    from validator.gitdiff import MODE_SYMLINK

    to_load = [path for path, c in changed.items()
               if c.present_at_base and c.base_mode != MODE_SYMLINK and classify(path) in LOADABLE]
    with tempfile.TemporaryDirectory(prefix="orv-base-") as tmp:
        for path in to_load:
            full = os.path.join(tmp, *path.split("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as fh:
                fh.write(change.base.read(path) or b"")
        return dict(zip(to_load, _load_all(tmp, to_load, catalog, 1, None)))


def _in_paths(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(p in (".", "") or path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def _dedupe(diagnostics: list[Diagnostic]) -> Iterator[Diagnostic]:
    seen = set()
    for d in diagnostics:
        if d not in seen:
            seen.add(d)
            yield d
