"""boards/keys.json and boards/keys/: every recipe's and run file's relation keys, inverted and sharded by key.

A pull-request check finds the files a change can affect by their relation keys
(validator/registry/relations.py). A recipe's keys need its YAML parsed and a run file's need its samples
fingerprinted, so on a fresh runner (no `.git/orv` index) finding the neighbours of one new file
would load the whole registry. Main's boards workflow therefore publishes each committed file's
content keys beside the boards (`orv boards`), and ORV703 (`orv check --boards`) holds them equal
to a fresh regeneration.

They are stored as an inverted index, so the gate reads only what its change touches:

- boards/keys.json, a small header: `format`, the `orv` stamp, `digits` (a shard is named by the
  first `digits` hex digits of sha256(key)) and `trees`, the git tree ids of recipes/ and runs/ the
  keys were made from (as `git add -A` would make them: HEAD's once committed; null outside git);
- boards/keys/<hex>.json (boards/keys/<2 hex>/<rest>.json past two digits), one per non-empty shard: one line per key, `key: [blob id, …]`, the git
  blob ids of the files with that key. Content keys are a function of a file's bytes (and the
  catalog, in the stamp), so a blob id stands for every path holding those bytes, and the gate
  names them from the base tree's listing (paths it has without fetching a blob); a path per
  entry would make the shards three times larger.

A file's neighbours are the files sharing a key with it, and they can live at any path, so a
shard by path would not let the gate read less; a shard by key does: the gate reads the shards of
the changed files' keys (and of their neighbours'), a handful whatever the registry's size. A
merge rewrites the header (only when a tree moves) and the shards of the keys it touched.

The gate trusts the published keys only as far as it can be sure of them:

- it reads the merge base's committed files, never the pull request's copy;
- nothing is used unless the header's `orv` stamp equals this orv's derivation key (its code,
  schemas and the catalog: validator/load/cache.py), so keys made by another orv are never used;
- a file is taken as published only where the base tree's blob equals the one it had in the
  header's trees (git diffs the trees: whatever changed on main since is loaded), and an entry
  names a file only by its exact blob id.

Anything else is loaded as before, so stale keys cost time, never a finding. A wrong entry under
the right stamp and blob id (a hand edit on main) could hide a neighbour: ORV703 compares the
files with a regeneration on main, and ORV609 fails a pull request that edits any of them.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import os
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from validator.boards.split import file_reader
from validator.errors import Refusal
from validator.git.plumbing import clean_blobs, git_dir_of_top_level, worktree_trees
from validator.load.cache import derivation_key
from validator.registry.layout import KEYS_DIR, KEYS_PATH, LOADABLE
from validator.registry.relations import Keys, held_keys
from validator.registry.snapshot import Snapshot

FORMAT = 2
KEYED = LOADABLE  # files with keys by content: the recipes and run files
TREE_DIRS = ("recipes", "runs")  # where the keyed files live: the header names their trees
# A shard holds about this many bytes at most before the index uses one more hex digit (16x the shards),
# so what the gate reads per key stays small as the registry grows (bench/merge_bytes.py measures it).
# Past two digits the shards sit in folders by their first two (boards/keys/ab/c.json): a merge rewrites
# git's tree of boards/keys/ (256 entries) and of the folders it touched, never one tree of every shard.
SHARD_TARGET_BYTES = 16 * 1024
MAX_DIGITS = 4  # 65,536 shards: ~2 KB each at 100,000 files
_BLOB = re.compile(r"^[0-9a-f]{40}$")

Entries = Mapping[str, tuple[str, ...]]  # key -> git blob ids of the files with it


class KeysUnusable(Refusal):
    """A published shard cannot be read: the gate then finds every key by loading."""


@dataclass(frozen=True)
class Header:
    digits: int
    trees: Mapping[str, str]  # top folder -> git tree id the keys were made from
    total: int | None = None  # the shard lines' bytes (header_bytes), None in keys written before it


def blob_id(raw: bytes) -> str:
    """git's object id of a file with these bytes (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(raw) + raw, usedforsecurity=False).hexdigest()


def shard_name(key: str, digits: int) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:digits]


def shard_path(name: str) -> str:
    return f"{KEYS_DIR}/{name}.json" if len(name) <= 2 else f"{KEYS_DIR}/{name[:2]}/{name[2:]}.json"


