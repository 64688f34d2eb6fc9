"""Past one machine: `orv check --shard K/N` writes one shard's per-file results; `orv merge-results` joins them.

The per-file work (each recipe and run file loaded, schema-checked and run-file-checked on its
own, validator/load/pipeline.py) is split by path: a file's shard is a SHA-256 of its path alone,
so adding files never moves another file to another shard. What is not per-file (the catalog, the
registry, pull-request and boards checks) is the merge's: it loads the catalog itself and runs the
same registry checks as `orv check` on the merged results (engine.evaluate_loaded).

A partial result is one file: a magic line, a JSON header (format, orv and its runtime, a digest of
orv's code, a digest of the registry tree, K and N, the body's SHA-256), then the body: a pickle of
the shard's per-file results, the same objects the .git/orv cache already pickles. Pickle is
acceptable here because partials are artifacts of one workflow run, written by the same orv on the
same commit; even so the merge refuses every header that does not match its own orv and checkout
before it reads any body, checks the body's hash, and unpickles with an allow-list that resolves
only orv's data types (dataclasses, pydantic models, enums) and a few builtin containers — no
function, so a crafted body cannot call anything.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import io
import json
import os
import pickle
import platform
import stat
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable

import pydantic

from validator import __version__
from validator.atomic import write_atomic
from validator.diagnostics import Diagnostic
from validator.errors import UsageError
from validator.git import clean_blobs, git_dir_of_top_level
from validator.load.cache import Store, code_files
from validator.load.pipeline import FileResult, Loaded, load_tree, loadable
from validator.registry import REGISTRY_DIRS, RecipeEntry, RunEntry, discover

MAGIC = b"orv partial result\n"
FORMAT = 1
_HEADER_LIMIT = 64 * 1024  # the JSON header line; the body follows it


@dataclass(frozen=True)
class Shard:
    k: int  # 1-based, as the matrix numbers its jobs
    n: int

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"

    def keeps(self, rel: str) -> bool:
        return shard_of(rel, self.n) == self.k


def parse_shard(text: str) -> Shard:
    """K/N with 1 <= K <= N, e.g. `--shard ${{ matrix.shard }}/4`."""
    k, sep, n = text.partition("/")
    if not sep or not k.strip().isdigit() or not n.strip().isdigit() or not 1 <= int(k) <= int(n):
        raise UsageError(f"--shard {text}: write K/N with 1 <= K <= N, e.g. --shard 2/4")
    return Shard(int(k), int(n))


def shard_of(rel: str, n: int) -> int:
    """The shard (1..n) of a registry path: from the path alone (SHA-256, not Python's salted hash()),
    so it is the same on every runner and adding files never moves another file."""
    digest = hashlib.sha256(rel.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % n + 1


def default_partial_path(shard: Shard) -> str:
    """Where a shard writes when --partial-out is not given: the current folder (what a workflow uploads)."""
    return f"orv-shard-{shard.k}-of-{shard.n}.partial"


# --------------------------------------------------------------------------- identity


@functools.cache  # orv's code does not change while it runs
def runtime() -> dict[str, str]:
    """What a partial's pickled objects depend on besides the registry: orv, its code, Python, pydantic."""
    digest = hashlib.sha256()
    for path in code_files():
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return {"orv": __version__, "code": digest.hexdigest(),
            "python": platform.python_version(), "pydantic": pydantic.VERSION}


def _blob_id(data: bytes) -> str:
    """git's id for a file's bytes (`git hash-object`), so clean and modified files are named alike."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def tree_digest(root: str) -> str:
    """A digest of every registry file's path and bytes (git's blob ids where git vouches for them;
    the bytes hashed otherwise): shards and merge must have checked out the same tree."""
    # git's listing is trusted only at the repository's top level, as for the cache (cache.open_store)
    blobs = (clean_blobs(root, REGISTRY_DIRS) if git_dir_of_top_level(root) is not None else None) or {}
    digest = hashlib.sha256()
    for rel in discover(root):
        full = os.path.join(root, rel)
        st = os.lstat(full)
        if rel in blobs and stat.S_ISREG(st.st_mode):
            ident = blobs[rel]
        elif stat.S_ISLNK(st.st_mode):
            ident = "link:" + os.readlink(full)
        elif stat.S_ISREG(st.st_mode):
            try:
                with open(full, "rb") as fh:
                    ident = _blob_id(fh.read())
            except OSError as exc:  # the load reports the file; the digest only needs to be repeatable
                ident = f"unreadable:{exc.errno}"
        else:
            ident = f"mode:{st.st_mode:o}"
        digest.update(f"{rel}\0{ident}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


# --------------------------------------------------------------------------- one shard


@dataclass(frozen=True)
class Written:
    path: str
    files: int  # recipes and run files this shard loaded
    findings: int  # findings about them (reported by the merge)
    size: int  # bytes written


def check_shard(root: str, shard: Shard, out_path: str, jobs: int = 1,
                progress: Callable[[int, int], None] | None = None) -> Written:
    """Load shard's files (no .git/orv cache: a shard runs on a fresh runner, and its results would
    replace the whole registry's there) and write their results to out_path atomically."""
    header = {"format": FORMAT, **runtime(), "tree": tree_digest(root), "shard": shard.k, "of": shard.n}
    loaded = load_tree(root, jobs, progress, Store(), only=shard.keeps)
    results = dict(sorted(loaded.results.items()))
    body = pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)
    header.update(files=len(results), body=hashlib.sha256(body).hexdigest())
    data = MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + body
    write_atomic(out_path, data)
    return Written(out_path, len(results), sum(len(d) for _, d in results.values()), len(data))


