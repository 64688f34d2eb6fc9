"""Files -> per-file results -> Snapshot: loading into typed models, schema fast paths, the process pool.

Each recipe and run file is loaded on its own (bytes -> Document -> pydantic model; a run file's
run-file checks run while its bytes are in memory, then only the reduced RunEntry is kept), spread
over processes when that pays, and cached by git blob id (cache.py). `assemble` puts per-file
results together into the immutable Snapshot the registry checks read.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ValidationError

from validator.checks import Keep, by_scope
from validator.checks.collect import Collector, stage
from validator.diagnostics import Diagnostic, Severity
from validator.errors import LoadError
from validator.files.atomic import settle
from validator.files.interrupts import quiet_map
from validator.git.sparse import WHOLE_CHECKOUT, refuse_sparse
from validator.hashing import content_address, is_canonical
from validator.load import schema as schemas
from validator.load.cache import Store, open_cache, remembered
from validator.load.documents import (
    MAX_JSON_BYTES,
    Document,
    decode_utf8,
    find_duplicate_json_keys,
    load_yaml_document,
    parse_json,
    read_bytes,
)
from validator.load.references import with_reference_curves
from validator.models import (
    InferenceRecipe,
    RunMeta,
    TrainingRecipe,
)
from validator.quality.verify import check as check_quality
from validator.registry.catalog import catalog_names, read_catalog
from validator.registry.layout import CATALOG_FILES, LOADABLE, classify, discover, run_digest_from_path
from validator.registry.relations import with_content_keys
from validator.registry.snapshot import Catalog, RecipeEntry, RunEntry, RunFile, Snapshot, strip_samples
from validator.science.independence import sample_fingerprint, sorted_alone
from validator.science.llamabench import facts as llama_bench_facts
from validator.science.samples import Columns
from validator.science.throughput import RunFacts, inference_facts, training_facts

# A file's own load: its entry (None when it cannot be read at all) and the findings about it alone.
FileResult = tuple[RecipeEntry | RunEntry | None, list[Diagnostic]]


def _load_catalog(root: str, files: set[str], out: Collector, documents: dict[str, Document]) -> tuple[Catalog, bool]:
    """The catalog (registry/catalog.py reads it) with its findings: a missing, unreadable or schema-invalid
    file, and an entry the typed model refuses."""
    read = read_catalog(root, files)
    documents.update(read.documents)
    for problem in read.problems:
        if problem.error is not None:
            out.load_error(problem.path, problem.error)
        elif problem.doc is not None:
            out.schema_issues(problem.doc, CATALOG_FILES[problem.path], problem.issues)
        else:
            out.add(
                Diagnostic(
                    "ORV108",
                    Severity.ERROR,
                    problem.path,
                    1,
                    1,
                    f"catalog file {problem.path} is missing",
                    "restore it from the main branch; checks need the catalog",
                )
            )
    for refusal in read.refusals:
        line, col = read.documents[refusal.path].locate(refusal.at)
        out.add(Diagnostic("ORV109", Severity.ERROR, refusal.path, line, col, refusal.message, refusal.hint))
    return read.catalog, read.ok


def load_catalog(
    root: str, files: set[str], out: Collector, documents: dict[str, Document], store: Store = Store()
) -> tuple[Catalog, bool]:
    """_load_catalog, remembered in .git/orv by the cache key (which hashes the catalog files and orv):
    loading runs jsonschema, ~0.2 s that a pull-request check would otherwise spend every time."""
    present = sorted(set(CATALOG_FILES) & files)
    # the key hashes the files' bytes, not whether they are links (a link is refused when loaded)
    shape = [(rel, os.path.islink(os.path.join(root, rel))) for rel in present]
    stored = remembered(store, "catalog")
    if isinstance(stored.value, tuple) and len(stored.value) == 5 and stored.value[0] == shape:
        _, catalog, ok, findings, docs = stored.value
        out.diagnostics.extend(findings)
        documents.update(docs)
        # the named runs are read every time (a few files): a reference added later is never missed
        return with_reference_curves(root, catalog), ok
    mine, docs = Collector(), {}
    catalog, ok = _load_catalog(root, set(present), mine, docs)
    stored.save((shape, catalog, ok, tuple(mine.diagnostics), docs))
    out.diagnostics.extend(mine.diagnostics)
    documents.update(docs)
    return with_reference_curves(root, catalog), ok


def _load_recipe(
    root: str, rel: str, kind: str, out: Collector, documents: dict[str, Document], catalog: Catalog | None = None
) -> RecipeEntry | None:
    try:
        doc = load_yaml_document(root, rel)
    except LoadError as exc:
        out.load_error(rel, exc)
        return None
    documents[rel] = doc
    if not isinstance(doc.data, dict):
        out.add(
            Diagnostic(
                "ORV104",
                Severity.ERROR,
                rel,
                1,
                1,
                "a recipe must be a YAML mapping",
                "start from a recipe in recipes/ and keep `id:`, `kind:` … at the top level",
            )
        )
        return RecipeEntry(rel, doc, None)
    model = TrainingRecipe if kind == "recipe-training" else InferenceRecipe
    recipe = _validated(model, doc.data, kind, doc, out, catalog)
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


def _validated(
    model: type[BaseModel], data: Any, kind: str, doc: Document, out: Collector, catalog: Catalog | None = None
) -> Any:
    """The typed model of data, or None after reporting why not.

    The strict pydantic model is tried first (compiled, ~50x faster than jsonschema); only a
    rejection runs jsonschema, whose errors word the findings. The models are at least as strict
    as the schemas (tests/unit/test_schema_agreement.py), so "pydantic accepts" implies "schema accepts".
    """
    if not _has_null(data):  # no schema field allows null; pydantic's Optional would take it
        try:
            return model.model_validate(data)
        except ValidationError:
            pass
    if kind == "run":
        issues = validate_run_data(data)
    else:  # only a rejected file pays for the names table
        issues = schemas.validate(kind, data, catalog_names(catalog) if catalog is not None else None)
    if issues:
        out.schema_issues(doc, kind, issues)
        return None
    try:  # schema-valid but outside the strict model, e.g. 1.0 written for an integer
        return model.model_validate(data, strict=False)
    except ValidationError as exc:
        out.add(
            Diagnostic(
                "ORV900",
                Severity.ERROR,
                doc.path,
                1,
                1,
                f"schema accepted the file but the model did not: {exc.errors()[0]['msg']}",
                "this is a bug in orv; please report it",
            )
        )
        return None


_INT = frozenset({int})
_NUMBER = frozenset({int, float})
_LOSS = frozenset({int, float, str})

# The schemas' upper bounds: JSON's safe integers, and numbers a double can hold.
_MAXIMUM = {int: 2**53 - 1, float: 1.7976931348623157e308}


def _within(low: Any, high: Any, allowed: frozenset[type], minimum: float | None, exclusive: bool) -> bool:
    """Are a column's lowest and highest values within the schema's bounds?"""
    if max(high, -low) > _MAXIMUM[int if allowed == _INT else float]:  # = max(map(abs, numbers))
        return False
    if minimum is None:
        return True
    return low > minimum if exclusive else low >= minimum


def _typed(
    values: list[Any] | None,
    types: frozenset[type],
    allowed: frozenset[type],
    minimum: float | None = None,
    exclusive: bool = False,
) -> bool:
    """Is every value of a column of one of the allowed types, within the schema's bounds?"""
    if values is None or not types <= allowed:
        return False
    numbers = [v for v in values if type(v) is not str] if str in types else values
    if not numbers:
        return minimum is None
    return _within(min(numbers), max(numbers), allowed, minimum, exclusive)


