"""The blob-id cache never hides a change: real git repositories, never a mocked git."""

from __future__ import annotations

import pickle
import tracemalloc
from dataclasses import replace
from pathlib import Path

import pytest

from tests.testing.git import git
from tests.testing.registry import make_registry
from validator.engine.evaluate import Config, run
from validator.files.atomic import PREFIX
from validator.load.cache import BlobCache, KeyIndex, Store, indexed_blobs, open_cache, open_index, open_store
from validator.load.pipeline import load_tree
from validator.pr.neighbourhood import index_keys
from validator.registry.relations import keys_of
from validator.registry.snapshot import RecipeEntry, RunEntry
from validator.registry.store import store_run_document

RUN = {
    "kind": "inference",
    "tool": {"name": "vllm-bench-serve", "version": "0.30.0"},
    "model": "glm-5.3-flash",
    "hardware": {"gpu": "rtx-3090", "count": 1},
    "software": {"engine": {"name": "vllm", "version": "0.30.0"}},
    "quant": "w4a16",
    "serving": {"concurrency": 1},
    "measured_at": "2026-10-17T12:00:00Z",
    "measured_by": "ann",
    "summary": {"decode_tok_s": 50.0},
    "samples": [{"prompt_tokens": 1024, "output_tokens": 256, "ttft_ms": 50.0, "e2e_ms": 5150.0}],
}


def make_repo(tmp_path: Path) -> tuple[Path, str]:
    root = make_registry(tmp_path / "repo")
    stored = store_run_document(str(root), RUN)
    recipe = root / "recipes" / "inference" / "glm-5.3-flash" / "glm-5-3-flash-rtx-3090-w4a16.yaml"
    recipe.parent.mkdir(parents=True)
    recipe.write_text(f"""id: glm-5-3-flash-rtx-3090-w4a16
kind: inference
model: glm-5.3-flash
hardware: {{gpu: rtx-3090, count: 1}}
author: ann
measured: "2026-10-17"
software:
  engine: {{name: vllm, version: "0.30.0"}}
quant: w4a16
serving: {{concurrency: 1}}
workload: fixed-1024-256
claimed: {{decode_tok_s: 50.0}}
runs: ["sha256:{stored.digest}"]
""")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root, stored.path


def verified_runs(root: Path) -> list[bool]:
    from validator.checks.collect import Collector
    from validator.load.cache import open_store
    from validator.load.pipeline import assemble_loaded, load_tree

    snapshot = assemble_loaded(str(root), load_tree(str(root), store=open_store(str(root))), Collector())
    return [entry.verified for entry in snapshot.runs.values()]


def codes(root: Path) -> list[str]:
    result = run(Config(root=str(root), skip_boards=True, cache=True))
    return sorted({d.code for d in result.diagnostics})


@pytest.mark.git
def test_cache_is_written_and_reused(tmp_path: Path) -> None:
    root, _ = make_repo(tmp_path)
    assert codes(root) == []
    caches = list((root / ".git" / "orv").glob("cache-*.pickle"))
    assert len(caches) == 1
    before = caches[0].stat().st_mtime_ns
    assert codes(root) == []
    assert caches[0].stat().st_mtime_ns == before  # nothing new to store: every file came from the cache


@pytest.mark.git
def test_a_tampered_run_is_caught_in_the_work_tree_and_after_commit(tmp_path: Path) -> None:
    root, run_rel = make_repo(tmp_path)
    assert verified_runs(root) == [True]  # warms the cache with the good bytes
    path = root / run_rel
    path.write_bytes(path.read_bytes().replace(b'"ann"', b'"bob"'))
    assert verified_runs(root) == [False]  # modified in the work tree: not taken from the cache
    git(root, "commit", "-q", "-am", "tamper")
    assert verified_runs(root) == [False]  # committed: a new blob id, so a new result


@pytest.mark.git
def test_a_catalog_change_invalidates_every_result(tmp_path: Path) -> None:
    root, _ = make_repo(tmp_path)
    assert codes(root) == []
    hardware = root / "catalog" / "hardware.yaml"
    hardware.write_text(hardware.read_text().replace("rtx-3090:", "rtx-3090-renamed:"))
    assert "ORV115" in codes(root)
    assert len(list((root / ".git" / "orv").glob("cache-*.pickle"))) == 1  # the stale one was removed


@pytest.mark.git
def test_the_remembered_catalog_is_not_used_for_a_catalog_file_turned_into_a_link(tmp_path: Path) -> None:
    root, _ = make_repo(tmp_path)
    assert codes(root) == []
    assert len(list((root / ".git" / "orv").glob("catalog-*.pickle"))) == 1
    hardware = root / "catalog" / "hardware.yaml"
    elsewhere = tmp_path / "hardware.yaml"
    elsewhere.write_bytes(hardware.read_bytes())  # same bytes, so the same cache key
    hardware.unlink()
    hardware.symlink_to(elsewhere)
    cached = run(Config(root=str(root), skip_boards=True, cache=True)).diagnostics
    assert cached == run(Config(root=str(root), skip_boards=True)).diagnostics
    assert any(d.code == "ORV114" and d.path == "catalog/hardware.yaml" for d in cached)