# --------------------------------------------------------------------------- merging


@dataclass(frozen=True)
class Partial:
    path: str
    header: dict[str, Any]
    offset: int  # where the body starts


def read_header(path: str) -> Partial:
    """A partial result's header, refused (UsageError) if the file is not one this orv reads."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC) + _HEADER_LIMIT)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None
    end = head.find(b"\n", len(MAGIC))
    header = None
    if head.startswith(MAGIC) and end > 0:
        try:
            header = json.loads(head[len(MAGIC):end])
        except ValueError:
            header = None
    if not (isinstance(header, dict) and isinstance(header.get("shard"), int) and isinstance(header.get("of"), int)):
        raise UsageError(f"{path}: not a partial result of `orv check --shard K/N`")
    if header.get("format") != FORMAT:
        raise UsageError(f"{path}: partial result format {header.get('format')!r}; this orv reads format {FORMAT}: "
                         "run every shard and the merge with the same orv")
    return Partial(path, header, end + 1)


def _refuse_mixing(partials: list[Partial], mine: dict[str, str], tree: str) -> int:
    """The shards' N, after refusing partials from another orv, another tree or an incomplete set."""
    for p in partials:
        theirs = {key: p.header.get(key) for key in mine}
        if theirs != mine:
            differ = ", ".join(f"{key} {theirs[key]!s:.12} here {mine[key]:.12}" for key in mine
                               if theirs[key] != mine[key])
            raise UsageError(f"{p.path}: written by another orv ({differ}): run every shard and the merge with "
                             "the same orv and dependencies")
        if p.header.get("tree") != tree:
            raise UsageError(f"{p.path}: shard {p.header['shard']}/{p.header['of']} checked another registry tree "
                             "than this checkout (a file differs, was added or removed): check out the commit the "
                             "shards checked, or run the shards again")
    sizes = sorted({p.header["of"] for p in partials})
    if len(sizes) > 1:
        raise UsageError(f"partials of different splits (N = {', '.join(map(str, sizes))}): merge the shards of one "
                         "`--shard K/N` matrix")
    n = sizes[0]
    if type(n) is not int or n < 1:
        raise UsageError(f"{partials[0].path}: a split into {n!r} shards does not exist")
    seen: dict[int, str] = {}
    for p in partials:
        k = p.header["shard"]
        if type(k) is not int or not 1 <= k <= n:  # JSON `true` is not shard 1
            raise UsageError(f"{p.path}: shard {k}/{n} does not exist")
        if k in seen:
            raise UsageError(f"shard {k}/{n} given twice: {seen[k]} and {p.path}")
        seen[k] = p.path
    if n - len(seen) > 20:  # a header may claim any N: never list 10**15 missing shards
        raise UsageError(f"missing shard(s): {len(partials)} partial result(s) given for a split into {n}: "
                         "merge-results needs every shard's partial result")
    missing = [k for k in range(1, n + 1) if k not in seen]
    if missing:
        raise UsageError(f"missing shard(s) {', '.join(map(str, missing))} of {n}: merge-results needs every "
                         "shard's partial result")
    return n


