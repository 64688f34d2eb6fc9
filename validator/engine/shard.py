"""Past one machine: `orv check --shard K/N` writes one shard's per-file results; `orv merge-results` joins them.

The per-file work (each recipe and run file loaded, schema-checked and run-file-checked on its
own, validator/load/pipeline.py) is split by path: a file's shard is a SHA-256 of its path alone,
so adding files never moves another file to another shard. What is not per-file (the catalog, the
registry, pull-request and boards checks) is the merge's: it loads the catalog itself and runs the
same registry checks as `orv check` on the merged results (engine.evaluate_loaded).

A partial result is one JSON document (schema/partial.schema.json): which orv wrote it (version, a
digest of its code, Python, pydantic), a digest of the registry tree, K and N, and each file's path,
entry and findings as plain data (validator/engine/datacodec.py). The data names no type and carries no
count or verdict: the merge checks the document against the schema, refuses any partial not written
by its own orv on its own tree, builds each entry as the type it declares for it (exact fields, the
models' own validation), and counts the findings itself. So a forged partial can make the merge
build nothing but well-typed data; what it can still do — leave findings about its own shard's files
out — is bounded by where partials come from (docs/scaling.md, "What a partial can still do").
"""

from __future__ import annotations

import functools
import gc
import hashlib
import os
import platform
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import orjson
import pydantic

from validator import __version__
from validator.diagnostics import Diagnostic, Severity
from validator.engine.datacodec import ShapeError, decode, encode
from validator.errors import UsageError
from validator.files.atomic import write_atomic
from validator.git.plumbing import clean_blobs, git_dir_of_top_level
from validator.load import schema as schemas
from validator.load.cache import Store, code_files
from validator.load.pipeline import FileResult, Loaded, compact, load_tree, loadable
from validator.registry.layout import REGISTRY_DIRS, discover
from validator.registry.snapshot import RecipeEntry, RunEntry

FORMAT = "orv partial result"
VERSION = 2  # 1 was a pickle
_FINDINGS = list[Diagnostic]


MAX_SPLIT = 10_000  # shards, or parts of ORV304's judging, of one matrix (GitHub runs at most 256 jobs of one)


@dataclass(frozen=True)
class Split:
    """K of N: a shard of the files, or a part of ORV304's pairs (engine/judging.py)."""

    k: int  # 1-based, as the matrix numbers its jobs
    n: int

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


def parse_split(text: str, option: str) -> tuple[int, int]:
    """K/N with 1 <= K <= N <= MAX_SPLIT, written in the digits 0-9 (Python's isdigit() also takes `²`)."""
    found = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", text)
    if found is None or not 1 <= int(found[1]) <= int(found[2]) <= MAX_SPLIT:
        raise UsageError(f"{option} {text}: write K/N with 1 <= K <= N <= {MAX_SPLIT:,}, e.g. {option} 2/4")
    return int(found[1]), int(found[2])


@dataclass(frozen=True)
class Shard(Split):
    def keeps(self, rel: str) -> bool:
        return shard_of(rel, self.n) == self.k


def parse_shard(text: str) -> Shard:
    """K/N, e.g. `--shard ${{ matrix.shard }}/4`."""
    return Shard(*parse_split(text, "--shard"))


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
    """What a partial's entries depend on besides the registry: orv, its code, Python, pydantic (the models)."""
    digest = hashlib.sha256()
    for path in code_files():
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return {
        "orv": __version__,
        "code": digest.hexdigest(),
        "python": platform.python_version(),
        "pydantic": pydantic.VERSION,
    }


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


