"""A change's neighbourhood: the only files whose findings a pull request can alter.

Every registry check decides about a file from that file alone (with the catalog), or from a
group of files that share a relation key:

    f:<path, case-folded>          ORV117 paths that differ only by case
    i:<id, and file stem, folded>  ORV301 one recipe per id; ORV602 ids are permanent
    r:<run digest>                 ORV203-ORV207 a recipe's references and the run files they name
                                   (a run file in the wrong shard folder carries its digest too)
    d:<configuration>              ORV302 one recipe per configuration
    c:<claims but the GPU count>   ORV303 claims copied across GPU counts
    s:<kind, count, quantile cells> ORV304 run files that could hold one measurement (independence.py)

So a file sharing no key with a changed file (its version at the merge base or in the working
tree) is judged the same before and after the change. Pull-request mode therefore checks only
the neighbourhood — the changed files, every file sharing a key with them, and every file
sharing a key with *those* (so each file whose findings can change sees all of its groups
complete) — once as it is and once as it was, and counts what the first has and the second
lacks. Files further out are judged identically on both sides, so leaving them out changes
nothing. Every registry check says on its @check which it is (`related_by=` a key, or
`per_file=True`); tests fail when a check is added without saying, and compare this mode with
checking everything.
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Mapping

from validator.checks.duplicates import copied_claim_key, identity
from validator.checks.integrity import raw_references
from validator.independence import buckets
from validator.load.cache import Store, open_index
from validator.load.pipeline import FileResult
from validator.registry import (
    RecipeEntry,
    RunEntry,
    classify,
    misplaced_run,
    run_digest_from_path,
)

Keys = tuple[str, ...]


def _short(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def path_keys(rel: str, kind: str | None = None) -> Keys:
    """The keys a file has by its path alone (all a run file has); `kind` is classify(rel) if known."""
    keys = ["f:" + rel.casefold()]
    kind = kind or classify(rel)
    if kind in ("run", "run-signature") or misplaced_run(rel):
        keys.append("r:" + (run_digest_from_path(rel) or ""))
    elif kind in ("recipe-training", "recipe-inference"):
        keys.append("i:" + rel.rsplit("/", 1)[-1].rsplit(".", 1)[0].casefold())
    return tuple(keys)


def content_keys(entry: RecipeEntry | RunEntry | None) -> Keys:
    """The keys a recipe or run file has by what it says (nothing for anything else)."""
    if isinstance(entry, RunEntry):
        if entry.meta is None or entry.facts is None:
            return ()
        return tuple(f"s:{entry.meta.kind}:{key}" for key in buckets(entry.facts.fingerprint))
    if not isinstance(entry, RecipeEntry):
        return ()
    keys = ["r:" + digest for _, digest in raw_references(entry)]
    if entry.id is not None:
        keys.append("i:" + entry.id.casefold())
    if entry.recipe is not None:
        keys += ["d:" + _short(identity(entry.recipe)), "c:" + _short(copied_claim_key(entry.recipe))]
    return tuple(dict.fromkeys(keys))


def keys_of(rel: str, entry: RecipeEntry | RunEntry | None) -> Keys:
    """All of a file's keys: by its path, and for a recipe by what it says (entry: its loaded entry)."""
    return path_keys(rel) + content_keys(entry)


def neighbourhood(base: Mapping[str, Keys], head: Mapping[str, Keys], changed: Iterable[str]) -> set[str]:
    """Changed files plus two hops over shared keys, on both sides of the change.

    base and head map every file on that side to its keys; files not in `changed` have the same
    keys on both sides, so only the changed ones are looked up in head.
    """
    changed = set(changed)

    def keys_of(rels: Iterable[str]) -> set[str]:
        return {key for rel in rels for side in (base, head) for key in side.get(rel, ())}

    def sharing(keys: set[str]) -> set[str]:  # one pass with C-level set tests; no index of every key
        found = {rel for rel, own in base.items() if not keys.isdisjoint(own)}
        return found | {rel for rel in changed if not keys.isdisjoint(head.get(rel, ()))}

    near = changed | sharing(keys_of(changed))
    return near | sharing(keys_of(near))


def index_keys(store: Store, blobs: Mapping[str, str], results: Mapping[str, FileResult]) -> None:
    """Remember each committed file's relation keys, so pull-request mode need not load it again."""
    index = open_index(store)
    for rel, blob in blobs.items():
        if index.get(rel, blob) is None:
            result = results.get(rel)
            index.put(rel, blob, keys_of(rel, result[0] if result else None))
    index.retain(blobs)
    index.save()
