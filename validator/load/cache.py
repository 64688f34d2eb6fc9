"""Per-file results keyed by git blob id, so an unchanged file is never read or parsed twice.

A file's result (its loaded entry and its own findings) depends only on its bytes, the catalog
and orv itself. The cache is therefore one pickle per (orv source, schemas, catalog) key, stored in
the git directory (never in the work tree, never committed), mapping path -> (blob id, result).
Only files git reports as unmodified are looked up or stored: their blob id in the index is the
hash of their bytes, which git keeps fresh through its stat cache.
"""

from __future__ import annotations

import hashlib
import pickle
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable
else:  # Python 3.10 has no importlib.resources.abc
    from importlib.abc import Traversable

from validator.files.atomic import write_atomic_from
from validator.git.plumbing import clean_blobs, git_dir_of_top_level
from validator.load.schema import schema_dir
from validator.registry.catalog import file_bytes
from validator.registry.layout import MODELS_PATH
from validator.registry.relations import Keys, held_keys, path_keys, unheld
from validator.registry.snapshot import RecipeEntry, RunEntry

# The key also hashes every source file, so any change to orv invalidates stored results; the
# version says so explicitly when what a result means changes (2: the exact sample fingerprint; 3: the near-copy sketch and quality responses; 4: calibrated copy test, value sketches;
# 5: the key index holds a file's content keys as one string and no path keys, KeyIndex).
CACHE_VERSION = "5"
_SCOPE = ("recipes", "runs")


@dataclass
class BlobCache:
    path: Path | None = None
    blobs: dict[str, str] = field(default_factory=dict)  # clean tracked file -> blob id
    stored: dict[str, tuple[str, Any]] = field(default_factory=dict)
    fresh: dict[str, tuple[str, Any]] = field(default_factory=dict)

    def get(self, rel: str) -> Any | None:
        blob = self.blobs.get(rel)
        hit = self.stored.get(rel)
        if blob is not None and hit is not None and hit[0] == blob:
            self.fresh[rel] = hit
            return hit[1]
        return None

    def put(self, rel: str, result: Any) -> None:
        blob = self.blobs.get(rel)
        if blob is not None:
            self.fresh[rel] = (blob, result)

    def save(self) -> None:
        if self.path is None or self.fresh == self.stored:
            return
        _write(self.path, self.fresh)


def code_files() -> list[Traversable]:
    """orv's own sources and schemas: what every result depends on besides the registry.

    The schemas through importlib.resources' own API: in an installed wheel schema_dir() is a
    MultiplexedPath, whose str() is no path (globbing it found nothing, so schema changes did not
    change the key there; tests/unit/test_cache.py holds this)."""
    package = Path(__file__).resolve().parent.parent  # the whole validator package, not only load/
    schemas = sorted(
        (entry for entry in schema_dir().iterdir() if entry.name.endswith(".json")), key=lambda entry: entry.name
    )
    flag_tables = sorted((package / "stacks" / "flags").glob("*.json"))  # how a launch reads (ORV25x, ORV302)
    return [*sorted(package.rglob("*.py")), *flag_tables, *schemas]


def derivation_key(root: str) -> str:
    """Everything a per-file result depends on besides the file: orv's code, schemas, catalog.
    Also the stamp of the committed key file (validator/boards/keyfile.py)."""
    digest = hashlib.sha256(CACHE_VERSION.encode())
    catalog = sorted(Path(root, "catalog").glob("*.yaml"))
    for path in (*code_files(), *catalog):
        digest.update(str(path.name).encode())
        digest.update(path.read_bytes())
    # A run a model names as its convergence reference decides the verdict of every run checked against
    # it (load/references.py): its bytes are fixed by the digest the catalog holds, but whether it is
    # there at all is not, so its presence is part of the key.
    for rel in sorted(catalog_references(root)):
        present = Path(root, rel).is_file()
        digest.update(Path(rel).stem.encode() + (b"+" if present else b"-"))
    return digest.hexdigest()[:32]


def catalog_references(root: str) -> set[str]:
    """The run files catalog/models.yaml names (quality and convergence references), by path."""
    models = file_bytes(root, MODELS_PATH)
    if models is None:
        return set()
    return {f"runs/{h[:2].decode()}/{h.decode()}.json" for h in set(_RUN_REFERENCE.findall(models))}


_RUN_REFERENCE = re.compile(rb"sha256:([0-9a-f]{64})")


@dataclass(frozen=True)
class Store:
    """.git/orv of one registry and the key its stored results are valid under.

    Opened once per check: finding the git folder runs git, and the key hashes orv's sources, the
    schemas and the catalog. An inert Store (no folder) stores and finds nothing.
    """

    folder: Path | None = None
    key: str = ""

    def path(self, name: str) -> Path | None:
        return self.folder / f"{name}-{self.key}.pickle" if self.folder is not None else None


