"""boards/keys/ made with the pairs or the lines held at once, never both (issue 54: `orv boards`' peak
memory): keyfile.shard_contents gives the shards, byte for byte, that grouping every line first gave."""

from __future__ import annotations

import hashlib
import itertools
import operator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from validator.boards.keyfile import digits_for, key_line, shard_bytes, shard_contents, shard_name

KEYS = st.text(alphabet='abcn:0123456789é"\\', min_size=1, max_size=12)
BLOBS = st.integers(0, 40).map(lambda n: hashlib.sha1(str(n).encode()).hexdigest())


def grouped_first(pairs: list[tuple[str, str]]) -> tuple[int, int, dict[str, bytes]]:
    """The shards as `orv boards` made them before: every line, then each shard's lines."""
    ordered = sorted(pairs)
    keys, lines = [], []
    for key, group in itertools.groupby(ordered, key=operator.itemgetter(0)):
        keys.append(key)
        lines.append(key_line(key, {blob for _, blob in group}))
    total = sum(map(len, lines)) + 2 * len(lines)
    digits = digits_for(total)
    shards: dict[str, list[bytes]] = {}
    for key, line in zip(keys, lines):
        shards.setdefault(shard_name(key, digits), []).append(line)
    return digits, total, {name: shard_bytes(name, shards[name]) for name in sorted(shards)}


@given(st.lists(st.tuples(KEYS, BLOBS), max_size=60))
def test_shards_made_as_the_pairs_are_taken_equal_those_of_every_line_first(pairs: list[tuple[str, str]]) -> None:
    expected = grouped_first(pairs)
    given_pairs = sorted(pairs, reverse=True)
    digits, total, shards = shard_contents(given_pairs)
    assert given_pairs == []  # taken as the lines were made
    assert (digits, total) == expected[:2]
    assert {name: shard_bytes(name, [bytes(joined)]) for name, joined in shards.items()} == expected[2]


def test_a_key_held_by_several_files_is_one_line_with_each_blob_once() -> None:
    blob_a, blob_b = "a" * 40, "b" * 40
    pairs = sorted([("k", blob_b), ("k", blob_a), ("k", blob_a), ("j", blob_a)], reverse=True)
    digits, _, shards = shard_contents(pairs)
    lines = b",\n".join(joined for joined in shards.values())
    assert lines.count(b'"k":') == 1 and f'"k":["{blob_a}","{blob_b}"]'.encode() in lines
    assert digits == 1


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