def _column_ok(
    columns: Columns, key: str, allowed: frozenset[type], minimum: float | None = None, exclusive: bool = False
) -> bool:
    types = columns.types(key)
    if str in types or not types:  # text beside numbers (a diverged loss), or no such column
        return _typed(columns.get(key), types, allowed, minimum, exclusive)
    if not types <= allowed:
        return False
    return _within(*columns.bounds(key), allowed, minimum, exclusive)


_TRAINING_KEYS = ("step", "time_s", "tokens", "loss")
_INFERENCE_KEYS = ("prompt_tokens", "output_tokens", "ttft_ms", "e2e_ms")


def samples_fast_ok(kind: str, samples: Any, columns: Columns | None = None) -> bool:
    """The schema's rules for `samples` items, checked column by column with C-speed builtins.

    ~10x faster than a per-item Python loop and ~100x faster than jsonschema on 1,000 samples.
    Returns False on the first doubt; the caller then runs jsonschema for exact findings.
    `columns` (of these samples) lets the caller reuse the columns read here.
    """
    if type(samples) is not list or len(samples) > 1_000_000:
        return False
    if not samples:
        return True
    cols = columns if columns is not None and columns.samples is samples else Columns(samples)
    for key in sorted_alone(kind):  # the fingerprint sorts these anyway: their bounds then cost no pass
        if cols.types(key) and cols.types(key) <= _NUMBER:
            cols.ordered(key)
    if kind == "training":
        return (
            cols.holds_exactly(_TRAINING_KEYS)
            and _column_ok(cols, "step", _INT, 0)
            and _column_ok(cols, "time_s", _NUMBER, 0, exclusive=True)
            and _column_ok(cols, "tokens", _INT, 1)
            and _column_ok(cols, "loss", _LOSS)
        )
    if not cols.holds(_INFERENCE_KEYS):
        return False
    extra = cols.key_count() - len(_INFERENCE_KEYS) * len(samples)
    if extra:  # a fifth key, and it may only be start_ms
        starts = [s["start_ms"] for s in samples if "start_ms" in s]
        if extra != len(starts) or not _typed(starts, frozenset(map(type, starts)), _NUMBER, 0):
            return False
    return (
        _column_ok(cols, "prompt_tokens", _INT, 0)
        and _column_ok(cols, "output_tokens", _INT, 0)
        and _column_ok(cols, "ttft_ms", _NUMBER, 0)
        and _column_ok(cols, "e2e_ms", _NUMBER, 0)
    )


