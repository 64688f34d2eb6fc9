"""A change's neighbourhood: the only files whose findings a pull request can alter.

Every registry check decides about a file from that file alone (with the catalog), or from a
group of files that share a relation key:

    f:<path, case-folded>          ORV117 paths that differ only by case
    i:<id, and file stem, folded>  ORV301 one recipe per id; ORV602 ids are permanent
    r:<run digest>                 ORV203-ORV207 a recipe's references and the run files they name
                                   (a run file in the wrong shard folder carries its digest too)
    d:<configuration>              ORV302 one recipe per configuration
    c:<claims but the GPU count>   ORV303 claims copied across GPU counts

So a file sharing no key with a changed file (its version at the merge base or in the working
tree) is judged the same before and after the change. Pull-request mode therefore checks only
the neighbourhood — the changed files, every file sharing a key with them, and every file
sharing a key with *those* (so each file whose findings can change sees all of its groups
complete) — once as it is and once as it was, and counts what the first has and the second
lacks. Files further out are judged identically on both sides, so leaving them out changes
nothing. `RELATED_BY` and `PER_FILE` classify every registry check; tests fail when a check is
added without saying which it is, and compare this mode with checking everything.
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterable, Mapping

from validator.registry import RecipeEntry, classify, misplaced_run, run_digest_from_path

# Registry checks that compare files, and the relation key that joins the files they compare.
RELATED_BY = {
    "ORV117": "f", "ORV301": "i", "ORV302": "d", "ORV303": "c",
    "ORV203": "r", "ORV204": "r", "ORV205": "r", "ORV206": "r", "ORV207": "r",
}
# Registry checks that judge each file alone (with the catalog, which pull-request mode never
# sees change: a catalog change makes it check everything).
PER_FILE = {
    "ORV106", "ORV107", "ORV114", "ORV115", "ORV118", "ORV119", "ORV209",
    "ORV401", "ORV402", "ORV403", "ORV404", "ORV406", "ORV407", "ORV408",
    "ORV501", "ORV502", "ORV503", "ORV504", "ORV505", "ORV506", "ORV507", "ORV508", "ORV509", "ORV510",
    "ORV512",
}

Keys = tuple[str, ...]


def _short(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def path_keys(rel: str, kind: str | None = None) -> Keys:
    """The keys a file has by its path alone (all a run file has); `kind` is classify(rel) if known."""
    keys = ["f:" + rel.casefold()]
    kind = kind or classify(rel)
    if kind == "run" or misplaced_run(rel):
        keys.append("r:" + (run_digest_from_path(rel) or ""))
    elif kind in ("recipe-training", "recipe-inference"):
        keys.append("i:" + rel.rsplit("/", 1)[-1].rsplit(".", 1)[0].casefold())
    return tuple(keys)


def content_keys(entry: Any) -> Keys:
    """The keys a recipe file has by what it says (nothing for anything else)."""
    if not isinstance(entry, RecipeEntry):
        return ()
    from validator.checks.duplicates import copied_claim_key, identity
    from validator.checks.integrity import raw_references

    keys = ["r:" + digest for _, digest in raw_references(entry)]
    if entry.id is not None:
        keys.append("i:" + entry.id.casefold())
    if entry.recipe is not None:
        keys += ["d:" + _short(identity(entry.recipe)), "c:" + _short(copied_claim_key(entry.recipe))]
    return tuple(dict.fromkeys(keys))


def keys_of(rel: str, entry: Any) -> Keys:
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