def open_store(root: str) -> Store:
    """The store of the repository whose top level is root; inert outside git or for a sub-folder registry."""
    git_dir = git_dir_of_top_level(root)
    return Store(Path(git_dir) / "orv", derivation_key(root)) if git_dir is not None else Store()


def open_cache(root: str, store: Store) -> BlobCache:
    """The per-file results for this registry (nothing is ever wrong with an inert store, only slower)."""
    path = store.path("cache")
    if path is None:
        return BlobCache()
    blobs = clean_blobs(root, _SCOPE)
    return BlobCache(path, blobs, _read(path)) if blobs is not None else BlobCache()


def _read(path: Path) -> dict[str, Any]:
    """The first value _write stored at path ({} if it cannot be read)."""
    return _read_values(path, 1)[0]


def _read_values(path: Path, count: int) -> list[dict[str, Any]]:
    """The first `count` values _write stored at path (each {} if any cannot be read): a reader
    that wants only the first reads no further."""
    try:
        with open(path, "rb") as fh:
            values = [pickle.load(fh) for _ in range(count)]  # noqa: S301 - our own file inside .git, written by orv
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return [{} for _ in range(count)]  # not [{}] * count: one dict twice, and KeyIndex fills both
    return values if all(isinstance(value, dict) for value in values) else [{} for _ in range(count)]


def _write(path: Path, *values: Any) -> None:
    """The values pickled one after the other into one file (read back by _read_values)."""
    try:
        write_atomic_from(str(path), lambda fh: _pickle_each(fh, values))
        prefix = path.name.split("-", 1)[0]
        for old in path.parent.glob(f"{prefix}-*.pickle"):
            if old != path:  # written for another orv/catalog version: never valid again
                old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only checkout still gets correct (uncached) results


def _pickle_each(fh: BinaryIO, values: tuple[Any, ...]) -> None:
    """Each value its own pickle, streamed into the file as it is made: the per-file results pickled
    whole into memory first (~300 MB at the bench registry's 21,542 files) took `orv check` with an
    empty cache from ~530 MB to ~950 MB while it was written (issue 54, docs/scaling.md)."""
    for value in values:
        pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)  # a pickler per value: each loads alone


@dataclass
class KeyIndex:
    """Each committed file's relation keys (validator/pr/neighbourhood.py) by path and blob id.

    Stored apart from the per-file results, so that a pull-request check reads it quickly and finds
    a change's neighbours without loading the ten thousand recipes the change does not touch. Same
    key as the per-file cache: keys depend on the file's bytes, its path, orv and the catalog.

    A file's content keys are held as its loaded entry holds them (relations.held_keys: one string,
    the entry's own), its path keys not at all (relations.path_keys makes them from the path). As a
    tuple of strings per file, the bench registry's 21,542 files held 5.8 million: `orv boards` peaked
    at 1.6 GB with the cache, 0.7 GB without (issue 54, docs/scaling.md). The blob ids are stored
    before the keys, so that a full check finding them unchanged reads nothing else (indexed_blobs).
    """

    path: Path | None = None
    blobs: dict[str, str] = field(default_factory=dict)  # path -> blob id
    held: dict[str, Keys | str] = field(default_factory=dict)  # path -> content keys, as held_keys holds them
    dirty: bool = False

    def get(self, rel: str, blob: str) -> Keys | None:
        """All of the file's keys (relations.keys_of) if its blob id is `blob`, else None."""
        return path_keys(rel) + unheld(self.held[rel]) if self.blobs.get(rel) == blob else None

    def put(self, rel: str, blob: str, entry: RecipeEntry | RunEntry | None) -> None:
        """Remember the keys of `rel` at `blob`, loaded as `entry` (None: no recipe or run file, or not loadable)."""
        held = held_keys(entry)
        if self.blobs.get(rel) != blob or self.held.get(rel) != held:
            self.blobs[rel], self.held[rel] = blob, held
            self.dirty = True

    def save(self) -> None:
        if self.path is not None and self.dirty:
            _write(self.path, self.blobs, self.held)
            self.dirty = False


def open_index(store: Store) -> KeyIndex:
    path = store.path("index")
    if path is None:
        return KeyIndex()
    blobs, held = _read_values(path, 2)
    # written together, so never apart; if they were, nothing is trusted
    return KeyIndex(path, blobs, held) if blobs.keys() == held.keys() else KeyIndex(path)


def indexed_blobs(store: Store) -> dict[str, str]:
    """The blob id of each file the stored key index holds, read without its keys."""
    path = store.path("index")
    return _read(path) if path is not None else {}


@dataclass
class Remembered:
    """One value computed from the catalog (and orv) alone, e.g. the loaded catalog itself."""

    path: Path | None = None
    value: Any = None

    def save(self, value: Any) -> None:
        if self.path is not None:
            _write(self.path, {"value": value})


def remembered(store: Store, name: str) -> Remembered:
    """What `name` was last computed as for this catalog and orv version (value None if never)."""
    path = store.path(name)
    return Remembered(path, _read(path).get("value")) if path is not None else Remembered()
