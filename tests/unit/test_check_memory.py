"""What `orv check` and `orv merge-results` keep in memory at a large registry's scale (issue 54), held
by structure rather than bytes: ORV304 groups its bucket keys without a dict of their strings and
finds exactly the pairs and ties that dict found; a recipe's parsed data shares the strings every
recipe repeats; the merge reads a partial's files again only from the bytes it checked."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.testing.registry import CASES, make_registry
from validator.checks.independence import tied_after
from validator.engine import shard
from validator.load.cache import Store
from validator.load.pipeline import load_tree
from validator.registry.snapshot import RecipeEntry
from validator.science.independence import ALL, VALUES, tie

# few buckets, so runs share them often; value-sketch, merge and smoothed-or-wide keys of two columns, which tie
# only several at a time (science/independence.py COUNTED_TIES), beside keys that tie alone
BUCKETS = [f"n:{i:x}" for i in range(6)] + [f"{k}:{c}:{i:x}" for k in "vmw" for c in ("ttft_ms", "0") for i in range(5)]
BUCKETS += [
    "v:ttft_ms",
    "m:0",
    "w:0",
]  # no hash after the column: a key that ties alone, though its start reads as counted


def by_dict(keyed: list[tuple[str, list[str]]]) -> dict[tuple[int, int], list[str]]:
    """ORV304's grouping as it was: a dict by key string; every pair of runs sharing a key, with the buckets."""
    groups: dict[str, list[int]] = {}
    for i, (_, keys) in enumerate(keyed):
        for key in keys:
            groups.setdefault(key, []).append(i)
    pairs: dict[tuple[int, int], list[str]] = {}
    for i, (_, keys) in enumerate(keyed):
        for key in keys:
            for j in groups[key]:
                if j > i:
                    pairs.setdefault((i, j), []).append(key.split(":", 2)[2])
    return pairs


@given(
    st.lists(
        st.tuples(st.sampled_from(["training", "inference"]), st.sets(st.sampled_from(BUCKETS), max_size=12)),
        max_size=12,
    )
)
def test_orv304_groups_by_hash_find_every_pair_and_tie_the_dict_of_strings_found(
    runs: list[tuple[str, set[str]]],
) -> None:
    keyed = [(kind, [f"s:{kind}:{bucket}" for bucket in sorted(buckets)]) for kind, buckets in runs]
    expected = {pair: tie(buckets) for pair, buckets in by_dict(keyed).items()}
    found = {(i, j): VALUES if values_only else ALL for i, later in tied_after(keyed) for j, values_only in later}
    # the same pairs (a key of another kind is another key), tied as `tie` ties their shared buckets
    assert found == {pair: how for pair, how in expected.items() if how is not None}
    order = [(i, [j for j, _ in later]) for i, later in tied_after(keyed)]
    assert [i for i, _ in order] == sorted({i for i, _ in found})  # each run once, in path order ...
    assert all(js == sorted(js) for _, js in order)  # ... with the runs after it in path order


def test_recipes_share_the_strings_their_parsed_data_repeats(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry", CASES / "orv304-copied-samples", CASES / "orv301-duplicate-id")
    recipes = [e for e, _ in load_tree(str(root), 1, None, Store()).results.values() if isinstance(e, RecipeEntry)]
    assert len(recipes) >= 2
    first, second = (next(k for k in e.doc.data if k == "hardware") for e in recipes[:2])
    assert first is second  # one string for a key every recipe has, not one per recipe
    gpus = [e.doc.data["hardware"]["gpu"] for e in recipes if e.doc.data.get("hardware")]
    assert len({id(g) for g in gpus}) == len(set(gpus))


def test_a_partial_that_changes_between_the_merges_two_reads_is_refused(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry", CASES / "orv304-copied-samples")
    out = str(tmp_path / "1-of-1.partial")
    shard.check_shard(str(root), shard.Shard(1, 1), out)
    first = shard.read_partial(out)
    assert first.files and shard.read_partial(out, checked=first.digest).files == first.files  # honest twin
    document = orjson.loads(Path(out).read_bytes())
    document["files"] = document["files"][:-1]  # one file's results left out after the shape was checked
    Path(out).write_bytes(orjson.dumps(document) + b"\n")
    with pytest.raises(shard.PartialRefused, match="changed while"):
        shard.read_partial(out, checked=first.digest)
    shutil.rmtree(root)