def validate_run_data(data: Any) -> list[schemas.SchemaIssue]:
    """Schema issues of a run document: the envelope by jsonschema, the samples by the fast path."""
    if not isinstance(data, dict):
        return [
            schemas.SchemaIssue("ORV104", (), "a run file must be a JSON object", "create run files with `orv add-run`")
        ]
    kind = data.get("kind")
    if kind == "quality":  # an accuracy evaluation (validator/quality/); its samples are per document
        return schemas.validate("run-quality", data)
    if kind not in ("training", "inference"):
        return [
            schemas.SchemaIssue(
                "ORV109" if "kind" in data else "ORV108",
                ("kind",),
                f'run `kind` must be "training", "inference" or "quality", not {kind!r}',
                "set `kind` to the kind of the recipe this run backs",
            )
        ]
    schema_kind = f"run-{kind}"
    if "samples" in data and samples_fast_ok(kind, data["samples"]):
        return schemas.validate(schema_kind, strip_samples(data))
    return schemas.validate(schema_kind, data)


def compute_facts(
    meta: RunMeta, data: dict[str, Any], catalog: Catalog, columns: Columns | None = None, exact: bool = True
) -> RunFacts | None:
    """What the samples prove; `columns`, of data's samples, when samples_fast_ok read them already.
    `exact=False`: the fingerprint may leave out its exact hash (independence.sample_fingerprint)."""
    samples = data.get("samples")
    if not samples:
        return RunFacts()
    if columns is None or columns.samples is not samples:
        columns = Columns(samples)
    if meta.kind == "training":
        workload = catalog.workloads.get(meta.workload or "")
        warmup = (workload.warmup_steps or 0) if workload else 0
        # the workload's rule with the model's own reference curve (catalog/models.yaml, docs/convergence.md)
        facts = training_facts(
            samples, meta.hardware.count, warmup, catalog.convergence_for(meta.model, meta.workload), columns
        )
    elif meta.synthetic is not None:  # llama-bench's repetitions: its own formula (science/llamabench.py)
        facts = llama_bench_facts(samples, meta.synthetic.model_dump())
    else:
        facts = inference_facts(samples, meta.duration_s, columns)
    # timed on its own: ORV304's share of the per-file load (science/independence.py)
    with stage("load > run files: facts from samples > of which the copy fingerprint (ORV304's)"):
        fingerprint = sample_fingerprint(meta.kind, samples, columns, exact)
    return replace(facts, fingerprint=fingerprint)