def published_files(snapshot: Snapshot) -> dict[str, tuple[str, Keys]]:
    """path -> (git blob id, content keys) of every recipe and run file of this snapshot (the working tree)."""
    return {rel: (blob, tuple(_keys(held))) for rel, blob, held in _published(snapshot)}


def _published(snapshot: Snapshot) -> Iterator[tuple[str, str, Keys | str]]:
    """(path, git blob id, content keys as the entry holds them: relations.held_keys) of every recipe and
    run file of this snapshot, in path order."""
    root = snapshot.root
    # git's ids only where git's paths are the registry's (its top level), as the cache trusts them;
    # in a sub-folder registry `git status` names files from the top, so a modified file would look clean
    clean = (clean_blobs(root, TREE_DIRS) if git_dir_of_top_level(root) else None) or {}
    for rel in sorted(snapshot.loaded):  # every recipe and run file, links never (pipeline.loadable): KEYED
        blob = clean.get(rel) or _hash_file(root, rel)  # modified or untracked: hash its bytes as git would
        if blob is not None:
            yield rel, blob, held_keys(snapshot.loaded[rel][0])


def fresh_key_files(snapshot: Snapshot) -> dict[str, bytes]:
    """The files `orv boards` writes for the keys: {path: bytes}, the header and each non-empty shard, all held
    (tests and small registries; `orv boards` and ORV703 take them one shard at a time: fresh_keys)."""
    header, shards = fresh_keys(snapshot)
    return {KEYS_PATH: header, **dict(shards.made())}


def fresh_keys(snapshot: Snapshot) -> tuple[bytes, KeyShards]:
    """boards/keys.json's bytes and the shards under boards/keys/, each made when its turn comes."""
    shards = KeyShards((blob, held) for _, blob, held in _published(snapshot))
    trees = worktree_trees(snapshot.root, TREE_DIRS)
    return header_bytes(derivation_key(snapshot.root), shards.digits, trees, shards.total), shards


