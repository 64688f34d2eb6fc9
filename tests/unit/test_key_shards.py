"""boards/keys/ made with the pairs or the lines held at once, never both (issue 54: `orv boards`' peak
memory): keyfile.shard_contents gives the shards, byte for byte, that grouping every line first gave."""

from __future__ import annotations

import hashlib
import itertools
import operator

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