def load_run(root: str, rel: str, catalog: Catalog, out: Collector, exact: bool = True) -> RunFile | None:
    try:
        with stage("load > run files: read, decode, parse, canonical form"):
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
    if kind == "quality":
        issues = validate_run_data(data)
        if issues:
            out.schema_issues(doc, "run", issues)
            return RunFile(rel, raw, doc, run_digest_from_path(rel), content_address(raw), canonical, None, None)

        problems, quality = check_quality(data)
        return RunFile(
            rel,
            raw,
            doc,
            run_digest_from_path(rel),
            content_address(raw),
            canonical,
            None,
            None,
            quality,
            tuple(problems),
        )
    with stage("load > run files: samples' columns, schema, model"):
        samples = data.get("samples", []) if kind in ("training", "inference") else None
        columns = Columns(samples) if type(samples) is list else None  # read once, shared with the facts
        if kind in ("training", "inference") and samples_fast_ok(kind, samples, columns):
            meta = _validated(RunMeta, strip_samples(data), "run", doc, out)
        else:  # the samples (or the kind) look wrong: let jsonschema say exactly where
            issues = validate_run_data(data)
            if issues:
                out.schema_issues(doc, "run", issues)
            else:
                meta = _validated(RunMeta, strip_samples(data), "run", doc, out)
    if meta is not None:
        with stage("load > run files: facts from samples (figures, workload, convergence, fingerprint)"):
            facts = compute_facts(meta, data, catalog, columns, exact)
    return RunFile(
        rel, raw, doc, run_digest_from_path(rel), content_address(raw), canonical, meta, facts, columns=columns
    )


# Whether, and over how many workers, loading pays for forking them: a file's cost in this process (a run
# file ~8 ms, most of it the facts and fingerprint from its samples; a recipe or other file ~0.3 ms) against
# a pool's start and join (~0.02 s for 2 workers). 2 workers start to finish sooner than one process at ~8
# run files; from POOL_FROM_MS of work (16 run files, ~430 recipes) they clearly do. One more worker per
# WORKER_MS more (measured with 2 only: this host has 2 cores); never more than --jobs
# (a 64-core laptop forks 2 workers, not 64, for a pull request's 16 neighbours). The figures:
# docs/benchmarks.md, "The neighbourhood loaded in worker processes" (`python bench/pool.py`).
RUN_FILE_MS, OTHER_FILE_MS = 8.0, 0.3
POOL_FROM_MS = 128.0
WORKER_MS = 64.0
POOL_CHUNK = 64  # files a worker takes at a time: fewer where that would leave a worker idle
# Worker state for parallel loading: set once per process by _init_worker.
_WORKER: dict[str, Any] = {}


def _init_worker(root: str, catalog: Catalog, keep: Keep | None = None, keys: bool = False) -> None:
    # A partial load (`keep`: the checks a tier reads, for `orv boards`) leaves out the exact sample
    # hashes that only ORV304's wording reads (independence.sample_fingerprint's exact=False).
    _WORKER.update(
        root=root,
        catalog=catalog,
        run_checks=tuple(by_scope("run-file", keep)),  # not sorted per file
        keys=keys,
        exact=keep is None,
    )