class KeyShards:
    """Every file's relation keys, inverted and sharded (module docstring), made one shard at a time.

    What is held is one 64-bit integer per (file, key): the head of the sha256 that names the key's shard
    above, the key's place among all keys below (as few bits as the count needs), sorted in place; and where
    each key's string is, in what the loaded entries hold (relations.held_keys: a file's keys as one string).
    A first pass over the sorted integers counts the lines' bytes (so the digits and every shard's size are
    known before a byte is written); `made()` walks them again, each shard's lines made, sorted and joined
    when its turn comes. Before, every (key, blob) pair was held as a tuple of strings, then every shard's
    bytes: at 10,000 run files most of `orv boards`' peak (docs/scaling.md, issue 54). Keys whose hash heads
    are equal only share a run of the array: every line is made from the keys' strings, grouped by them, so
    the bytes are those of grouping the strings.
    """

    def __init__(self, files: Iterable[tuple[str, Keys | str]]) -> None:
        import numpy  # only here: the gate's start-up (it reads shards, never makes them) does not pay for it

        self._numpy = numpy
        files = list(files)
        self._blobs = [blob for blob, _ in files]
        self._held = [held for _, held in files]  # each file's keys: a tuple, or one string (relations.held_keys)
        count = sum(len(_keys(held)) for held in self._held)
        self._bits = max(count.bit_length(), 1)  # the low bits: a key's place among all keys
        if self._bits > 64 - 4 * MAX_DIGITS:
            raise ValueError(f"{count} keys are more than a shard index can place")
        packed, places, quoted, ends = array("Q"), array("I"), array("I"), array("q")
        for held in self._held:
            keys = _keys(held)
            start, bits = len(packed), self._bits
            packed.extend(_hash64(key) >> bits << bits | start + n for n, key in enumerate(keys))
            if isinstance(held, str):  # where each key starts in the string
                places.extend(itertools.accumulate((len(key) + 1 for key in keys[:-1]), initial=0))
            else:
                places.extend(range(len(keys)))
            quoted.extend(map(len, map(orjson.dumps, keys)))  # each key's bytes in its line, quoted
            ends.append(len(packed))
        self._packed = numpy.frombuffer(packed, dtype=numpy.uint64)
        self._packed.sort()  # in place: by hash head, a shard's keys one run, shards in name order
        self._places = numpy.frombuffer(places, dtype=numpy.uint32)
        self._ends = numpy.frombuffer(ends, dtype=numpy.int64)
        by_prefix = self._line_bytes(numpy.frombuffer(quoted, dtype=numpy.uint32))
        self.total = int(by_prefix.sum())
        self.digits = digits_for(self.total)
        sizes = by_prefix.reshape(16**self.digits, -1).sum(axis=1)
        # each shard file's bytes (shard_bytes): its lines, each + 2, between its first and last lines, less
        # the separator the last line has not
        self.sizes = {
            shard_path(_name(name, self.digits)): len(shard_bytes(_name(name, self.digits), [])) + size - 2
            for name, size in enumerate(sizes.tolist())
            if size
        }

    def _line_bytes(self, quoted: Any) -> Any:
        """The lines' bytes (each + 2, as header_bytes counts them) by the first MAX_DIGITS hex digits of their
        keys' hashes: a key whose hash head no other key has is one line naming one blob, counted with numpy;
        the others are grouped by their strings (and their blobs as a set), a run of equal heads at a time."""
        numpy = self._numpy
        blob_bytes = numpy.array([len(blob) + 3 for blob in self._blobs], dtype=numpy.int64)
        by_prefix = numpy.zeros(16**MAX_DIGITS, dtype=numpy.int64)
        for low, high in self._chunks():
            heads = self._packed[low:high] >> numpy.uint64(self._bits)
            at, owners = self._placed(low, high)
            prefixes = (self._packed[low:high] >> numpy.uint64(64 - 4 * MAX_DIGITS)).astype(numpy.int64)
            new = heads[1:] != heads[:-1]
            alone = numpy.concatenate(([True], new)) & numpy.concatenate((new, [True]))
            numpy.add.at(
                by_prefix, prefixes[alone], quoted[at[alone]].astype(numpy.int64) + blob_bytes[owners[alone]] + 4
            )
            shared = numpy.flatnonzero(~alone)
            lines: dict[str, set[str]] = {}
            current, in_prefix = -1, 0
            for head, prefix, owner, place in zip(
                heads[shared].tolist(),
                prefixes[shared].tolist(),
                owners[shared].tolist(),
                self._places[at[shared]].tolist(),
                strict=True,
            ):
                if head != current:
                    by_prefix[in_prefix] += sum(_line_size(key, blobs) + 2 for key, blobs in lines.items())
                    current, in_prefix, lines = head, prefix, {}
                lines.setdefault(self._key(owner, place), set()).add(self._blobs[owner])
            by_prefix[in_prefix] += sum(_line_size(key, blobs) + 2 for key, blobs in lines.items())
        return by_prefix

    def made(self) -> Iterator[tuple[str, bytes]]:
        """(path, bytes) of each non-empty shard, in path order, each made only when the one before is taken."""
        shift = self._numpy.uint64(64 - 4 * self.digits)
        current = -1
        pairs: list[tuple[str, str]] = []
        for low, high in self._chunks():
            at, owners = self._placed(low, high)
            for name, owner, place in zip(
                (self._packed[low:high] >> shift).tolist(), owners.tolist(), self._places[at].tolist(), strict=True
            ):
                if name != current:
                    if pairs:
                        yield _shard_file(_name(current, self.digits), pairs)
                    current, pairs = name, []
                pairs.append((self._key(owner, place), self._blobs[owner]))
        if pairs:
            yield _shard_file(_name(current, self.digits), pairs)

    def _key(self, owner: int, place: int) -> str:
        """The key at `place` in file `owner`'s keys (an index, or where it starts in their one string)."""
        held = self._held[owner]
        if not isinstance(held, str):
            return held[place]
        end = held.find("\n", place)
        return held[place:] if end < 0 else held[place:end]

    def _chunks(self) -> Iterator[tuple[int, int]]:
        """[low, high) ranges of the sorted keys, about _CHUNK each, never splitting a run of equal hash heads."""
        count, low, bits = len(self._packed), 0, self._numpy.uint64(self._bits)
        while low < count:
            high = min(low + _CHUNK, count)
            while high < count and self._packed[high] >> bits == self._packed[high - 1] >> bits:
                high += 1
            yield low, high
            low = high

    def _placed(self, low: int, high: int) -> tuple[Any, Any]:
        """For the sorted keys low..high: each one's place among all keys, and its file."""
        numpy = self._numpy
        at = (self._packed[low:high] & numpy.uint64((1 << self._bits) - 1)).astype(numpy.int64)
        return at, numpy.searchsorted(self._ends, at, side="right")


