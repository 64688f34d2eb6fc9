"""A change's neighbourhood: the only files whose findings a pull request can alter.

Every registry check decides about a file from that file alone (with the catalog), or from a
group of files that share a relation key (validator/registry/relations.py lists them).

So a file sharing no key with a changed file (its version at the merge base or in the working
tree) is judged the same before and after the change. Pull-request mode therefore checks only
the neighbourhood — the changed files, every file sharing a key with them, and every file
sharing a key with *those* (so each file whose findings can change sees all of its groups
complete) — once as it is and once as it was, and counts what the first has and the second
lacks. Files further out are judged identically on both sides, so leaving them out changes
nothing. The second hop follows no pairwise key (relations.PAIRWISE: ORV304's sample keys): a
check that judges two files at a time can change its verdict only on a pair holding a changed
file, and every such pair is within the first hop; a pair of two unchanged files is judged the
same on both sides, or on neither. Every registry check says on its @check which it is (`related_by=` a key, or
`per_file=True`); tests fail when a check is added without saying, and compare this mode with
checking everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from validator.load.cache import KeyIndex, Store, indexed_blobs
from validator.load.pipeline import FileResult
from validator.registry.relations import Keys, grouping, ties


def neighbourhood(base: Mapping[str, Keys], head: Mapping[str, Keys], changed: Iterable[str]) -> set[str]:
    """Changed files plus two hops over shared keys (that tie: relations.ties; the second over grouping keys),
    on both sides of the change.

    base and head map every file on that side to its keys; files not in `changed` have the same
    keys on both sides, so only the changed ones are looked up in head.
    """
    changed = set(changed)

    def keys_of(rels: Iterable[str]) -> set[str]:
        return {key for rel in rels for side in (base, head) for key in side.get(rel, ())}

    def sharing(keys: set[str]) -> set[str]:  # one pass with C-level set tests; no index of every key
        found = {rel for rel, own in base.items() if not keys.isdisjoint(own) and ties(keys.intersection(own))}
        return found | {rel for rel in changed if ties(keys.intersection(head.get(rel, ())))}

    near = changed | sharing(keys_of(changed))
    return near | sharing(grouping(keys_of(near)))


def index_keys(store: Store, blobs: Mapping[str, str], results: Mapping[str, FileResult]) -> None:
    """Remember each committed file's relation keys, so pull-request mode need not load it again.

    A full check has loaded every file, each keyed entry holding its keys: the index is made anew from
    them (sharing their strings) unless it already holds exactly these files at these blob ids, which
    is decided without reading its keys (a file's keys depend only on its path and bytes, given the
    index's key: load/cache.py)."""
    if indexed_blobs(store) == blobs:
        return
    index = KeyIndex(store.path("index"), dirty=True)  # written even with no file, so none is listed
    for rel, blob in blobs.items():
        result = results.get(rel)
        index.put(rel, blob, result[0] if result else None)
    index.save()