def _load_one(rel: str) -> FileResult:
    """Load one recipe or run file (run-file checks included; with its relation keys when asked
    for); what a worker process does."""
    entry, diagnostics = _load_entry(rel)
    return (with_content_keys(entry) if _WORKER["keys"] else entry), diagnostics


def _load_entry(rel: str) -> FileResult:
    root, catalog = _WORKER["root"], _WORKER["catalog"]
    out = Collector()
    kind = classify(rel)
    if kind in ("recipe-training", "recipe-inference"):
        with stage("load > recipes: read, parse, schema, model"):
            return _load_recipe(root, rel, kind, out, {}, catalog), out.diagnostics
    run = load_run(root, rel, catalog, out, _WORKER["exact"])
    if run is None:
        return RunEntry(rel, run_digest_from_path(rel) or "", "", False, None, None), out.diagnostics
    single = {rel: run.doc}
    with stage("load > run-file checks"):
        for check in _WORKER["run_checks"]:
            assert check.func is not None
            out.findings(check, check.func(run, catalog), single)
    # The bytes and samples go out of scope here: only the reduced entry is kept.
    return (
        RunEntry(
            rel, run.name_digest or "", run.actual_digest, run.canonical, run.meta, run.facts, len(run.raw), run.quality
        ),
        out.diagnostics,
    )


# How often loading reports progress (validator/cli/progress.py ends the line at the total, whatever it is).
PROGRESS_STEP = 100