def check_shard(
    root: str, shard: Shard, out_path: str, jobs: int = 1, progress: Callable[[int, int], None] | None = None
) -> Written:
    """Load shard's files (no .git/orv cache: a shard runs on a fresh runner, and its results would
    replace the whole registry's there) and write their results to out_path atomically."""
    loaded = load_tree(root, jobs, progress, Store(), only=shard.keeps)
    results = dict(sorted(loaded.results.items()))
    document = {
        "format": FORMAT,
        "version": VERSION,
        **runtime(),
        "tree": tree_digest(root),
        "shard": shard.k,
        "of": shard.n,
        "files": [
            {"path": rel, "entry": _entry_data(entry), "findings": encode(_FINDINGS, findings)}
            for rel, (entry, findings) in results.items()
        ],
    }
    data = orjson.dumps(document) + b"\n"
    write_atomic(out_path, data)
    return Written(out_path, len(results), sum(len(d) for _, d in results.values()), len(data))


def _entry_data(entry: RecipeEntry | RunEntry | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    if isinstance(entry, RecipeEntry):
        return {"recipe": encode(RecipeEntry, entry)}
    return {"run": encode(RunEntry, entry)}


# --------------------------------------------------------------------------- merging


class PartialRefused(UsageError):
    """A partial result that is not what a shard writes: reported as ORV901 on that file (exit 2)."""

    def __init__(self, path: str, message: str, hint: str) -> None:
        super().__init__(f"{path}: {message}")
        self.finding = Diagnostic("ORV901", Severity.ERROR, path, 1, 1, message, hint)


_RERUN = (
    "run that shard again (`orv check --shard K/N`) with the same orv on the same commit, and merge only "
    "partials of this workflow run"
)


@dataclass(frozen=True)
class Partial:
    path: str
    header: dict[str, Any]  # every field but the files
    files: list[Any]
    digest: bytes = b""  # SHA-256 of the file's bytes as read


def read_partial(path: str, checked: bytes | None = None) -> Partial:
    """A partial result as plain data, refused (PartialRefused) unless it has the schema's exact shape.
    `checked`: the digest of the bytes a first read of this file found of that shape; read again, the
    same bytes are not checked twice, and other bytes are refused."""
    if checked is None:
        document, digest = read_document(path, PARTIAL)
    else:
        raw = _read_bytes(path)
        digest = hashlib.sha256(raw).digest()
        if digest != checked:
            raise PartialRefused(path, "the file changed while `orv merge-results` read it", _RERUN)
        document = orjson.loads(raw)
        del raw
    files = document.pop("files")
    return Partial(path, document, files, digest)


@dataclass(frozen=True)
class FileKind:
    """One kind of JSON file an orv command writes for another (a shard's partial, a judging part's verdicts):
    how it is named and recognised, and what to do when it is refused (ORV901 on the file)."""

    label: str  # "partial result"
    written_by: str  # "`orv check --shard K/N`"
    format: str
    version: int
    schema: str  # its name in load/schema.py
    hints: tuple[str, str, str, str]  # for a file that is not JSON, of another format, version, or shape


PARTIAL = FileKind(
    "partial result",
    "`orv check --shard K/N`",
    FORMAT,
    VERSION,
    "partial",
    (
        "pass the files `orv check --shard K/N --partial-out FILE` wrote; " + _RERUN,
        "pass the files `orv check --shard K/N --partial-out FILE` wrote",
        "run every shard and the merge with the same orv",
        _RERUN,
    ),
)


def read_document(path: str, kind: FileKind) -> tuple[dict[str, Any], bytes]:
    """The file as plain data and the SHA-256 of its bytes, refused (PartialRefused) unless it is a `kind`
    document of this version with the schema's exact shape."""
    raw = _read_bytes(path)
    digest = hashlib.sha256(raw).digest()
    not_json, not_format, not_version, not_shape = kind.hints
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise PartialRefused(path, f"not a {kind.label} of {kind.written_by}: not JSON ({exc})", not_json) from None
    if not (isinstance(document, dict) and document.get("format") == kind.format):
        raise PartialRefused(path, f"not a {kind.label} of {kind.written_by}", not_format)
    if document.get("version") != kind.version:
        raise PartialRefused(
            path,
            f"{kind.label} version {document.get('version')!r}; this orv reads version {kind.version}",
            not_version,
        )
    problem = schemas.first_violation(kind.schema, document)
    if problem is not None:
        where, message = problem
        raise PartialRefused(path, f"not the shape of a {kind.label} at {where}: {message}", not_shape)
    return document, digest


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None


# What a file's entry is declared to be; decode builds nothing else.
_ENTRY_TYPES = {"recipe": RecipeEntry, "run": RunEntry}


def read_results(partial: Partial, runs_only: bool = False) -> dict[str, FileResult]:
    """A partial's per-file results by path, built as the declared types (validator/engine/datacodec.py).
    `runs_only`: a recipe's result is left undecoded, as (None, []): what judging ORV304's pairs reads
    (engine/judging.py) is the runs alone."""
    results: dict[str, FileResult] = {}
    for i, item in enumerate(partial.files):
        rel = item["path"]
        if rel in results:
            raise PartialRefused(partial.path, f"{rel} is listed twice", _RERUN)
        if runs_only and item["entry"] is not None and "recipe" in item["entry"]:
            results[rel] = (None, [])
            continue
        try:
            findings = decode(_FINDINGS, item["findings"])
            entry = None
            if item["entry"] is not None:
                ((kind, value),) = item["entry"].items()
                entry = decode(_ENTRY_TYPES[kind], value)
        except ShapeError as exc:
            raise PartialRefused(partial.path, f"files[{i}] ({rel}): {exc}", _RERUN) from None
        held = entry and (entry.doc.path if isinstance(entry, RecipeEntry) else entry.path)
        if entry is not None and {entry.path, held} != {rel}:
            raise PartialRefused(partial.path, f"files[{i}] holds the entry of {held}, not of {rel}", _RERUN)
        stray = next((d.path for d in findings if d.path != rel), None)
        if stray is not None:  # a shard reports on its own files; a finding elsewhere is not its to make
            raise PartialRefused(partial.path, f"files[{i}] ({rel}) carries a finding about {stray}", _RERUN)
        results[rel] = compact((entry, findings))  # as a loaded one is kept (load/pipeline.py)
    return results


def other_orv(header: dict[str, Any], mine: dict[str, str]) -> str:
    """How the orv that wrote a file (its header's runtime fields) differs from this one; "" when it does not."""
    return ", ".join(
        f"{key} {header.get(key)!s:.12} here {value:.12}" for key, value in mine.items() if header.get(key) != value
    )


def _refuse_mixing(partials: list[Partial], mine: dict[str, str], tree: str) -> int:
    """The shards' N, after refusing partials from another orv, another tree or an incomplete set."""
    for p in partials:
        differ = other_orv(p.header, mine)
        if differ:
            raise UsageError(
                f"{p.path}: written by another orv ({differ}): run every shard and the merge with "
                "the same orv and dependencies"
            )
        if p.header.get("tree") != tree:
            raise UsageError(
                f"{p.path}: shard {p.header['shard']}/{p.header['of']} checked another registry tree "
                "than this checkout (a file differs, was added or removed): check out the commit the "
                "shards checked, or run the shards again"
            )
    return complete_split(
        [(p.path, p.header["shard"], p.header["of"]) for p in partials],
        _PARTIALS,
    )


@dataclass(frozen=True)
class SplitFiles:
    """How complete_split words the files of one kind of split."""

    noun: str  # "shard", "part"
    files: str  # "partial result(s)"
    option: str  # "--shard"
    needs: str  # what the command needs, said when some are missing


_PARTIALS = SplitFiles("shard", "partial result(s)", "--shard", "merge-results needs every shard's partial result")


def complete_split(given: list[tuple[str, Any, Any]], what: SplitFiles) -> int:
    """N of a set of files each naming its K of N (path, K, N), after refusing (UsageError) splits of different N,
    an N or K that is no whole number in range, a K given twice, and a missing K."""
    sizes = sorted({n for _, _, n in given}, key=repr)
    if len(sizes) > 1:
        raise UsageError(
            f"{what.files.replace('(s)', 's')} of different splits (N = {', '.join(map(str, sizes))}): pass the "
            f"files of one `{what.option} K/N` matrix"
        )
    n = sizes[0]
    if type(n) is not int or n < 1:  # JSON `true` or `2.0` is no N
        raise UsageError(f"{given[0][0]}: a split into {n!r} {what.noun}s does not exist")
    seen: dict[int, str] = {}
    for path, k, _ in given:
        if type(k) is not int or not 1 <= k <= n:  # JSON `true` is not K = 1
            raise UsageError(f"{path}: {what.noun} {k}/{n} does not exist")
        if k in seen:
            raise UsageError(f"{what.noun} {k}/{n} given twice: {seen[k]} and {path}")
        seen[k] = path
    if n - len(seen) > 20:  # a header may claim any N: never list 10**15 missing ones
        raise UsageError(f"missing {what.noun}(s): {len(given)} {what.files} given for a split into {n}: {what.needs}")
    missing = [k for k in range(1, n + 1) if k not in seen]
    if missing:
        raise UsageError(f"missing {what.noun}(s) {', '.join(map(str, missing))} of {n}: {what.needs}")
    return n


@dataclass(frozen=True)
class Merged:
    loaded: Loaded
    partials: str  # a digest of the partials' bytes, in shard order: what a split judging is bound to (judging.py)
    tree: str  # tree_digest of the checkout, which every partial checked


def merge(
    root: str, paths: Iterable[str], progress: Callable[[int, int], None] | None = None, runs_only: bool = False
) -> Merged:
    """Every shard's per-file results, with the catalog and file list as this checkout has them: what
    engine.evaluate_loaded checks as `orv check` would. Refuses (UsageError) anything but one
    complete set of shards written by this orv on this tree. `runs_only`: recipes' results left undecoded
    (read_results), for judging ORV304's pairs."""
    enabled = gc.isenabled()
    # The partials' data and the entries built from it are millions of containers and no cycles: the
    # cyclic collector's passes over them as they grow were half the merge's time (10,000 run files).
    gc.disable()
    try:
        merged = _merge(root, paths, progress, runs_only)
    finally:
        if enabled:
            gc.enable()
    # the merged results live until the process ends: frozen, the registry checks' collections skip
    # them (as load_all freezes what it loads)
    gc.freeze()
    return merged


def _merge(
    root: str, paths: Iterable[str], progress: Callable[[int, int], None] | None, runs_only: bool = False
) -> Merged:
    # Each partial is read twice: first whole, for its shape and header (kept: a few fields and a digest),
    # then one at a time for its files, decoded and dropped before the next is read. At 100,000 run files
    # the 8 partials held at once as plain data were most of the merge's 7.7 GB (issue 54).
    partials = [_header_only(read_partial(p)) for p in paths]
    if not partials:
        raise UsageError("no partial results given: pass every `orv check --shard K/N --partial-out FILE` file")
    tree = tree_digest(root)
    n = _refuse_mixing(partials, runtime(), tree)
    loaded = load_tree(root, only=lambda rel: False)  # the catalog and file list; no per-file work
    expected: dict[int, set[str]] = {k: set() for k in range(1, n + 1)}
    for rel in loadable(root, loaded.files):
        expected[shard_of(rel, n)].add(rel)
    results: dict[str, FileResult] = {}
    in_order = sorted(partials, key=lambda p: p.header["shard"])
    digest = hashlib.sha256(b"".join(p.digest for p in in_order)).hexdigest()
    for done, header in enumerate(in_order, 1):
        partial = read_partial(header.path, checked=header.digest)
        part = read_results(partial, runs_only)
        partial.files.clear()  # decoded: its plain data is garbage now, not kept until the last shard's
        if progress:
            progress(done, len(partials))
        if set(part) != expected[header.header["shard"]]:
            raise UsageError(
                f"{partial.path}: shard {header.header['shard']}/{n} holds other files than this "
                "checkout puts in it: run the shards and the merge on the same commit"
            )
        results.update(part)
        del part
    return Merged(replace(loaded, results=results), digest, tree)


def _header_only(partial: Partial) -> Partial:
    """The partial without its files (read again when merged)."""
    return replace(partial, files=[])