_CHUNK = 1 << 16  # sorted keys handled per numpy call


def _keys(held: Keys | str) -> Sequence[str]:
    return held.split("\n") if isinstance(held, str) else held


def _hash64(key: str) -> int:
    """The first 8 bytes of the sha256 that names the key's shard (shard_name), as an unsigned integer."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:8], "big")


def _name(prefix: int, digits: int) -> str:
    return f"{prefix:0{digits}x}"


def _line_size(key: str, blobs: Iterable[str]) -> int:
    """len(key_line(key, blobs)): `"key":` and `["<blob>",...]` (a blob id is hex: nothing to escape)."""
    return len(orjson.dumps(key)) + 2 + sum(len(blob) + 3 for blob in blobs)


def _shard_file(name: str, pairs: list[tuple[str, str]]) -> tuple[str, bytes]:
    """A shard's path and bytes from its (key, blob) pairs: one line per key, in key order."""
    pairs.sort()
    lines = [key_line(key, {blob for _, blob in group}) for key, group in itertools.groupby(pairs, _first)]
    return shard_path(name), shard_bytes(name, lines)


_first = operator.itemgetter(0)


def key_line(key: str, blobs: Iterable[str]) -> bytes:
    """One shard line: `"key":["blob",...]`, the blobs sorted."""
    return orjson.dumps(key) + b":" + orjson.dumps(sorted(blobs))


def digits_for(total: int) -> int:
    """How many hex digits name a shard, for lines of `total` bytes (SHARD_TARGET_BYTES)."""
    digits = 1
    while digits < MAX_DIGITS and total > SHARD_TARGET_BYTES * 16**digits:
        digits += 1
    return digits


def header_bytes(stamp: str, digits: int, trees: Mapping[str, str] | None, total: int) -> bytes:
    """boards/keys.json: `bytes` is the lines' total (each + 2), so a merge's update (patched_key_files)
    knows when the shards would take one more digit without reading them all."""
    header = {"format": FORMAT, "orv": stamp, "digits": digits, "trees": trees, "bytes": total}
    return orjson.dumps(header, option=orjson.OPT_SORT_KEYS) + b"\n"


def shard_bytes(name: str, lines: Iterable[bytes]) -> bytes:
    return b'{"format":%d,"shard":"%s","keys":{\n' % (FORMAT, name.encode()) + b",\n".join(lines) + b"\n}}\n"


@dataclass(frozen=True)
class FileKeys:
    """One version of a changed keyed file: its git blob id and content keys."""

    blob: str
    keys: Keys


def patched_key_files(
    read: Callable[[str], bytes | None],
    header: Header,
    total: int,
    changes: Iterable[tuple[FileKeys | None, FileKeys | None]],
    still_held: Callable[[str], bool],
    stamp: str,
    trees: Mapping[str, str] | None,
) -> tuple[dict[str, bytes], list[str]] | None:
    """A merge's update of the keys (`orv boards --incremental`): ({path: bytes} to write, paths to remove)
    — the header and the shards of the keys the changed files had or have — or None when the shards would
    take another digit (every shard moves: regenerate them all). `changes` holds each changed file's
    (old version, new version), None where absent or without keys; `still_held(blob)`: does an unchanged
    keyed file of the new tree hold those bytes (then its keys keep that blob). Raises KeysUnusable when a
    shard it reads is malformed."""
    changes = list(changes)
    affected = {key for pair in changes for side in pair if side is not None for key in side.keys}
    names = sorted({shard_name(key, header.digits) for key in affected})
    shards = {name: dict(read_shard(read(shard_path(name)), name)) for name in names}
    for key in affected:
        entries = shards[shard_name(key, header.digits)]
        before = entries.get(key, ())
        after = set(before)
        for old, _new in changes:
            if old is not None and key in old.keys and not still_held(old.blob):
                after.discard(old.blob)
        for _old, new in changes:
            if new is not None and key in new.keys:
                after.add(new.blob)
        if before:
            total -= len(key_line(key, before)) + 2
        if after:
            total += len(key_line(key, after)) + 2
            entries[key] = tuple(sorted(after))
        else:
            entries.pop(key, None)
    if digits_for(total) != header.digits:
        return None
    files = {KEYS_PATH: header_bytes(stamp, header.digits, trees, total)}
    removed = []
    for name, entries in shards.items():
        if entries:
            files[shard_path(name)] = shard_bytes(name, [key_line(key, entries[key]) for key in sorted(entries)])
        else:
            removed.append(shard_path(name))
    return files, removed