@pytest.mark.git
def test_a_change_to_orv_itself_gives_stored_results_a_new_key(tmp_path: Path, monkeypatch) -> None:
    """Results stored by another orv (e.g. before the exact sample fingerprint was redefined) are
    never read: the key hashes every source file of the package, and the cache version."""
    from validator.load import cache

    root, _ = make_repo(tmp_path)
    before = cache.derivation_key(str(root))
    fingerprint_source = Path(cache.__file__).resolve().parent.parent / "science" / "independence.py"
    real_read = Path.read_bytes
    monkeypatch.setattr(
        Path, "read_bytes", lambda self: real_read(self) + (b"# changed" if self == fingerprint_source else b"")
    )
    changed = cache.derivation_key(str(root))
    monkeypatch.undo()
    monkeypatch.setattr(cache, "CACHE_VERSION", cache.CACHE_VERSION + "-next")
    assert len({before, changed, cache.derivation_key(str(root))}) == 3


def test_the_key_covers_the_schemas_in_an_installed_wheel_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed wheel's schema_dir() is importlib's MultiplexedPath, not a pathlib.Path: the
    schemas must still be part of the key (and of the key file's stamp, boards/keys.json)."""
    from importlib.resources.readers import MultiplexedPath

    from validator.load import cache, schema

    as_checkout = [entry.name for entry in cache.code_files() if entry.name.endswith(".json")]
    monkeypatch.setattr(cache, "schema_dir", lambda: MultiplexedPath(str(schema.schema_dir())))
    as_wheel = [entry.name for entry in cache.code_files() if entry.name.endswith(".json")]
    assert as_wheel == as_checkout and "boards.schema.json" in as_wheel


@pytest.mark.git
def test_the_boards_load_with_fewer_checks_never_reaches_the_cache(tmp_path: Path) -> None:
    # `orv boards` runs only the checks a tier reads (engine.analyse(for_tiers=True)); had it cached
    # what it loaded, the next `orv check` would take those results and miss the skipped findings.
    from validator.engine.evaluate import analyse

    root, _ = make_repo(tmp_path)
    store_run_document(str(root), {**RUN, "summary": {"decode_tok_s": 80.0}})  # samples say 50: ORV208
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a run whose summary disagrees with its samples")
    boards_view = analyse(str(root), cache=True, for_tiers=True)
    assert "ORV208" not in {d.code for d in boards_view.diagnostics}  # not a check a tier reads
    assert "ORV208" in codes(root)


# --------------------------------------------------------------------------- the per-file results


@pytest.mark.git
def test_the_results_cache_gives_back_what_was_put_after_it_is_reopened(tmp_path: Path) -> None:
    root, _ = make_repo(tmp_path)
    results = load_tree(str(root), keys=True).results  # loaded without a store: nothing cached yet
    assert any(isinstance(entry, RecipeEntry) for entry, _ in results.values())
    assert any(isinstance(entry, RunEntry) for entry, _ in results.values())
    store = open_store(str(root))
    cache = open_cache(str(root), store)
    assert all(cache.get(rel) is None for rel in results)
    for rel, result in results.items():
        cache.put(rel, result)
    cache.save()
    reopened = open_cache(str(root), store)
    assert {rel: reopened.get(rel) for rel in results} == results


def big_cache(tmp_path: Path, files: int) -> BlobCache:
    """A cache of `files` results of ~50 KB each, not yet saved."""
    cache = BlobCache(tmp_path / "orv" / "cache-test.pickle", {f"runs/{i}.json": f"{i:040}" for i in range(files)})
    for rel in cache.blobs:
        cache.put(rel, (None, [rel * 2000]))
    return cache


def test_the_results_cache_is_streamed_into_its_file_never_held_whole(tmp_path: Path, monkeypatch) -> None:
    # pickled whole into memory first, the bench registry's ~300 MB of results took `orv check` with an
    # empty cache from ~530 MB to ~950 MB while it was written (issue 54, docs/scaling.md)
    cache = big_cache(tmp_path, 200)
    monkeypatch.setattr(pickle, "dumps", lambda *a, **k: pytest.fail("the whole pickle built as one bytes object"))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        cache.save()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert cache.path is not None
    size = cache.path.stat().st_size
    assert size > 4_000_000
    assert peak < size / 4  # the pickler's memo and one frame at a time, never the file's bytes
    with open(cache.path, "rb") as fh:
        assert pickle.load(fh) == cache.fresh


def test_a_results_cache_write_that_fails_midway_leaves_the_old_file_whole(tmp_path: Path) -> None:
    cache = big_cache(tmp_path, 50)
    cache.save()
    assert cache.path is not None
    before = cache.path.read_bytes()
    failing = big_cache(tmp_path, 60)
    failing.put("runs/59.json", (None, [lambda: None]))  # the last result cannot be pickled
    with pytest.raises((pickle.PicklingError, AttributeError)):
        failing.save()
    assert cache.path.read_bytes() == before  # never half of the new pickle
    assert list(tmp_path.rglob(f"{PREFIX}*")) == []  # its temporary removed


# --------------------------------------------------------------------------- the key index


def loaded_with_keys(root: Path) -> tuple[Store, dict[str, str], dict[str, RecipeEntry | RunEntry | None]]:
    """The registry's store, each committed file's blob id, and its entry as a cached check loads it (keys held)."""
    store = open_store(str(root))
    loaded = load_tree(str(root), store=store, keys=True)
    return store, loaded.blobs, {rel: loaded.results[rel][0] if rel in loaded.results else None for rel in loaded.blobs}


@pytest.mark.git
def test_the_key_index_gives_back_every_files_keys_before_and_after_it_is_reopened(tmp_path: Path) -> None:
    # pull-request mode takes a file's keys from the index instead of loading it (pr/incremental.py _BaseKeys):
    # what the index answers must be relations.keys_of, however it stores them
    root, run_rel = make_repo(tmp_path)
    store, blobs, entries = loaded_with_keys(root)
    assert all(isinstance(entry.keys, str) for entry in entries.values() if entry is not None)
    odd = replace(entries[run_rel])
    object.__setattr__(odd, "keys", ("s:inference:a\nb", "s:inference:c"))  # a key with a newline: held as a tuple
    entries[run_rel] = odd
    blobs["runs/ab/notes.txt"], entries["runs/ab/notes.txt"] = "0" * 40, None  # no entry: its path keys only
    expected = {rel: keys_of(rel, entry) for rel, entry in entries.items()}
    assert sum(len(keys) for keys in expected.values()) > 2 * len(expected)  # path and content keys, several

    index = open_index(store)  # none stored yet
    for rel, entry in entries.items():
        index.put(rel, blobs[rel], entry)
    assert {rel: index.get(rel, blobs[rel]) for rel in entries} == expected
    index.save()
    reopened = open_index(store)
    assert {rel: reopened.get(rel, blobs[rel]) for rel in entries} == expected
    assert all(reopened.get(rel, "f" * 40) is None for rel in entries)  # other bytes: no keys
    assert reopened.get("recipes/not/there.yaml", "0" * 40) is None
    assert indexed_blobs(store) == blobs


@pytest.mark.git
def test_the_key_index_holds_one_string_per_file_the_loaded_entrys_own(tmp_path: Path) -> None:
    # as separate strings, the bench registry's 21,542 files held 5.8 million keys: `orv boards` peaked at
    # 1.6 GB with the cache against 0.7 GB without (issue 54, docs/scaling.md)
    root, _ = make_repo(tmp_path)
    store, blobs, entries = loaded_with_keys(root)
    index_keys(store, blobs, {rel: (entry, []) for rel, entry in entries.items()})
    reopened = open_index(store)
    assert reopened.blobs == blobs
    assert all(type(held) is str for held in reopened.held.values())
    assert any("\n" in held for held in reopened.held.values())  # several keys in one string
    made = KeyIndex()
    for rel, entry in entries.items():
        made.put(rel, blobs[rel], entry)
        assert entry is not None and made.held[rel] is entry.keys  # no copy while the loaded registry is held


@pytest.mark.git
def test_a_full_check_rewrites_the_key_index_only_when_a_file_changed(tmp_path: Path) -> None:
    root, run_rel = make_repo(tmp_path)
    assert codes(root) == []
    (index_file,) = (root / ".git" / "orv").glob("index-*.pickle")
    before = index_file.stat().st_mtime_ns
    assert codes(root) == []
    assert index_file.stat().st_mtime_ns == before  # the same blob ids: its keys are not even read
    recipe = next(rel for rel in indexed_blobs(open_store(str(root))) if rel.startswith("recipes/"))
    (root / recipe).write_text((root / recipe).read_text() + "notes: edited\n")
    git(root, "commit", "-q", "-am", "an edited recipe")
    codes(root)
    store, blobs, entries = loaded_with_keys(root)
    assert indexed_blobs(store) == blobs  # the new blob id, and the keys of the file as it is now
    assert open_index(store).get(recipe, blobs[recipe]) == keys_of(recipe, entries[recipe])
