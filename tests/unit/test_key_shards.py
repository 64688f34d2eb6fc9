"""boards/keys/ made one shard at a time from the keys' hashes (issue 54: `orv boards`' peak memory):
keyfile.KeyShards gives the shards, byte for byte and in the same order, that grouping every (key, blob)
pair's string first gave, and says each shard's size and the lines' total before making any."""

from __future__ import annotations

import hashlib
import itertools
import operator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from validator.boards import keyfile
from validator.boards.keyfile import KeyShards, digits_for, key_line, shard_bytes, shard_name, shard_path
from validator.registry import relations
from validator.registry.snapshot import RunEntry

KEYS = st.text(alphabet='abcn:0123456789é"\\\n', min_size=1, max_size=12)
BLOBS = st.integers(0, 40).map(lambda n: hashlib.sha1(str(n).encode()).hexdigest())
# (blob, keys) per file: a blob may repeat (two files with one content), a key within a file too
FILES = st.lists(st.tuples(BLOBS, st.lists(KEYS, max_size=30).map(tuple)), max_size=40)
TARGETS = st.sampled_from([16 * 1024, 64, 16, 4, 1])  # SHARD_TARGET_BYTES: 1 to 4 hex digits


def grouped_first(files: list[tuple[str, tuple[str, ...]]]) -> tuple[int, int, dict[str, bytes]]:
    """The shards as `orv boards` made them before: every pair sorted by its strings, a line per key, then
    each shard's lines."""
    ordered = sorted((key, blob) for blob, keys in files for key in keys)
    keys, lines = [], []
    for key, group in itertools.groupby(ordered, key=operator.itemgetter(0)):
        keys.append(key)
        lines.append(key_line(key, {blob for _, blob in group}))
    total = sum(map(len, lines)) + 2 * len(lines)
    digits = digits_for(total)
    shards: dict[str, list[bytes]] = {}
    for key, line in zip(keys, lines):
        shards.setdefault(shard_name(key, digits), []).append(line)
    return digits, total, {shard_path(name): shard_bytes(name, shards[name]) for name in sorted(shards)}


def _made(files: list[tuple[str, tuple[str, ...] | str]]) -> tuple[int, int, dict[str, int], list[tuple[str, bytes]]]:
    shards = KeyShards(files)
    return shards.digits, shards.total, dict(shards.sizes), list(shards.made())


def _same(files: list[tuple[str, tuple[str, ...]]]) -> None:
    digits, total, expected = grouped_first(files)
    # each file's keys as a loaded entry holds them (relations.held_keys: one string where that gives them
    # back), and as a tuple
    held = [(blob, _held(keys)) for blob, keys in files]
    for each in (held, files):
        made_digits, made_total, sizes, made = _made(each)
        assert (made_digits, made_total) == (digits, total)
        assert made == list(expected.items())  # the same files, bytes and order (path order: as written)
        assert list(sizes.items()) == [(path, len(data)) for path, data in expected.items()]


def _held(keys: tuple[str, ...]) -> tuple[str, ...] | str:
    entry = RunEntry("runs/x.json", "", "", True, None, None)
    object.__setattr__(entry, "keys", None)
    with mock.patch.object(relations, "_computed_keys", lambda _: keys):
        keyed = relations.with_content_keys(entry)
    held = relations.held_keys(keyed)
    assert relations.content_keys(keyed) == keys  # given back as they were
    if keys and not any("\n" in key for key in keys):
        assert isinstance(held, str)
    return held


@given(FILES, TARGETS)
def test_shards_made_one_at_a_time_equal_those_of_every_pair_first(
    files: list[tuple[str, tuple[str, ...]]], target: int
) -> None:
    with mock.patch.object(keyfile, "SHARD_TARGET_BYTES", target):
        _same(files)


_real_hash = keyfile._hash64


@given(FILES, TARGETS)
def test_keys_with_one_hash_still_make_a_line_each(files: list[tuple[str, tuple[str, ...]]], target: int) -> None:
    """A 64-bit hash shared by two keys (~1 in 10^6 registries of 5 million keys) changes nothing: lines are
    made from the keys' strings, the hash only orders them. Here only the hash's bits that name the shard are
    kept, so every key of a shard has one hash."""
    with mock.patch.object(keyfile, "SHARD_TARGET_BYTES", target):
        digits = grouped_first(files)[0]
        kept = 64 - 4 * digits
        with mock.patch.object(keyfile, "_hash64", lambda key: _real_hash(key) >> kept << kept):
            _same(files)


def test_a_key_held_by_several_files_is_one_line_with_each_blob_once() -> None:
    blob_a, blob_b = "a" * 40, "b" * 40
    files = [(blob_b, ("k",)), (blob_a, ("k", "j", "k")), (blob_a, ("k",))]
    shards = KeyShards(files)
    lines = b"".join(data for _, data in shards.made())
    assert lines.count(b'"k":') == 1 and f'"k":["{blob_a}","{blob_b}"]'.encode() in lines
    assert shards.digits == 1
    _same(files)


def test_no_keys_no_shards() -> None:
    shards = KeyShards([("a" * 40, ()), ("b" * 40, ())])
    assert (shards.digits, shards.total, shards.sizes, list(shards.made())) == (1, 0, {}, [])
    assert KeyShards([]).sizes == {}


def test_a_large_key_set_spans_the_chunks_the_hashes_are_read_in() -> None:
    """More keys than one numpy call takes (keyfile._CHUNK), shared ones across a chunk's edge included."""
    files = [
        (hashlib.sha1(str(n).encode()).hexdigest(), tuple(f"s:k:{(n * 7 + i) % 9000}" for i in range(40)))
        for n in range(2000)
    ]
    with mock.patch.object(keyfile, "_CHUNK", 1000):
        _same(files)
    _same(files)


def test_the_committed_key_files_are_listed_whole_and_read_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """keyfile.committed_files lists every file under boards/keys/ (a left-over one, a symlink) without reading
    any: `orv boards` compares 65,536 shards (385 MiB at 10,000 run files) one by one."""
    import builtins
    import os

    from validator.boards import keyfile

    (tmp_path / "boards" / "keys" / "ab").mkdir(parents=True)
    (tmp_path / "boards" / "keys.json").write_bytes(b"{}\n")
    (tmp_path / "boards" / "keys" / "ab" / "c.json").write_bytes(b"shard\n")
    (tmp_path / "boards" / "keys" / "left-over.json").write_bytes(b"old\n")
    os.symlink("/etc/hostname", tmp_path / "boards" / "keys" / "ab" / "d.json")
    opened: list[str] = []
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    files = keyfile.committed_files(str(tmp_path))
    assert sorted(files) == [
        "boards/keys.json",
        "boards/keys/ab/c.json",
        "boards/keys/ab/d.json",
        "boards/keys/left-over.json",
    ]
    assert opened == []  # listed, none read
    assert "boards/keys/ab/c.json" in files and "boards/keys/none.json" not in files
    assert opened == []  # asking whether a file is there reads none (`orv boards` asks before each lookup)
    assert files["boards/keys/ab/c.json"] == b"shard\n" and files.get("boards/keys/ab/d.json") == b""
    assert files.get("boards/keys/none.json") is None and len(opened) == 1
    (tmp_path / "boards" / "keys" / "left-over.json").unlink()  # removed after the listing: missing, not empty
    assert files.get("boards/keys/left-over.json") is None