def _hash_file(root: str, rel: str) -> str | None:
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            return blob_id(fh.read())
    except OSError:
        return None


def read_header(raw: bytes | None, stamp: str) -> Header | None:
    """The header of committed keys made under `stamp`; None when absent, malformed, made by another orv
    or outside git (module docstring: nothing here is ever needed, only time-saving)."""
    if not raw:
        return None
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict) or document.get("format") != FORMAT or document.get("orv") != stamp:
        return None
    digits, trees = document.get("digits"), document.get("trees")
    if (
        not isinstance(digits, int)
        or isinstance(digits, bool)
        or not 1 <= digits <= MAX_DIGITS
        or not isinstance(trees, dict)
        or set(trees) != set(TREE_DIRS)
        or not all(isinstance(t, str) and _BLOB.match(t) for t in trees.values())
    ):
        return None
    total = document.get("bytes")
    return Header(digits, dict(trees), total if type(total) is int and total >= 0 else None)


def read_shard(raw: bytes | None, name: str) -> Entries:
    """A shard's entries; empty when absent (no key falls in it). Raises KeysUnusable when malformed."""
    if raw is None:
        return {}
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise KeysUnusable(f"{shard_path(name)} is not JSON") from None
    if (
        not isinstance(document, dict)
        or document.get("format") != FORMAT
        or document.get("shard") != name
        or not isinstance(document.get("keys"), dict)
    ):
        raise KeysUnusable(f"{shard_path(name)} is not a key shard of format {FORMAT}")
    entries: dict[str, tuple[str, ...]] = {}
    for key, blobs in document["keys"].items():
        if not isinstance(blobs, list) or not all(isinstance(b, str) and _BLOB.match(b) for b in blobs):
            raise KeysUnusable(f"{shard_path(name)} has a malformed entry for key {key[:40]!r}")
        entries[key] = tuple(blobs)
    return entries


def committed_files(root: str) -> Mapping[str, bytes]:
    """The header and every file under boards/keys/ in the working tree (a left-over shard counts);
    a symlink reads as empty, so it always differs from a regeneration. Each file is read when asked
    for, never all at once: at 10,000 run files the shards hold 385 MiB (docs/scaling.md)."""
    paths = [KEYS_PATH]
    folder = os.path.join(root, KEYS_DIR)
    for here, dirs, names in os.walk(folder):  # a symlinked folder is listed, never followed
        dirs.sort()
        rel = os.path.relpath(here, root).replace(os.sep, "/")
        paths += [
            f"{rel}/{name}" for name in sorted(names + [d for d in dirs if os.path.islink(os.path.join(here, d))])
        ]
    return _FilesOnDisk(root, [rel for rel in paths if _present(os.path.join(root, rel))])


def _present(full: str) -> bool:
    return os.path.islink(full) or os.path.isfile(full)


class _FilesOnDisk(Mapping[str, bytes]):
    """{path: bytes} of the files at `paths` under root, each read when looked up (boards/split.py's
    file_reader: a symlink as empty; one removed since the listing is missing)."""

    def __init__(self, root: str, paths: list[str]) -> None:
        self._read = file_reader(root)
        self._paths = dict.fromkeys(paths)

    def __getitem__(self, rel: str) -> bytes:
        raw = self._read(rel) if rel in self._paths else None
        if raw is None:
            raise KeyError(rel)
        return raw

    def __contains__(self, rel: object) -> bool:  # the listing, without reading the file (Mapping's would)
        return rel in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)