# Builtins a body may name (pickle names sets by name; YAML gives dates; the rest are opcodes).
_BUILTINS = {("builtins", "set"), ("builtins", "frozenset"), ("datetime", "date"), ("datetime", "datetime"),
             ("datetime", "timedelta"), ("datetime", "timezone")}


class _DataOnly(pickle.Unpickler):
    """Resolves orv's data types and a few builtins, nothing callable beyond constructing them."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _BUILTINS:
            return super().find_class(module, name)
        if module.split(".")[0] == "validator":
            found = super().find_class(module, name)
            if isinstance(found, type) and (dataclasses.is_dataclass(found)
                                            or issubclass(found, (pydantic.BaseModel, enum.Enum))):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not one of orv's data types")


def read_results(partial: Partial) -> dict[str, FileResult]:
    """A partial result's per-file results by path, once its header has been accepted."""
    with open(partial.path, "rb") as fh:
        fh.seek(partial.offset)
        body = fh.read()
    if hashlib.sha256(body).hexdigest() != partial.header.get("body"):
        raise UsageError(f"{partial.path}: the partial result is truncated or damaged (its body does not match "
                         "its header): download it again, or run that shard again")
    try:
        results = _DataOnly(io.BytesIO(body)).load()
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError) as exc:
        raise UsageError(f"{partial.path}: not a partial result this orv can read ({exc})") from None
    if not isinstance(results, dict) or not all(map(_is_file_result, results.values())):
        raise UsageError(f"{partial.path}: not a partial result this orv can read")
    return results


def _is_file_result(value: Any) -> bool:
    return (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], (RecipeEntry, RunEntry, type(None)))
            and isinstance(value[1], list) and all(isinstance(d, Diagnostic) for d in value[1]))


def merge(root: str, paths: Iterable[str], progress: Callable[[int, int], None] | None = None) -> Loaded:
    """Every shard's per-file results, with the catalog and file list as this checkout has them: what
    engine.evaluate_loaded checks as `orv check` would. Refuses (UsageError) anything but one
    complete set of shards written by this orv on this tree."""
    partials = [read_header(p) for p in paths]
    if not partials:
        raise UsageError("no partial results given: pass every `orv check --shard K/N --partial-out FILE` file")
    n = _refuse_mixing(partials, runtime(), tree_digest(root))
    loaded = load_tree(root, only=lambda rel: False)  # the catalog and file list; no per-file work
    expected: dict[int, set[str]] = {k: set() for k in range(1, n + 1)}
    for rel in loadable(root, loaded.files):
        expected[shard_of(rel, n)].add(rel)
    results: dict[str, FileResult] = {}
    for done, partial in enumerate(sorted(partials, key=lambda p: p.header["shard"]), 1):
        part = read_results(partial)
        if progress:
            progress(done, len(partials))
        if set(part) != expected[partial.header["shard"]]:
            raise UsageError(f"{partial.path}: shard {partial.header['shard']}/{n} holds other files than this "
                             "checkout puts in it: run the shards and the merge on the same commit")
        results.update(part)
    return replace(loaded, results=results)