def workers_for(rels: list[str], jobs: int) -> int:
    """How many worker processes loading these files pays for, at most `jobs`; 0: load them in this process
    (POOL_FROM_MS, above)."""
    if jobs <= 1:
        return 0
    if len(rels) * OTHER_FILE_MS >= jobs * WORKER_MS:  # every worker's share whatever the files: none classified
        return jobs
    runs = sum(1 for rel in rels if classify(rel) == "run")
    work = runs * RUN_FILE_MS + (len(rels) - runs) * OTHER_FILE_MS
    return 0 if work < POOL_FROM_MS else min(jobs, max(2, int(work // WORKER_MS)))


def load_all(
    root: str,
    rels: list[str],
    catalog: Catalog,
    jobs: int,
    progress: Callable[[int, int], None] | None,
    keep: Keep | None = None,
    keys: bool = False,
) -> Iterator[FileResult]:
    """Every file's entry and findings, in input order; spread over up to `jobs` processes when it pays
    (workers_for).
    `keep`: run only the run-file checks it accepts (all when None), and leave out the exact
    sample hashes only ORV304 words with (_init_worker). `keys`: each entry carries its relation
    keys (relations.with_content_keys), computed in the workers."""
    _init_worker(root, catalog, keep, keys)
    total = len(rels)
    workers = workers_for(rels, jobs)
    if not workers:
        results: Iterable[FileResult] = map(_load_one, rels)
        for done, item in enumerate(results, 1):
            if progress and (done % PROGRESS_STEP == 0 or done == total):
                progress(done, total)
            yield item
        return
    import gc

    # Everything allocated so far, and every result, lives until the process ends: frozen, the
    # cyclic collector stops rescanning it (at N = 10,000 its full passes over the growing results
    # cost ~25% of the registry checks), and forked workers do not copy the pages it would touch.
    gc.freeze()
    # workers ignore Ctrl-C (the parent answers it, validator/files/interrupts.py)
    for done, item in enumerate(
        quiet_map(
            _load_one,
            rels,
            workers,
            chunksize=max(1, min(POOL_CHUNK, total // (4 * workers))),  # each worker ~4 chunks at least
            initializer=_init_worker,
            initargs=(root, catalog, keep, keys),
        ),
        1,
    ):
        if progress and (done % PROGRESS_STEP == 0 or done == total):
            progress(done, total)
        if done % 1000 == 0:
            gc.freeze()
        yield item
    gc.freeze()


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Loaded:
    """Every file of a tree loaded (or found in the cache): what a Snapshot is assembled from."""

    files: list[str]
    catalog: Catalog
    catalog_ok: bool
    documents: dict[str, Document]
    catalog_findings: tuple[Diagnostic, ...]
    results: dict[str, FileResult]
    blobs: dict[str, str]  # clean tracked file -> git blob id (empty without the cache)


INTERNED_LENGTH = 64  # strings up to this length in a recipe's parsed data are kept once (compact)


def compact(result: FileResult) -> FileResult:
    """The same result, its recipe's parsed data holding one copy of each key and short value the
    registry repeats (`hardware`, `gpu`, `h100`, ...): the YAML parser makes a new string for every
    occurrence, ~1.8 KB a recipe, ~170 MB of the snapshot at 100,000 recipes (issue 54). Equal values,
    so nothing that reads them can tell."""
    entry = result[0]
    if isinstance(entry, RecipeEntry):
        entry.doc.data = _interned(entry.doc.data)
    return result


def _interned(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {(sys.intern(k) if type(k) is str else k): _interned(v) for k, v in value.items()}
    if kind is list:
        return [_interned(v) for v in value]
    if kind is str and len(value) <= INTERNED_LENGTH:
        return sys.intern(value)
    return value


def loadable(root: str, files: list[str]) -> list[str]:
    """The files whose load is per-file work: recipes and run files. Links are never followed
    (ORV114 reports them); files with no place are ORV107's."""
    return [rel for rel in files if classify(rel) in LOADABLE and not os.path.islink(os.path.join(root, rel))]


def load_tree(
    root: str,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    store: Store = Store(),
    only: Callable[[str], bool] | None = None,
    keep: Keep | None = None,
    keys: bool = False,
) -> Loaded:
    """Load every recipe and run file under root (those `only` keeps: one shard, validator/engine/shard.py),
    reusing cached per-file results where git says they hold. `keep`: run only the run-file checks
    it accepts; such partial results are never cached (a cached result is a complete one).
    `keys`: every freshly loaded entry carries its relation keys (load_all)."""
    settle(root)  # what a killed orv wrote is finished or cleared before it is read (validator/files/atomic.py)
    refuse_sparse(
        root,
        "a check of the whole registry",
        f"Check a change with `orv check --base REF`, or first: {WHOLE_CHECKOUT}.",
    )
    files = discover(root)
    documents: dict[str, Document] = {}
    catalog_out = Collector()
    catalog, catalog_ok = load_catalog(root, set(files), catalog_out, documents, store)
    to_load = [rel for rel in loadable(root, files) if only is None or only(rel)]
    cache = open_cache(root, store)
    results: dict[str, FileResult] = {}
    pending = []
    for rel in to_load:
        hit = cache.get(rel)
        if hit is None:
            pending.append(rel)
        else:
            results[rel] = compact(hit)
    for rel, result in zip(pending, load_all(root, pending, catalog, jobs, progress, keep, keys)):
        results[rel] = compact(result)
        if keep is None:
            cache.put(rel, result)
    cache.save()
    return Loaded(files, catalog, catalog_ok, documents, tuple(catalog_out.diagnostics), results, cache.blobs)


def assemble_loaded(root: str, loaded: Loaded, out: Collector) -> Snapshot:
    return assemble(
        root,
        loaded.files,
        loaded.catalog,
        loaded.catalog_ok,
        loaded.documents,
        loaded.catalog_findings,
        loaded.results,
        out,
    )


def assemble(
    root: str,
    files: list[str],
    catalog: Catalog,
    catalog_ok: bool,
    documents: dict[str, Document],
    catalog_findings: tuple[Diagnostic, ...],
    results: dict[str, FileResult],
    out: Collector,
) -> Snapshot:
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
    return Snapshot(
        root,
        tuple(sorted(files)),
        catalog,
        tuple(sorted(recipes, key=lambda r: r.path)),
        MappingProxyType({r.name_digest: r for r in sorted(runs, key=lambda r: r.path)}),
        MappingProxyType(dict(documents)),
        catalog_ok,
        MappingProxyType({rel: (e, tuple(d)) for rel, (e, d) in results.items()}),
        catalog_findings,
    )
