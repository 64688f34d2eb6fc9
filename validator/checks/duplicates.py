"""ORV3xx: duplicates — one recipe per id, one recipe per configuration, no claim copied across GPU counts."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import TypeVar

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.models import Recipe
from validator.registry.relations import copied_claim_key, identity
from validator.registry.snapshot import Snapshot

E, W = Severity.ERROR, Severity.WARNING
K = TypeVar("K")
V = TypeVar("V")


def _groups(items: Iterable[tuple[K, V]]) -> list[list[V]]:
    """Values sharing a key, groups of two or more only, in input order (input is path-sorted)."""
    by_key: dict[K, list[V]] = defaultdict(list)
    for key, value in items:
        by_key[key].append(value)
    return [group for group in by_key.values() if len(group) > 1]


@check("ORV301", E, "duplicate recipe id", related_by="i")
def duplicate_id(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Two recipe files carry the same `id`, compared case-insensitively (`Qwen-x` and `qwen-x`
    collide on macOS and Windows checkouts, and on the boards). An id names exactly one recipe,
    wherever it is filed (another model folder, the other kind).

    Reported on every file after the first (in path order), naming the first. Give this recipe
    its own id — ids say model, GPU and layout, e.g. `qwen3-8-27b-h100-tp1-pp4-dp2` — and rename
    the file to match, or delete it if it is a copy.
    """
    entries = [(entry.id.casefold(), entry) for entry in snapshot.recipes if entry.id is not None]
    for first, *others in _groups(entries):
        for entry in others:
            yield Finding(
                entry.path,
                f"id `{entry.id}` is already used by {first.path}",
                "give this recipe its own id saying what sets it apart (GPU, count, layout, "
                "settings) and rename the file to match; delete the file if it is a copy",
                at=("id",),
            )


@check("ORV302", E, "same configuration under another id", related_by="d")
def duplicate_identity(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Two recipes describe the same configuration — kind, model (and checkpoint), quant, hardware
    (GPU and count), software with its pins, layout or serving settings, tuning, and for training
    the workload — under different ids. The boards would show one configuration twice, and its
    evidence would be split between the two.

    Reported on the later file (in path order), naming the other. Keep one recipe: move this
    one's run files into the other's `runs:` (a second measurement of the same configuration is
    how it reaches T3) and delete this file. If the two really differ, the difference belongs in
    a field (layout, serving, tuning, software), not only in the id.
    """
    keyed = [(identity(recipe), entry) for entry, recipe in snapshot.valid_recipes()]
    for first, *others in _groups(keyed):
        for entry in others:
            if entry.id == first.id:
                continue  # the same id twice is ORV301's finding
            yield Finding(
                entry.path,
                f"`{entry.id}` has the same configuration as `{first.id}` ({first.path})",
                f"merge it into {first.path}: list this recipe's runs under its `runs:` and delete "
                "this file; or record in a field what sets the two apart",
                at=("id",),
            )


def _claim_text(recipe: Recipe) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in sorted(recipe.claimed.model_dump(exclude_none=True).items()))


@check("ORV303", W, "claim copied across GPU counts", related_by="c")
def claim_copied_across_counts(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Recipes for the same model, quant (or workload), GPU and software claim exactly the same
    figures at different GPU counts — e.g. one measured 41.47 tok/s copied to the 1-, 2- and
    4-GPU entries, as in the legacy boards export. Throughput changes with the GPU count, so at
    most one of the copies was measured.

    A warning on every recipe of such a group (nothing in the files says which copy was
    measured), naming the others in the hint. The message names only the recipe itself, so a
    pull request that adds one more copy is reported on the file it adds, and the files already
    on the base branch keep the finding they had. Measure this hardware count and claim what it
    reached (with its run file), or delete the recipe.
    """
    keyed = [(copied_claim_key(recipe), (entry, recipe)) for entry, recipe in snapshot.valid_recipes()]
    for group in _groups(keyed):
        if len({recipe.hardware.count for _, recipe in group}) < 2:
            continue
        for entry, recipe in group:
            others = [(e.path, r.hardware.count) for e, r in group if r.hardware.count != recipe.hardware.count]
            shown = ", ".join(f"{path} ({count}×)" for path, count in others[:3])
            more = f" and {len(others) - 3} more" if len(others) > 3 else ""
            yield Finding(
                entry.path,
                f"claims the same figures ({_claim_text(recipe)}) on {recipe.hardware.count}× "
                f"{recipe.hardware.gpu} as recipes at other GPU counts",
                f"same figures in {shown}{more}: measure on {recipe.hardware.count}× "
                f"{recipe.hardware.gpu} and claim what that run reached (add its run file), or delete "
                "this recipe",
                at=("claimed",),
            )
